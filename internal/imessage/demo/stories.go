package demo

import (
	"crypto/sha1"
	"fmt"
	"strings"
	"time"
)

// Story is a scripted storyline of the demo data: a thread placed in the
// last weeks before "now" whose facts are known, so evaluations can ask
// for them ("the money Sam owes me") and check the answer by message guid.
// The guids are fixed: they depend on neither the seed nor the message
// count. Texts and times depend on "now" (a dentist appointment is "next
// Tuesday").
type Story struct {
	ID    string
	Title string
	// Conversation is the chat guid (model.Conversation.ID).
	Conversation string
	// With names the other participants.
	With     []string
	Messages []StoryMessage
	Facts    []Fact
	// NeedsReply is true when the thread ends with something the owner has
	// not answered; Awaiting lists those messages' guids.
	NeedsReply bool
	Awaiting   []string
}

// StoryMessage is one message of a story as written to chat.db.
type StoryMessage struct {
	GUID string
	// From is "me" or the sender's name.
	From string
	// Text is the final body (after edits); empty for reactions and events.
	Text string
	Time time.Time
	// Kind is "text", "reaction", "group_event", "attachment".
	Kind string
}

// Fact is something a person could ask about, with the messages that prove
// it and a few ways of asking (paraphrases, not keyword matches).
type Fact struct {
	Text     string
	Evidence []string
	Queries  []string
}

// demoZone is the owner's time zone (fixed, so output never depends on the
// machine's tz database).
var demoZone = time.FixedZone("PST", -8*3600)

// lineSpec scripts one message of a story.
type lineSpec struct {
	key   string // unique within the story; the guid derives from it
	from  string // "me" or a person key
	day   int    // days before now, at clock (local time)
	clock string // "HH:MM"
	ago   time.Duration
	text  string

	edits     []string // earlier versions, oldest first
	editAfter time.Duration
	unsent    bool
	failed    bool
	unread    bool
	effect    string
	tapback   int    // associated_message_type
	emoji     string // custom emoji tapback
	target    string // line key of the reaction's target
	replyTo   string // line key
	photo     string // attachment file name; the text becomes U+FFFC (+ caption)
	cloud     bool   // the photo's file was never downloaded (kept in iCloud)
	audio     bool   // a voice note: an audio attachment; the text is its transcript ("" for none)
	sticker   bool   // a sticker attachment on a 2007/1000 reaction
	runs      []runSpec
	event     *eventSpec
	alsoIn    string // second thread (a message in two chats)
	deleted   bool   // in Recently Deleted
}

type runSpec struct {
	sub   string // substring of text the run covers
	kind  string // "otc", "link", "mention", "money", "phone", "address", "calendar"
	value string // URL or handle
}

type eventSpec struct {
	itemType, action int
	other            string // person key
	title            string
}

type storySpec struct {
	id, title string
	thread    string // "p:<person>", "p:<person>#sms", "g:<group>"
	lines     []lineSpec
	facts     []factSpec
	awaiting  []string
}

type factSpec struct {
	text     string
	evidence []string
	queries  []string
}

