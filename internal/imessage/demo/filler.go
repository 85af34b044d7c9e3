package demo

import (
	"math/rand/v2"
	"strings"
)

// dialogue is a filler conversation template. Lines start with the speaker
// ("A:", "B:", "C:"; A opens); " || " separates alternatives; {slot}
// fills from vocab; {A}/{B}/{C} are the speakers' first names.
type dialogue struct {
	roles string // space-separated roles it suits: friend family work acquaintance service
	where int    // 0 = one-to-one only, 1 = one-to-one or group, 2 = group only
	lines []string
}

var dialogues = []dialogue{
	{"friend family", 1, []string{"A: want to grab {food} {day}? || {food} {day}?? || craving {food}, you free {day}?", "B: {yes} what time? || ooh yes. when?", "A: {hour}? || maybe {hour} at {place}", "B: {ack} see you there || perfect 👌 || works for me"}},
	{"friend", 1, []string{"A: did you watch the new episode of {show} || ok {show} last night… || have you started {show} yet", "B: NO spoilers || yes!! {reaction} || not yet, is it good?", "A: {opinion} || it's so {adj} || honestly {opinion}", "B: {laugh} ok watching tonight || adding it to the list"}},
	{"friend", 0, []string{"A: how was {event}? || how'd {event} go?", "B: {adj}!! || honestly kind of {adj} || better than expected", "A: {laugh} tell me everything || wait really? || nice!! {emoji}", "B: will call you later || long story, drinks {day}?"}},
	{"friend family acquaintance", 0, []string{"A: running {mins} min late sorry!! || omw, {mins} min || leaving now, {mins} min out", "B: no worries || all good, I'm at {place} || {ack}"}},
	{"friend", 1, []string{"A: anyone up for {activity} {day}? || {activity} {day} morning?", "B: I'm in || maybe, depends on the weather", "C: can't, I have {excuse} || in!! what time", "A: {hour} at {place}? || let's say {hour}", "B: {ack}"}},
	{"friend", 0, []string{"A: {greet} how are you doing? || {greet} long time!", "B: {greet} pretty good! {busy} || hanging in there, {busy}", "A: same here {laugh} we should catch up soon || let's get {drink} soon", "B: yes!! {day}? || definitely, I'll text you"}},
	{"family", 0, []string{"A: did you call {relative} back? || {relative} asked about you", "B: not yet, will do {day} || oh shoot, I forgot", "A: {ack} she'd love to hear from you || please do ❤️"}},
	{"family", 1, []string{"A: {familynews} || guess what, {familynews}", "B: {wow} || aww that's great || {wow} how's everyone?", "A: all good, {busy} || everyone's fine. {weather} here", "B: love you all ❤️ || miss you guys"}},
	{"family", 0, []string{"A: what do you want for your birthday? || any ideas for your birthday?", "B: honestly nothing, just come visit || maybe a new {thing}?", "A: ok noted {laugh} || you're impossible to shop for"}},
	{"family", 1, []string{"A: {weather} here today || it's {weather}", "B: same here || we got {weather} too || stay warm!", "A: {ack}"}},
	{"work", 1, []string{"A: can you take a look at {workitem} when you get a chance? || quick review on {workitem}?", "B: yep, after {meeting} || on it", "A: thanks 🙏 || ty!", "B: left some comments, mostly nits || looks good, approved"}},
	{"work", 1, []string{"A: is {meeting} still happening? || are we still on for {meeting}?", "B: moved to {hour} || yes, same room || cancelled I think", "A: {ack} thanks"}},
	{"work", 0, []string{"A: heads up I'm out {day}, {excuse} || I'll be offline {day}", "B: no problem, feel better || {ack} enjoy!", "A: thanks! {workitem} is in good shape, {name} can cover"}},
	{"work", 2, []string{"A: {workitem} is live 🎉 || shipped {workitem}!", "B: nice work!! || 🚀🚀", "C: any issues so far? || congrats team", "A: dashboards look clean so far || one small bug, fixing now"}},
	{"work", 1, []string{"A: coffee? || ☕? || want to grab a coffee before {meeting}?", "B: yes please || 5 min || omw"}},
	{"friend acquaintance", 0, []string{"A: hey do you still have my {thing}? || did I leave my {thing} at your place?", "B: yes! it's here || hmm let me check || I think so, I'll look tonight", "A: phew ok, I'll grab it {day} || no rush"}},
	{"friend", 1, []string{"A: {song} by {band} is stuck in my head || listening to {band} again", "B: {laugh} classic || ugh same || their new album is so {adj}", "A: we should go see them when they tour || concert?? 👀"}},
	{"friend", 1, []string{"A: {link} {linkcomment}", "B: {laugh} || omg || this is so true || why is this me"}},
	{"friend family", 1, []string{"A: {photo}", "B: {photoreact} || {emoji}{emoji} || love this"}},
	{"friend", 0, []string{"A: can you send me the recipe for that {dish}? || how did you make the {dish}?", "B: it's basically {ingredients}, nothing fancy || I'll send it tonight", "A: amazing thank you || 🙏"}},
	{"friend", 1, []string{"A: I just finished {book} || reading {book} right now", "B: how is it? || I loved that one || is it as good as everyone says?", "A: {opinion} || so {adj}, you'd like it", "B: lending it to me? || adding to my list"}},
	{"friend family", 0, []string{"A: happy {holiday}!! {emoji} || happy {holiday} ❤️", "B: you too!! || happy {holiday}! {emoji}"}},
	{"friend", 1, []string{"A: who's watching the {team} game {day}? || {team} {day}!!", "B: obviously || at {place}? || can't, {excuse}", "A: let's go {team} || {ack}"}},
	{"friend", 0, []string{"A: can I borrow your {thing} this weekend? || do you have a {thing} I could borrow?", "B: sure! come by {day} || yes, it's in the closet", "A: you're the best"}},
	{"friend acquaintance", 0, []string{"A: thanks again for {favor}! || really appreciated {favor}", "B: anytime!! || of course ❤️ || no problem at all"}},
	{"friend", 0, []string{"A: ugh {complaint} || today: {complaint}", "B: noooo || that's the worst || sending hugs", "A: {laugh} I'll survive || need {drink}"}},
	{"friend", 1, []string{"A: {city} or {city} for the long weekend? || thinking about {city} in {month}", "B: {city}!! || never been, go || depends on flights", "A: flights are like {amount} || looking at Airbnbs now", "B: do it || send me the link"}},
	{"friend family", 0, []string{"A: did you get home ok? || home safe?", "B: yep! || just got in, thanks for tonight || yes! thanks again"}},
	{"friend", 0, []string{"A: {pet} did the funniest thing today || look at {pet} 😂", "B: {laugh} || I need a video || give {pet} a scratch from me"}},
	{"friend", 1, []string{"A: is {place} open late on {day}? || anyone know if {place} takes reservations", "B: I think until 10 || no idea, call them? || they're walk-in only", "A: ok thanks"}},
	{"acquaintance", 0, []string{"A: hi, it's {A} from {where} || hey it's {A}, we met at {where}", "B: oh hi! || hey {A}! good to hear from you", "A: wanted to send you that {thing} info I mentioned || here's the contact I promised: {name}", "B: thank you!"}},
	{"service", 0, []string{"A: Hi, just confirming your appointment {day} at {hour}. Reply Y to confirm || Reminder: your appointment is {day} at {hour}", "B: Y || Confirmed, thanks", "A: Thank you, see you then!"}},
	{"service", 0, []string{"A: Hi, this is {A}. Just a heads up: {svcnote}", "B: thanks for letting me know || got it, thanks! || ok, appreciate it"}},
	{"service", 0, []string{"B: Hi {A}, quick question about {svcq}", "A: sure, {svcans}", "B: great, thank you"}},
	{"friend", 2, []string{"A: {groupq} || ok important question: {groupq}", "B: {answer}", "C: {answer} || {laugh}", "A: {laugh} this chat || knew it"}},
	{"friend family", 2, []string{"A: who's bringing what {day}? || potluck {day}: who's bringing what?", "B: I'll do {dish}", "C: drinks! || I can bring {food}", "A: {ack} I'll make {dish}"}},
	{"friend", 1, []string{"A: {memes}", "B: {laugh}{laugh} || STOP || i'm crying"}},
	{"friend family", 0, []string{"A: can you pick me up from {place} at {hour}? || any chance of a ride to {place}?", "B: sure! || I can at {hour} || sorry can't today, {excuse}", "A: thank you!! || no worries"}},
	{"friend", 0, []string{"A: we're splitting {thing2} {amount} each, venmo me whenever || your half of {thing2} is {amount}", "B: sending now || done!", "A: got it 🙏"}},
	{"work", 0, []string{"A: the numbers in {workitem} look off, can you double check? || something is weird in {workitem}", "B: looking || oh yeah, I see it", "B: fixed, it was a timezone thing || should be good now", "A: 🙌 thanks"}},
	{"family", 0, []string{"A: don't forget {chore} || can you remind me to {chore}?", "B: I won't! || on my list", "A: love you"}},
	{"friend", 1, []string{"A: {weather} today, perfect for {activity} || it's gorgeous out", "B: jealous, I'm stuck inside || {activity} after work?", "A: {hour}? || yes!!"}},
	{"friend acquaintance", 0, []string{"A: congrats on {milestone}!! {emoji} || heard about {milestone}, congrats!!", "B: thank you!! still can't believe it || thanks so much ❤️", "A: so happy for you || we need to celebrate"}},
	{"friend", 0, []string{"A: what was the name of that {placekind} you told me about? || remind me of that {placekind} you liked?", "B: {place}! || it's {place} on {street}", "A: that's the one, thanks"}},
	{"family", 0, []string{"A: how's the new {thing} working? || did the {thing} arrive?", "B: it's great, thank you || yes! works perfectly", "A: good 😊"}},
	{"work", 2, []string{"A: standup in 5 || reminder: {meeting} at {hour}", "B: 👍", "C: running a few min late"}},
	{"friend", 1, []string{"A: good morning ☀️ || morning!!", "B: morning! {busy} || gm ☕"}},
	{"friend family", 0, []string{"A: {goodnight} || night!", "B: {goodnight} || sleep well 😴"}},
}

