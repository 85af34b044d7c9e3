package embed

import "strings"

// slang maps texting abbreviations and informal spellings to the plain
// words the lexicon knows, so "tix" is about tickets and "bday" about a
// birthday. The list is written for this project (not derived from any
// dataset); it covers forms common in English text messages.
var slang = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(slangTable, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		m[strings.TrimSpace(k)] = strings.Fields(v)
	}
	return m
}()

const slangTable = `
tix=tickets
tkts=tickets
bday=birthday
b-day=birthday
bdays=birthdays
thx=thanks
thnx=thanks
ty=thanks
tysm=thanks
pls=please
plz=please
tmrw=tomorrow
tmr=tomorrow
tmw=tomorrow
2moro=tomorrow
2morrow=tomorrow
tonite=tonight
2nite=tonight
rn=now
asap=soon urgent
bc=because
cuz=because
coz=because
b4=before
gr8=great
l8r=later
l8=late
msg=message
txt=text
pic=picture
pics=pictures
vid=video
vids=videos
convo=conversation
appt=appointment
appts=appointments
mtg=meeting
mtgs=meetings
info=information
pkg=package
addy=address
apt=apartment
bf=boyfriend
gf=girlfriend
bff=friend
bro=brother
sis=sister
mom=mother
mum=mother
mommy=mother
dad=father
daddy=father
grandma=grandmother
granny=grandmother
nana=grandmother
grandpa=grandfather
hubby=husband
bae=partner
fam=family
bestie=friend
doc=doctor
vet=veterinarian
meds=medication
hosp=hospital
rx=prescription
bucks=dollars money
cash=money
venmo=pay money
zelle=pay money
paypal=pay money
k=thousand
mins=minutes
min=minute
hr=hour
hrs=hours
sec=second
wk=week
wks=weeks
wknd=weekend
yr=year
yrs=years
mo=month
mos=months
approx=approximately
uni=university
hw=homework
biz=business
govt=government
fb=facebook
insta=instagram
idk=unsure
idc=indifferent
imo=opinion
tbh=honestly
omg=surprised
omw=coming
otw=coming
brb=return
ttyl=later
nvm=nevermind
np=fine
jk=joking
congrats=congratulations
gz=congratulations
sry=sorry
srry=sorry
luv=love
xmas=christmas
vacay=vacation
hangry=hungry
yummy=delicious
ppl=people
peeps=people
fav=favorite
fave=favorite
prob=probably
probs=probably
def=definitely
defo=definitely
obvi=obviously
gonna=going
wanna=want
gotta=must
kinda=somewhat
sorta=somewhat
dunno=unsure
lemme=let
gimme=give
ya=you
yall=you
y'all=you
cya=goodbye
bye=goodbye
`
