package triage

import (
	"fmt"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// The seed's buckets (docs/triage.md "Buckets"): skip_summary is for what is
// typically automated; a finished human exchange is low_priority; a request
// stays open when chatter follows it.

// from builds a direct thread with handle h (known: a saved contact) from
// (minutes ago, from, text) triples.
func from(now time.Time, h string, known bool, lines ...string) Thread {
	th := direct(now, lines...)
	th.ChatID, th.Known = h, known
	th.Participants = []Participant{{Handle: h}}
	if known {
		th.Participants[0].Name, th.ContactName = "Robin Park", "Robin Park"
	} else {
		th.ContactName = ""
	}
	for i := range th.Messages {
		if !th.Messages[i].FromMe {
			th.Messages[i].Sender = h
		}
	}
	return th
}

// group builds a group thread of three members (Sam, Jordan, Lee) from
// (minutes ago, member index or "me", text) triples.
func group(now time.Time, lines ...string) Thread {
	members := []Participant{{Handle: "+13125550101", Name: "Sam Ortiz"}, {Handle: "+13125550102", Name: "Jordan Kim"}, {Handle: "+13125550103", Name: "Lee Wu"}}
	th := Thread{ChatID: "chat77", Kind: model.KindGroup, Participants: members, ParticipantCount: 3, DisplayName: "Road trip"}
	for i := 0; i+2 < len(lines)+1; i += 3 {
		var ago, who int
		fmt.Sscanf(lines[i], "%d", &ago)
		m := Message{ID: fmt.Sprintf("g%d", i/3), Time: now.Add(-time.Duration(ago) * time.Minute), Text: lines[i+2]}
		if lines[i+1] == "me" {
			m.FromMe = true
		} else {
			fmt.Sscanf(lines[i+1], "%d", &who)
			m.Sender = members[who].Handle
		}
		th.Messages = append(th.Messages, m)
	}
	return th
}

func TestSeedBuckets(t *testing.T) {
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	const person, stranger, tollFree = "+14155550134", "+15105550177", "+18885550123"
	for _, tc := range []struct {
		name string
		th   Thread
		want Bucket
	}{
		// A finished human exchange is low_priority, never skip.
		{"finished: I answered last", from(now, person, true, "90", "them", "are you around sunday?", "80", "me", "yep, all day"), LowPriority},
		{"finished: their acknowledgement", from(now, person, true, "90", "me", "dropped the keys with your neighbour", "80", "them", "perfect thank you!!"), LowPriority},
		{"finished: my acknowledgement", from(now, person, true, "90", "them", "landed, see you at baggage claim", "80", "me", "ok!"), LowPriority},
		{"finished: stranger said thanks", from(now, stranger, false, "90", "me", "sorry, wrong number I think", "80", "them", "oh oops thanks"), LowPriority},

		// Machines, from ordinary numbers, recognised by their templates.
		{"keyword menu: reply a letter to act", from(now, stranger, false,
			"300", "them", "Harbor Dental: Mia's cleaning is Tue 12/8 at 9:40am. Reply C to confirm or R to reschedule.",
			"200", "me", "C",
			"199", "them", "Thanks, your appointment is confirmed. See you soon!"), Skip},
		{"keyword menu: reply a digit", from(now, tollFree, false,
			"60", "them", "Your refill for Rx 48213 can be picked up after 4pm. Reply 1 to refill the next one automatically, 2 to decline."), Skip},
		{"campaign goes on after the opt-out", from(now, stranger, false,
			"5000", "them", "Hi Alex! Sam here w/ Yes on Measure K. Will you vote yes on K this year? Txt STOP to opt out",
			"4990", "me", "STOP",
			"4989", "them", "You've been opted out and won't get more texts from this number.",
			"30", "them", "Alex, polls close at 8pm tonight! Find your polling place: vote.example/k"), Skip},
		{"HELP/STOP footer from a known-looking number", from(now, tollFree, false,
			"45", "them", "Northwind CU Alert: a withdrawal of $1,200.00 posted to checking x4410. Not you? Call 888-555-0123. HELP for help, STOP to end."), Skip},
		{"portal notice", from(now, stranger, false,
			"120", "them", "You have a new message from your care team. Please log in to the patient portal to view it. Do not reply to this text."), Skip},
		{"one-way service notices", from(now, stranger, false,
			"400", "them", "Your table for 2 at Osteria is ready. Please check in at the host stand within 10 minutes.",
			"390", "them", "We've released your table. Reply R to rejoin the waitlist."), Skip},
		{"a stranger who is a person", from(now, stranger, false, "30", "them", "hey it's Robin from the climbing gym, new number! still on for thursday?"), NeedsReply},
		{"a friend who mentions an appointment", from(now, person, true, "30", "them", "my dentist appointment ran late, can you grab the kids?"), NeedsReply},

		// A request in a group stays open while chatter follows it.
		{"@name ask buried by chatter", group(now,
			"300", "0", "ok packing list is in the doc",
			"299", "0", "@Alex can you book the campsite tonight? the good loop fills up",
			"290", "1", "omg I forgot my sleeping bag last time",
			"280", "2", "lol classic",
			"270", "1", "bringing the good marshmallows this time",
			"200", "2", "night all"), NeedsReply},
		{"every member asked to answer, others did", group(now,
			"300", "0", "Dinner Friday at 7 at Lucia's — can everyone reply with yes or no so I can book?",
			"290", "1", "yes!",
			"280", "2", "yes, might be 10 min late"), NeedsReply},
		{"@name ask to another member", group(now,
			"300", "0", "@Jordan can you bring the cooler?",
			"290", "2", "lol he will forget"), LowPriority},

		// An offer the owner asked about, answered with details: the
		// decision is the owner's.
		{"offer clarified, decision pending", from(now, person, true,
			"300", "them", "want to go halves on a ski rental for january?",
			"290", "me", "possibly, what would it cost",
			"280", "them", "about $90 each for the week, I have to reserve by friday"), NeedsReply},
		{"my question answered, nothing offered", from(now, person, true,
			"300", "me", "did you ever find your keys",
			"290", "them", "yes!! they were in the fridge?? long story"), LowPriority},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Classify(&tc.th, Options{Now: now})
			if d.Bucket != tc.want {
				t.Errorf("got %s/%s, want %s (%v)", d.Bucket, d.Code, tc.want, d.Reasons)
			}
		})
	}
}