// automatedTexts are filler messages from short codes, by person key.
var automatedTexts = map[string][]string{
	"acme": {
		"Your Acme verification code is {code}. Don't share it with anyone.",
		"Acme: {code} is your login code. It expires in 10 minutes.",
		"Use {code} to verify your Acme account. If you didn't request this, ignore this message.",
	},
	"bank": {
		"Northbank: A purchase of {amount} at {merchant} was made on your card ending 4417.",
		"Northbank: Your statement is ready. Balance due {amount} by {month} 21.",
		"Northbank alert: a deposit of {amount} posted to checking ending 0093.",
		"Northbank: Your one-time passcode is {code}. Never share it, we will never call to ask for it.",
	},
	"parcel": {
		"ParcelPoint: Your package {tracking} is out for delivery today.",
		"ParcelPoint: Delivered! Your package {tracking} was left at the front door.",
		"ParcelPoint: Your package {tracking} is delayed and will arrive tomorrow.",
	},
	"freshbowl": {
		"FreshBowl: Your order is ready for pickup! 🥗",
		"FreshBowl: Buy one bowl, get one 50% off today only. Reply STOP to opt out",
	},
	"pharmacy": {
		"CarePlus Pharmacy: Your prescription is ready for pickup at the {neighborhood} store.",
		"CarePlus Pharmacy: Time to refill? Reply REFILL to request your refill.",
	},
}