// nextWeekday returns the first date after now (by at least one day) that
// falls on wd, in the demo zone.
func nextWeekday(now time.Time, wd time.Weekday) time.Time {
	d := now.In(demoZone).AddDate(0, 0, 1)
	for d.Weekday() != wd {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// storySpecs scripts the storylines relative to now.
func storySpecs(now time.Time) []storySpec {
	thursday := nextWeekday(now, time.Thursday)
	friday := nextWeekday(now, time.Friday)
	dentist := now.In(demoZone).AddDate(0, 0, 8)
	dentistDay := dentist.Format("Mon, Jan 2")
	dentistLong := dentist.Format("Monday, January 2")
	return []storySpec{
		{
			id: "sam-owes-40", title: "Sam owed me $40 for concert tickets, then paid it back", thread: "p:sam",
			lines: []lineSpec{
				{key: "show", from: "me", day: 16, clock: "23:05", text: "that show was unreal 🤯 thanks for driving"},
				{key: "encore", from: "sam", day: 16, clock: "23:09", text: "right?? that encore!! 🔥"},
				{key: "owe", from: "me", day: 15, clock: "09:12", text: "btw you still owe me $40 for the tix, no rush",
					runs: []runSpec{{sub: "$40", kind: "money"}}},
				{key: "sorry", from: "sam", day: 15, clock: "09:40", text: "omg yes sorry, totally forgot. will send tonight"},
				{key: "remind", from: "me", day: 13, clock: "18:22", text: "hey just a reminder about the $40 when you get a sec 🙏",
					runs: []runSpec{{sub: "$40", kind: "money"}}},
				{key: "paid", from: "sam", day: 13, clock: "21:03", text: "sent! venmo'd you $40 for the concert tickets, we're square 🙌",
					runs: []runSpec{{sub: "$40", kind: "money"}}},
				{key: "love", from: "me", day: 13, clock: "21:05", tapback: 2000, target: "paid"},
				{key: "thanks", from: "me", day: 13, clock: "21:06", text: "got it, thank you!!"},
			},
			facts: []factSpec{
				{text: "Sam owed me $40 for the concert tickets", evidence: []string{"owe", "remind"},
					queries: []string{"the money Sam owes me", "how much did Sam owe me for the tickets", "who owes me money"}},
				{text: "Sam paid the $40 back on Venmo; we're square", evidence: []string{"paid", "thanks"},
					queries: []string{"did Sam pay me back", "did I get the concert money", "Sam venmo"}},
			},
		},
		{
			id: "failed-send", title: "A text to Sam that failed to send, then went through", thread: "p:sam",
			lines: []lineSpec{
				{key: "late-failed", from: "me", day: 4, clock: "18:50", text: "running 10 min late", failed: true},
				{key: "late", from: "me", day: 4, clock: "18:51", text: "running 10 min late, sorry!"},
				{key: "table", from: "sam", day: 4, clock: "18:53", text: "no worries, grabbing us a table by the window"},
				{key: "omw", from: "me", day: 4, clock: "18:54", text: "👍 see you in a sec"},
			},
			facts: []factSpec{
				{text: "A message to Sam ('running 10 min late') failed to send and was sent again a minute later", evidence: []string{"late-failed", "late"},
					queries: []string{"which of my texts didn't go through", "failed message to Sam"}},
			},
		},
		{
			id: "thursday-dinner", title: "Dinner with Jordan on Thursday", thread: "p:jordan",
			lines: []lineSpec{
				{key: "ask", from: "jordan", day: 3, clock: "12:14", text: "dinner this week? that new ramen place on Valencia finally opened"},
				{key: "thu", from: "me", day: 3, clock: "12:30", text: "yesss. thursday?"},
				{key: "time", from: "jordan", day: 3, clock: "12:31", text: "thursday works! 7:30?"},
				{key: "ok", from: "me", day: 3, clock: "12:33", text: "perfect"},
				{key: "booked", from: "jordan", day: 2, clock: "10:02",
					text:  "booked Marufuku for Thursday at 8:00, table for 2 (7:30 was full)",
					edits: []string{"booked Marufuku for Thursday at 7:30, table for 2"}, editAfter: 3 * time.Minute},
				{key: "like", from: "me", day: 2, clock: "10:10", tapback: 2001, target: "booked"},
				{key: "book", from: "jordan", day: 1, clock: "17:45", text: "can you bring the book you borrowed? the Murakami one"},
				{key: "bring", from: "me", day: 1, clock: "17:50", text: "yes! will bring it Thursday", replyTo: "book"},
			},
			facts: []factSpec{
				{text: fmt.Sprintf("Dinner with Jordan on Thursday %s at 8:00 pm at Marufuku (ramen, Valencia St); first planned for 7:30", thursday.Format("Jan 2")),
					evidence: []string{"booked", "time", "ask"},
					queries:  []string{"plans for Thursday", "what time is dinner with Jordan", "where are we eating this week", "the ramen reservation"}},
				{text: "Jordan asked me to bring back the Murakami book on Thursday", evidence: []string{"book", "bring"},
					queries: []string{"what do I need to bring Jordan", "the book I borrowed"}},
			},
		},
		{
			id: "landlord-sink", title: "Leaking kitchen sink, then the lease renewal", thread: "p:marcus",
			lines: []lineSpec{
				{key: "leak", from: "me", day: 6, clock: "08:12", text: "Hi Marcus, the kitchen sink is leaking under the cabinet again. There's water on the floor this morning."},
				{key: "photo", from: "me", day: 6, clock: "08:13", photo: "IMG_4512.jpeg", text: ""},
				{key: "plumber", from: "marcus", day: 6, clock: "09:30", text: "Sorry to hear that. I'll get a plumber out. Does Wednesday morning work for you?"},
				{key: "wed", from: "me", day: 6, clock: "09:41", text: "Wednesday works, I'm home after 9"},
				{key: "confirmed", from: "marcus", day: 5, clock: "16:20", text: "Plumber is Dave from Bay Plumbing, confirmed for Wednesday 9–11am. He'll text before he comes.",
					runs: []runSpec{{sub: "Wednesday 9–11am", kind: "calendar"}}},
				{key: "great", from: "me", day: 5, clock: "16:22", text: "great, thanks!"},
				{key: "fixed", from: "marcus", day: 2, clock: "11:05", text: "Did Dave fix the sink? He said the trap was cracked and he replaced it."},
				{key: "allfixed", from: "me", day: 2, clock: "11:30", text: "Yes, all fixed, no more leak. Thanks for sorting it out so fast"},
				{key: "lease", from: "marcus", ago: 2 * time.Hour, unread: true,
					text: "One more thing: your lease renewal is coming up in January. Can we find 15 minutes this week to go over it?"},
			},
			facts: []factSpec{
				{text: "The kitchen sink leak was fixed by Dave from Bay Plumbing, who replaced a cracked trap", evidence: []string{"confirmed", "fixed", "allfixed"},
					queries: []string{"who fixed the sink", "when did the plumber come", "the leak under the kitchen cabinet"}},
				{text: "The landlord, Marcus, wants 15 minutes this week to go over the January lease renewal", evidence: []string{"lease"},
					queries: []string{"what does my landlord want", "lease renewal", "is the landlord waiting on me"}},
			},
			awaiting: []string{"lease"},
		},
		{
			id: "mom-questions", title: "Mom's questions about Christmas and pie", thread: "p:mom",
			lines: []lineSpec{
				{key: "sunday", from: "mom", day: 20, clock: "10:00", text: "Happy Sunday sweetie ☀️", alsoIn: "p:mom#sms"},
				{key: "package", from: "mom", day: 9, clock: "19:00", text: "Did you get the package I sent? It should have arrived Tuesday"},
				{key: "scarf", from: "me", day: 9, clock: "21:15", text: "Yes! thank you, the scarf is so soft ❤️"},
				{key: "christmas", from: "mom", day: 1, clock: "08:30", text: "Are you coming home for Christmas? Dad wants to know before he books the cabin"},
				{key: "pie", from: "mom", day: 1, clock: "08:32", text: "And should I make the pecan pie or the pumpkin one?"},
				{key: "call", from: "mom", ago: 5 * time.Hour, unread: true, text: "Call me when you can ❤️"},
			},
			facts: []factSpec{
				{text: "Mom asked whether I'm coming home for Christmas; Dad wants to know before booking the cabin", evidence: []string{"christmas"},
					queries: []string{"what did mom ask me", "is mom waiting on an answer about the holidays", "the cabin"}},
				{text: "Mom asked whether to make pecan or pumpkin pie", evidence: []string{"pie"},
					queries: []string{"which pie", "mom's dessert question"}},
				{text: "Mom's package (a scarf) arrived", evidence: []string{"package", "scarf"},
					queries: []string{"did the package from mom arrive", "the scarf"}},
			},
			awaiting: []string{"christmas", "pie", "call"},
		},
		{
			id: "dentist", title: "Dentist appointment reminder, confirmed", thread: "p:dentist",
			lines: []lineSpec{
				{key: "reminder", from: "dentist", day: 7, clock: "10:00",
					text: fmt.Sprintf("Bright Smile Dental: Hi Alex, this is a reminder of your cleaning with Dr. Patel on %s at 10:30 AM. Reply C to confirm or R to reschedule.", dentistDay),
					runs: []runSpec{{sub: dentistDay + " at 10:30 AM", kind: "calendar"}}},
				{key: "c", from: "me", day: 7, clock: "10:03", text: "C"},
				{key: "confirmed", from: "dentist", day: 7, clock: "10:03",
					text: fmt.Sprintf("Thank you! Your appointment on %s at 10:30 AM is confirmed. Please arrive 10 minutes early.", dentistDay)},
			},
			facts: []factSpec{
				{text: fmt.Sprintf("Dental cleaning with Dr. Patel at Bright Smile Dental on %s at 10:30 AM, confirmed", dentistLong),
					evidence: []string{"reminder", "confirmed"},
					queries:  []string{"when is my dentist appointment", "what time is the cleaning", "teeth appointment"}},
			},
		},
		{
			id: "work-deadline", title: "Q4 board deck deadline and Priya's budget question", thread: "p:priya",
			lines: []lineSpec{
				{key: "deck", from: "priya", day: 4, clock: "09:15",
					text: fmt.Sprintf("Morning! Heads up: the Q4 board deck is due Friday EOD (%s). Can you send me the revenue slides by Thursday noon?", friday.Format("Jan 2"))},
				{key: "onit", from: "me", day: 4, clock: "09:20", text: "On it, you'll have them Thursday by 11"},
				{key: "henderson", from: "priya", day: 4, clock: "09:21", text: "🙏 also the Henderson renewal got pushed to Dec 15, so no rush on that one"},
				{key: "budget", from: "priya", ago: 90 * time.Minute, unread: true,
					text: "Did you get a chance to look at the budget numbers I sent? I need them before my 3pm"},
			},
			facts: []factSpec{
				{text: fmt.Sprintf("The Q4 board deck is due Friday EOD (%s); I promised Priya the revenue slides by Thursday 11am", friday.Format("Jan 2")),
					evidence: []string{"deck", "onit"},
					queries:  []string{"work deadline this week", "when are the revenue slides due", "what did I promise Priya"}},
				{text: "The Henderson contract renewal was pushed to Dec 15", evidence: []string{"henderson"},
					queries: []string{"what happened with Henderson", "renewal date"}},
				{text: "Priya needs the budget numbers before her 3pm meeting today", evidence: []string{"budget"},
					queries: []string{"who is waiting on me at work", "budget numbers"}},
			},
			awaiting: []string{"budget"},
		},
		{
			id: "lisbon-trip", title: "Planning the Lisbon trip with friends", thread: "g:lisbon",
			lines: []lineSpec{
				{key: "rename", from: "maya", day: 11, clock: "19:00", event: &eventSpec{itemType: 2, title: "Lisbon trip 🇵🇹"}},
				{key: "who", from: "maya", day: 11, clock: "19:01", text: "ok planning thread!! Lisbon in March, who's in?"},
				{key: "in", from: "jordan", day: 11, clock: "19:03", text: "IN"},
				{key: "obv", from: "sam", day: 11, clock: "19:04", text: "obviously"},
				{key: "addlea", from: "me", day: 11, clock: "19:10", text: "yes!! adding Léa, she knows the city"},
				{key: "added", from: "me", day: 11, clock: "19:11", event: &eventSpec{itemType: 1, action: 0, other: "lea"}},
				{key: "cascais", from: "lea", day: 11, clock: "19:20", text: "Bonjour tout le monde 👋 I can host one night at my parents' place in Cascais!"},
				{key: "flights", from: "maya", day: 10, clock: "12:00", text: "flights are $612 round trip on TAP if we book by Sunday",
					runs: []runSpec{{sub: "$612", kind: "money"}}},
				{key: "dates", from: "sam", day: 10, clock: "12:05", text: "dates: March 14–19?"},
				{key: "works", from: "jordan", day: 10, clock: "12:07", text: "works for me", replyTo: "dates"},
				{key: "airbnb", from: "me", day: 10, clock: "12:30", text: "Airbnb in Alfama, 4 nights, $720 total so $180 each: https://www.airbnb.com/rooms/48213377",
					runs: []runSpec{{sub: "$720", kind: "money"}, {sub: "https://www.airbnb.com/rooms/48213377", kind: "link", value: "https://www.airbnb.com/rooms/48213377"}}},
				{key: "emph", from: "lea", day: 10, clock: "12:31", tapback: 2004, target: "airbnb"},
				{key: "askbook", from: "maya", day: 10, clock: "12:40", text: "Sam can you book the flights since you have the TAP miles?",
					runs: []runSpec{{sub: "Sam", kind: "mention", value: "sam"}}},
				{key: "bookedflights", from: "sam", day: 9, clock: "09:00", text: "booked! confirmation code TPX4QZ 🎉", effect: "com.apple.messages.effect.CKConfettiEffect"},
				{key: "flag", from: "jordan", day: 9, clock: "09:02", tapback: 2006, emoji: "🇵🇹", target: "bookedflights"},
				{key: "oops", from: "me", day: 9, clock: "09:05", text: "wait wrong chat", unsent: true},
				{key: "sticker", from: "jordan", day: 8, clock: "20:00", tapback: 2007, target: "bookedflights", sticker: true},
				{key: "icon", from: "maya", day: 8, clock: "20:10", event: &eventSpec{itemType: 3, action: 1}},
				{key: "sintra", from: "lea", day: 1, clock: "19:30", text: "Who wants to do the Sintra day trip on the 16th? I need numbers for the train tickets"},
			},
			facts: []factSpec{
				{text: "Lisbon trip March 14–19 with Sam, Jordan, Maya and Léa", evidence: []string{"who", "dates", "works"},
					queries: []string{"when is the Portugal trip", "who is coming to Lisbon", "trip dates in March"}},
				{text: "Flights are $612 round trip on TAP; Sam booked them (confirmation TPX4QZ)", evidence: []string{"flights", "askbook", "bookedflights"},
					queries: []string{"how much are the flights to Lisbon", "flight confirmation code", "who booked the flights"}},
				{text: "Airbnb in Alfama, 4 nights, $720 total, $180 each", evidence: []string{"airbnb"},
					queries: []string{"where are we staying in Lisbon", "how much do I owe for the apartment", "the Airbnb link"}},
				{text: "Léa offered a night at her parents' place in Cascais", evidence: []string{"cascais"},
					queries: []string{"who offered to host us", "Cascais"}},
				{text: "Léa asks who wants the Sintra day trip on the 16th (train tickets)", evidence: []string{"sintra"},
					queries: []string{"Sintra", "what is Léa asking", "train tickets for the day trip"}},
			},
			awaiting: []string{"sintra"},
		},
		{
			id: "two-factor", title: "A one-time code from Acme", thread: "p:acme",
			lines: []lineSpec{
				{key: "code", from: "acme", ago: 40 * time.Minute, unread: true, text: "Your Acme verification code is 482913. Don't share it with anyone.",
					runs: []runSpec{{sub: "482913", kind: "otc"}}},
			},
			facts: []factSpec{{text: "Acme sent a verification code (a one-time code that must be redacted)", evidence: []string{"code"},
				queries: []string{"my latest verification code"}}},
		},
		{
			id: "delivery", title: "Package out for delivery, then delivered", thread: "p:parcel",
			lines: []lineSpec{
				{key: "out", from: "parcel", day: 1, clock: "09:12", text: "ParcelPoint: Your package 1Z-48213 is out for delivery today between 2pm and 6pm. Track: https://parcelpoint.example/t/1Z48213",
					runs: []runSpec{{sub: "https://parcelpoint.example/t/1Z48213", kind: "link", value: "https://parcelpoint.example/t/1Z48213"}}},
				{key: "delivered", from: "parcel", day: 1, clock: "17:40", text: "ParcelPoint: Delivered! Your package 1Z-48213 was left at the front door."},
			},
			facts: []factSpec{{text: "Package 1Z-48213 was delivered yesterday and left at the front door", evidence: []string{"out", "delivered"},
				queries: []string{"did my package arrive", "where was the parcel left"}}},
		},
		{
			id: "marketing", title: "A marketing text", thread: "p:freshbowl",
			lines: []lineSpec{
				{key: "promo", from: "freshbowl", day: 2, clock: "11:00", text: "FreshBowl: 30% off all bowls this weekend with code FRESH30 🥗 Reply STOP to opt out"},
			},
		},
		{
			id: "emma-birthday", title: "Emma's birthday", thread: "p:emma",
			lines: []lineSpec{
				{key: "hbd", from: "me", day: 21, clock: "00:01", text: "Happy birthday!!! 🎂🎉 can't believe you're 30", effect: "com.apple.messages.effect.CKHappyBirthdayEffect"},
				{key: "ty", from: "emma", day: 21, clock: "08:15", text: "thank youuu ❤️ brunch on Sunday?"},
				{key: "yes", from: "me", day: 21, clock: "08:20", text: "yes! I'll book somewhere"},
				{key: "vent", from: "me", day: 3, clock: "22:40", text: "ugh the family chat is driving me nuts", deleted: true},
			},
			facts: []factSpec{{text: "Emma turned 30; I texted her happy birthday at midnight and we planned brunch on Sunday", evidence: []string{"hbd", "ty"},
				queries: []string{"when is Emma's birthday", "how old is my sister"}}},
		},
		{
			// Voice notes (docs/tools.md): one Messages transcribed, one it
			// did not; the transcribed one is unread.
			id: "mom-voice", title: "Voice notes from Mom about Sunday lunch", thread: "p:mom",
			lines: []lineSpec{
				{key: "voice2", from: "mom", day: 6, clock: "11:50", audio: true},
				{key: "cant", from: "me", day: 6, clock: "12:00", text: "can't listen right now, in a meeting"},
				{key: "voice", from: "mom", day: 6, clock: "12:15", audio: true, unread: true,
					text: "Hi sweetie, Aunt Carol is coming on Sunday so bring the lemon tart please"},
			},
			facts: []factSpec{{text: "Mom's voice note: Aunt Carol is coming on Sunday and I should bring the lemon tart", evidence: []string{"voice"},
				queries: []string{"what should I bring on Sunday"}}},
		},
		{
			// Photos get_attachment shows (docs/tools.md): an iPhone HEIC, a
			// portrait JPEG stored sideways with EXIF orientation 6 and a GPS
			// position, and an older photo whose file is still in iCloud.
			id: "emma-hike", title: "Emma's photos from her hike", thread: "p:emma",
			lines: []lineSpec{
				{key: "dipsea", from: "emma", day: 19, clock: "18:30", photo: "IMG_4870.jpeg", cloud: true, text: "the view from the Dipsea trail"},
				{key: "summit", from: "emma", day: 9, clock: "16:05", photo: "IMG_5120.HEIC", text: "made it to the top of Mount Tam!"},
				{key: "portrait", from: "emma", day: 9, clock: "16:07", photo: "IMG_5133.JPG"},
				{key: "wow", from: "me", day: 9, clock: "16:30", text: "wow, what a view 😍"},
			},
		},
		{
			id: "lukas-visit", title: "Lukas visiting San Francisco", thread: "p:lukas",
			lines: []lineSpec{
				{key: "visit", from: "lukas", day: 5, clock: "03:10", text: "Hey! I'll be in San Francisco for a conference in January, are you around for a coffee? 🇩🇪☕"},
				{key: "yes", from: "me", day: 5, clock: "08:02", text: "Yes!! would love that, send me your dates"},
				{key: "dates", from: "lukas", day: 4, clock: "02:55", text: "Jan 19–22, staying near Union Square"},
				{key: "ok", from: "me", day: 4, clock: "07:58", text: "perfect, let's do the 20th"},
			},
			facts: []factSpec{{text: "Lukas (from Berlin) is in San Francisco Jan 19–22 for a conference, near Union Square; coffee on the 20th", evidence: []string{"visit", "dates", "ok"},
				queries: []string{"when is Lukas in town", "coffee with my German friend"}}},
		},
	}
}

// storyGUID returns the fixed guid of a story line: a UUID-shaped hash of
// the story id and line key.
func storyGUID(storyID, key string) string {
	h := sha1.Sum([]byte("tidings-demo/" + storyID + "/" + key))
	return uuidString(h[:16])
}

func uuidString(b []byte) string {
	return strings.ToUpper(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// lineTime places a line relative to now in the demo zone.
func (l lineSpec) time(now time.Time) time.Time {
	if l.ago > 0 {
		return now.Add(-l.ago)
	}
	var hh, mm int
	fmt.Sscanf(l.clock, "%d:%d", &hh, &mm)
	d := now.In(demoZone).AddDate(0, 0, -l.day)
	return time.Date(d.Year(), d.Month(), d.Day(), hh, mm, 0, 0, demoZone)
}

// Stories returns the storylines as written for the given now.
func Stories(now time.Time) []Story {
	specs := storySpecs(now)
	out := make([]Story, 0, len(specs))
	for _, s := range specs {
		st := Story{ID: s.id, Title: s.title, Conversation: threadGUID(s.thread)}
		for _, k := range threadMembers(s.thread) {
			st.With = append(st.With, personByKey(k).Name())
		}
		for _, l := range s.lines {
			from := "me"
			if l.from != "me" {
				from = personByKey(l.from).Name()
			}
			kind := "text"
			switch {
			case l.tapback != 0:
				kind = "reaction"
			case l.event != nil:
				kind = "group_event"
			case l.photo != "", l.audio:
				kind = "attachment"
			}
			text := l.text
			switch {
			case l.photo != "":
				text = "\ufffc" + l.text
			case l.audio:
				text = "\ufffc" // the transcript is not the body
			}
			if l.unsent {
				text = ""
			}
			st.Messages = append(st.Messages, StoryMessage{GUID: storyGUID(s.id, l.key), From: from, Text: text, Time: l.time(now).UTC(), Kind: kind})
		}
		for _, f := range s.facts {
			fact := Fact{Text: f.text, Queries: f.queries}
			for _, e := range f.evidence {
				fact.Evidence = append(fact.Evidence, storyGUID(s.id, e))
			}
			st.Facts = append(st.Facts, fact)
		}
		for _, a := range s.awaiting {
			st.Awaiting = append(st.Awaiting, storyGUID(s.id, a))
		}
		st.NeedsReply = len(st.Awaiting) > 0
		out = append(out, st)
	}
	return out
}