var vocab = map[string][]string{
	"food":         strings.Split("tacos|ramen|pho|sushi|dumplings|pizza|burgers|dim sum|thai food|curry|bagels|brunch|pancakes|falafel|poke|burritos|banh mi|bbq|noodles|oysters|tapas|udon|korean bbq|shawarma|empanadas|gelato|a sandwich|soup dumplings|hot pot|fried chicken|mezze|paella|ceviche|arepas|biryani", "|"),
	"dish":         strings.Split("lasagna|chili|banana bread|shakshuka|mac and cheese|pesto pasta|lemon bars|guac|cornbread|coleslaw|tiramisu|potato salad|focaccia|stuffed peppers|dal|a big salad|brownies|enchiladas|risotto|apple crumble", "|"),
	"drink":        strings.Split("drinks|a beer|coffee|wine|margaritas|boba|a cocktail|tea|a smoothie", "|"),
	"place":        strings.Split("Tartine|the Ferry Building|Dolores Park|Blue Bottle|the climbing gym|Zeitgeist|Smitten|Golden Gate Park|the farmers market|Rainbow Grocery|Ocean Beach|Bi-Rite|the Castro theatre|Lake Merritt|the Mission|Trader Joe's|the library|Crissy Field|the pier|Sightglass|Nopa|the night market|the old spot|the usual place|Hayes Valley|North Beach|the station|the mall", "|"),
	"placekind":    strings.Split("bakery|dumpling place|bar|coffee shop|bookstore|taco truck|hike|brunch spot|thai place|vintage store", "|"),
	"street":       strings.Split("Valencia|24th St|Divisadero|Irving|Clement|Polk|Haight|Fillmore|Mission St|Telegraph", "|"),
	"neighborhood": strings.Split("Mission|Sunset|Richmond|Noe Valley|SoMa|Oakland|Berkeley|Castro", "|"),
	"day":          strings.Split("tonight|tomorrow|today|this weekend|Saturday|Sunday|Friday|Monday|Tuesday|Wednesday|Thursday|next week|after work|this afternoon", "|"),
	"hour":         strings.Split("7pm|7:30|8|6:30|noon|11am|10am|9:30|1pm|5:30|8:30|6", "|"),
	"mins":         strings.Split("5|10|15|20|5-10|10ish", "|"),
	"activity":     strings.Split("climbing|a run|yoga|a hike|tennis|bouldering|a bike ride|swimming|pickleball|soccer|a long walk|pilates|surfing|board games|trivia night|karaoke", "|"),
	"show":         strings.Split("The Long Shore|Night Shift|Copper Valley|Small Hours|Harbor Lights|The Understudy|Blue Meridian|Paper Kings|Wildwood|The Quiet Year|Lowlands|Second Act|Northbound|Glasshouse|Salt & Pine", "|"),
	"band":         strings.Split("The Paper Lanterns|Velvet Static|Lowercase Saints|June Harbor|Moth & Mirror|Neon Orchard|The Slow Tides|Kite Theory|Pale Anthem|Driftwood Radio", "|"),
	"song":         strings.Split("Golden Hour|Static Love|Midnight Ferry|Paper Moon|Slow Burn|Northern Lights|Honey & Rust|Satellite Heart", "|"),
	"book":         strings.Split("The Salt Line|A Year of Small Things|Under the Linden|The Cartographer's Daughter|Quiet Machines|The Last Orchard|Winter Cities|Notes from the Valley|Glass Rivers|The Lighthouse Keeper", "|"),
	"thing":        strings.Split("charger|umbrella|jacket|headphones|water bottle|sunglasses|book|scarf|hoodie|phone stand|tent|camping stove|drill|ladder|blender|kindle|bike pump|yoga mat|cooler|hair dryer|tupperware|speaker", "|"),
	"thing2":       strings.Split("dinner|the cabin|the groceries|the Uber|gas|the gift|the tickets|the rental car|the pizza|the cleaning supplies", "|"),
	"city":         strings.Split("Portland|Seattle|LA|San Diego|Tahoe|Mendocino|Big Sur|Austin|New York|Chicago|Vancouver|Mexico City|Denver|Joshua Tree|Santa Fe|Montreal|Boston|Sonoma|Carmel|Yosemite", "|"),
	"month":        strings.Split("January|February|March|April|May|June|July|August|September|October|November|December", "|"),
	"amount":       strings.Split("$18|$23.50|$35|$42|$12|$60|$85|$120|$27|$9.75|$64.20|$150|$210|$31", "|"),
	"adj":          strings.Split("good|amazing|weird|chaotic|fun|intense|wholesome|hilarious|cozy|exhausting|perfect|underrated|mid|wild|beautiful|so cute|unhinged|relaxing", "|"),
	"opinion":      strings.Split("the ending wrecked me|it started slow but got so good|kind of overrated tbh|I couldn't put it down|the second half is better|best thing I've watched all year|the soundtrack is incredible|a little long but worth it", "|"),
	"reaction":     strings.Split("I screamed|I'm obsessed|that twist!!|I need to talk about it|I'm not ok", "|"),
	"event":        strings.Split("the interview|the date|your first day|the party|the move|the recital|the marathon|the presentation|the wedding|the trip|the game|the audition|your exam", "|"),
	"excuse":       strings.Split("a dentist thing|work stuff|a family dinner|a deadline|a cold|plans with my sister|a flight|a work trip|errands all day|a doctor's appointment", "|"),
	"busy":         strings.Split("work has been crazy|just busy with the usual|finally getting some sleep|been traveling a lot|trying to stay on top of things|the new job is keeping me busy", "|"),
	"greet":        strings.Split("hey!|hi!|heyyy|hey you|hiii|yo|hello hello", "|"),
	"yes":          strings.Split("yes!!|obviously|100%|down|always|yess|sure", "|"),
	"ack":          strings.Split("ok!|sounds good|perfect|👍|deal|great|cool cool|🙌|ok sounds good", "|"),
	"laugh":        strings.Split("lol|haha|😂|hahaha|lmao|😭|💀", "|"),
	"wow":          strings.Split("wow!|no way!|omg|that's amazing|yay!!", "|"),
	"emoji":        strings.Split("😂|❤️|🎉|🙏|😍|🔥|😅|🥲|✨|👀|🙌|😊|🤯|💯|🥳|☀️", "|"),
	"relative":     strings.Split("Grandma|Aunt Carol|Uncle Jim|your cousin|Grandpa", "|"),
	"familynews":   strings.Split("your cousin got engaged|the dog learned a new trick|we finally painted the kitchen|Grandma's doing better|Dad started pickleball|the tomatoes are finally ripe|we booked the summer house", "|"),
	"weather":      strings.Split("pouring rain|super foggy|sunny and warm|freezing|so windy|snowing|perfect weather|really humid", "|"),
	"workitem":     strings.Split("the API migration|the onboarding doc|the Q3 metrics|the pricing page|the release notes|the design review|the billing fix|the dashboard|the load test|the hiring plan|the roadmap draft|the incident report", "|"),
	"meeting":      strings.Split("standup|the 1:1|the planning meeting|the all-hands|the design review|the retro|the client call|sprint planning", "|"),
	"name":         strings.Split("Rachel|Chris|Jamie|Alicia|Pete|Danielle|Marco|Tasha|Eli|Sophie|Raj|Hiro|Bea|Gus", "|"),
	"pet":          strings.Split("Biscuit|Mochi|Pepper|the cat|the dog|Luna|Waffles", "|"),
	"holiday":      strings.Split("Thanksgiving|new year|Fourth of July|Halloween|Mother's Day|Father's Day|birthday", "|"),
	"team":         strings.Split("Warriors|Giants|Niners|Valkyries|Sharks", "|"),
	"favor":        strings.Split("dinner last night|helping me move|the ride|watching the dog|the book rec|lending me the tent|the birthday card", "|"),
	"complaint":    strings.Split("my laptop died|missed the bus|the wifi is down again|spilled coffee on my shirt|three back-to-back meetings|the landlord is ignoring me|my flight got delayed|locked myself out", "|"),
	"milestone":    strings.Split("the new job|the promotion|the engagement|finishing the marathon|the new apartment|graduating|the baby", "|"),
	"where":        strings.Split("Nina's party|the climbing gym|the conference|yoga|the wedding|book club", "|"),
	"groupq":       strings.Split("best pizza in the city?|who took my tupperware|is it a jacket day|what are we doing for NYE|pineapple on pizza yes or no|who's hosting game night", "|"),
	"answer":       strings.Split("definitely not me|Tony's, no contest|yes obviously|it's always a jacket day|I can host!|no comment|absolutely not", "|"),
	"memes":        strings.Split("me at 3pm: one more coffee won't hurt|when the group chat goes quiet after you send a selfie|this is the most accurate thing I've seen all week|me pretending I know what a 401k is", "|"),
	"photoreact":   strings.Split("stunning|where is this??|so jealous|look at that view|frame it", "|"),
	"ingredients":  strings.Split("garlic, tomatoes and way too much butter|chickpeas, lemon and tahini|whatever was in the fridge|a lot of cheese", "|"),
	"chore":        strings.Split("take the trash out|water the plants|call the insurance people|renew your license|book the flights|send the birthday card", "|"),
	"goodnight":    strings.Split("night night|goodnight!|sleep well|nighty night 🌙", "|"),
	"svcnote":      strings.Split("the water will be off Tuesday 9 to noon for maintenance|the gardeners come Thursday morning|your car is ready for pickup|the part came in, we can do the repair Friday|it's time for the annual checkup|rent is due on the 1st, thanks!|we're closed Monday for the holiday", "|"),
	"svcq":         strings.Split("the invoice|parking|the estimate|the appointment|the deposit|the new keys", "|"),
	"svcans":       strings.Split("I'll email it over today|no problem at all|let me check and get back to you|yes that's fine", "|"),
	"code":         {"000000"},
	"merchant":     strings.Split("BLUE BOTTLE COFFEE|SAFEWAY #1234|SHELL OIL|AMAZON MKTPLACE|TRADER JOE'S|UBER TRIP|CVS PHARMACY|NOPA RESTAURANT", "|"),
	"tracking":     {"1Z000"},
}

// links are URLs filler messages share, with a comment.
var links = []string{
	"https://www.youtube.com/watch?v=dQw3w9WgXcQ",
	"https://www.nytimes.com/2026/03/12/dining/best-dumplings.html",
	"https://maps.apple.com/?q=Tartine+Bakery",
	"https://open.spotify.com/track/4uLU6hMCjMI75M1A2tKUQC",
	"https://www.instagram.com/p/C3xYz7lLm2Q/",
	"https://www.airbnb.com/rooms/12345678",
	"https://www.reddit.com/r/bayarea/comments/1abcde/",
	"https://en.wikipedia.org/wiki/Sourdough",
}

func init() {
	vocab["linkcomment"] = strings.Split("this is so us|ok this is hilarious|thoughts??|look!!|we have to go here|saw this and thought of you|for the trip", "|")
}

// captions go with photo attachments.
var captions = strings.Split("look at this view|sunset from the roof|the dog approves|dinner tonight|found this at the market|we made it!|new haircut who dis|guess where I am|the cake!!|", "|")

// pick returns one alternative of a " || "-separated template line.
func pick(r *rand.Rand, s string) string {
	alts := strings.Split(s, " || ")
	return alts[r.IntN(len(alts))]
}

// fill replaces {slot}s. names maps speaker letters to first names.
func fill(r *rand.Rand, s string, names map[string]string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		slot := s[i+1 : i+j]
		switch slot {
		case "A", "B", "C":
			b.WriteString(names[slot])
		case "code":
			b.WriteString(digits(r, 6))
		case "tracking":
			b.WriteString("1Z-" + digits(r, 5))
		default:
			if words, ok := vocab[slot]; ok {
				b.WriteString(words[r.IntN(len(words))])
			} else {
				b.WriteString(slot)
			}
		}
		s = s[i+j+1:]
	}
	return b.String()
}

func digits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// closers end a recent filler session on the owner's side, so that filler
// never leaves a conversation waiting for a reply near "now": only the
// storylines do, and the triage evaluation knows exactly which.
var closers = strings.Split("👍|sounds good!|haha ok|❤️|ok!|perfect, thanks|talk soon|🙌", "|")
