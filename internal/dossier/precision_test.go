package dossier

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

// commitmentsOf builds a one-conversation dossier from texts ("me: …" is
// the owner's, anything else the subject's), one minute apart, and returns
// every commitment the report lists.
func commitmentsOf(t *testing.T, subject Subject, texts ...string) []Commitment {
	t.Helper()
	loc := time.FixedZone("PST", -8*3600)
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	var msgs []Message
	for i, tx := range texts {
		m := Message{ID: string(rune('a' + i)), ConversationID: "c", Time: now.Add(time.Duration(i-len(texts)) * time.Minute)}
		if rest, ok := strings.CutPrefix(tx, "me: "); ok {
			m.FromMe, m.Text = true, rest
		} else {
			m.Sender, m.Text = subject.Handles[0], tx
		}
		msgs = append(msgs, m)
	}
	rep := Build(subject, msgs, Options{Location: loc}).Report(now)
	return slices.Concat(rep.Active, rep.Past, rep.Resolved)
}

var friend = Subject{Key: "p-friend", Name: "Robin Vale", Handles: []string{"+14155550160"}}

// TestChatIsNotACommitment: cheers, deferrals, lyrics, forwarded or quoted
// text, idioms, asides and courtesy offers commit nobody to anything
// (docs/dossier.md "Commitments"); the commitments next to them still count.
func TestChatIsNotACommitment(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       string // the kind expected, "" for none
	}{
		{"a cheer for a team", "let's go Giants!!", ""},
		{"a cheer alone", "LETS GOOOO", ""},
		{"a cheer with an aside", "let's go Niners btw, they're up by 3", ""},
		{"a deferral: check", "hmm let me check with my sister", ""},
		{"a deferral: look", "let me look into it", ""},
		{"a deferral: think", "let me think about the dates", ""},
		{"a deferral: see", "let me see what I can do", ""},
		{"lyrics between music notes", "🎵 I'm gonna take my horse to the old town road 🎵", ""},
		{"lyrics after a note", "♪ and I will walk five hundred miles", ""},
		{"a forwarded text", "Fwd: I'll bring the snacks on Saturday. Please wear cleats.", ""},
		{"a forwarded text, long form", "Forwarded message: we will ship your order tomorrow", ""},
		{"a quotation", `he literally said "I'll call you tomorrow" lol`, ""},
		{"an idiom: grave", "I'll take it to the grave", ""},
		{"an idiom: hold you to it", "I'll hold you to that", ""},
		{"an aside in parentheses", "never eating there again (I'll be back next week)", ""},
		{"a courtesy offer", "let me know if you need anything", ""},
		{"an offer to lend", "no rush! lmk if you want to borrow my ladder", ""},
		{"a courtesy: questions", "let me know if you have any questions", ""},
		{"an event arranged elsewhere", "the party sunday is still on!", ""},
		{"a conditional", "if it rains saturday I'll drive you", ""},
		{"a hypothetical", "what if we just drove to Tahoe friday", ""},
		{"a vague plan", "we should go to that pottery class sometime", ""},
		{"a vague plan with let's", "let's get coffee at some point!", ""},
		// The commitments next to them still count.
		{"a dated plan with should", "we should get dinner friday", KindPlan},
		{"asking whether a plan holds", "are we still on for dinner friday?", KindPlan},
		{"a plan to go somewhere", "let's go to the farmers market saturday", KindPlan},
		{"a plan to go do something", "let's go climbing sunday morning?", KindPlan},
		{"a promise", "I'll send the invoice tomorrow", KindPromise},
		{"a request to let me know", "let me know by friday if you can come", KindRequest},
		{"a promise after a quote", `"classic" lol. I'll call you tomorrow`, KindPromise},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := commitmentsOf(t, friend, tc.text)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("%q made %s %q, want no commitment", tc.text, got[0].Kind, got[0].Text)
			case tc.want != "" && (len(got) != 1 || got[0].Kind != tc.want):
				t.Errorf("%q made %+v, want one %s", tc.text, got, tc.want)
			}
		})
	}
}

// TestAutomatedSendersMakeNoCommitments: a machine's texts (a short code,
// an alphanumeric id, a no-reply address, or a business card whose texts
// are templates) and the owner's replies to it commit nobody; a person
// writing for a business, or a friend pasting a template, still does.
func TestAutomatedSendersMakeNoCommitments(t *testing.T) {
	business := func(name, org, handle string) Subject {
		return Subject{Key: "k-" + handle, Name: name, Organization: org, Handles: []string{handle}}
	}
	for _, tc := range []struct {
		name    string
		subject Subject
		texts   []string
		want    int
	}{
		{"a short code", business("Pharmacy", "", "72345"), []string{
			"Your refill is ready. We'll text you when it ships. Reply STOP to opt out.", "me: can you deliver it friday?"}, 0},
		{"an alphanumeric sender", business("", "", "PARCELGO"), []string{"I will deliver your parcel tomorrow between 9 and 5"}, 0},
		{"a no-reply address", business("", "", "no-reply@shop.example"), []string{"Please confirm your order by Friday"}, 0},
		{"a business card signing its texts", business("Maple Vet Clinic", "Maple Vet Clinic", "+14155550177"), []string{
			"Maple Vet Clinic: Hi Sam, this is a reminder of Biscuit's checkup on Tue Dec 8 at 9:00 AM. Reply C to confirm.",
			"me: C",
			"Thanks! See you Tuesday at 9am. Please bring the vaccine records."}, 0},
		{"a toll-free number with a template", business("Northline Air", "", "+18885550123"), []string{
			"Northline Air: Your flight departs tomorrow 7:45 AM. Check in now: air.example/ci",
			"me: can you move me to an aisle seat",
			"This number does not accept replies. Manage your trip at air.example/m"}, 0},
		{"a card signed by its own name", business("Cedar Dental", "", "+14155550133"), []string{
			"Cedar Dental: see you Friday at 10 AM for your cleaning. Reply Y to confirm", "me: Y"}, 0},
		{"a person at a business", business("Ray Ortiz", "Summit Plumbing", "+14155550142"), []string{
			"Hi, Ray from Summit Plumbing. I can come Thursday between 9 and 11. Can you make sure someone's home?"}, 1},
		{"a friend pasting a template", friend, []string{
			"lol look what I got: \"FreshBowl: 20% off today only! Reply STOP to end\"", "can you pick up the kids at 4?"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := commitmentsOf(t, tc.subject, tc.texts...)
			if len(got) != tc.want {
				t.Errorf("%d commitments %+v, want %d", len(got), got, tc.want)
			}
		})
	}
}

// TestAStepWithAPromiseAcceptsTheRequest: "found it, I'll drop it off
// saturday" accepts the request it answers and leaves it open; the step it
// reports ("found it") does not settle it.
func TestAStepWithAPromiseAcceptsTheRequest(t *testing.T) {
	for _, tc := range []struct{ name, ask, reply string }{
		{"found it", "do you still have my ladder? need it this weekend", "me: found it, I'll drop it off saturday"},
		{"bought it", "can you get a birthday card for Dad?", "me: bought one, I'll bring it sunday"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := commitmentsOf(t, friend, tc.ask, tc.reply)
			if len(got) != 1 || got[0].Kind != KindRequest || got[0].Status != StatusOpen || !got[0].Accepted || !slices.Contains(got[0].Sources, "b") {
				t.Errorf("got %+v, want one open request, accepted by the reply", got)
			}
		})
	}
}

// TestDeferralsCommitToNothingButTheirNeighbours: a deferral ("let me
// check", "I'll ask my boss") makes no commitment; a promise in another
// clause of the same sentence still does.
func TestDeferralsCommitToNothingButTheirNeighbours(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       int
	}{
		{"a deferral with a promise", "let me think about the budget, I'll send numbers friday", 1},
		{"a promise with a deferral", "I'll send numbers friday, let me check with Ana first", 1},
		{"asking someone else", "no worries, I'll ask Priya", 0},
		{"asking the boss", "I'll ask my boss", 0},
		{"asking someone to do something for the owner", "I'll ask him to fix yours too", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := commitmentsOf(t, friend, tc.text); len(got) != tc.want {
				t.Errorf("%q made %d commitments %+v, want %d", tc.text, len(got), got, tc.want)
			}
		})
	}
}

// TestARestatedPromiseIsAMention: repeating an open promise or an accepted
// request ("sorry! I'll send it tonight") mentions it, it makes no second
// commitment; a new promise after an accepted plan is a new commitment.
func TestARestatedPromiseIsAMention(t *testing.T) {
	for _, tc := range []struct {
		name  string
		texts []string
		want  int
	}{
		{"an accepted request, restated", []string{"can you send me the signed lease?", "me: will do", "any news on the lease?", "me: sorry! I'll send it tonight"}, 1},
		{"an own promise, restated", []string{"me: I'll propose dates for the kickoff", "sounds good", "any thoughts on the dates?", "me: sorry, I'll send them by thursday"}, 1},
		{"a pronoun promise nobody asked about", []string{"me: I'll have the fence re-stained in two weeks", "sure, I'm home all day", "me: got it, thanks! will return it when I'm done"}, 2},
		{"an own promise, restated in its words", []string{"please review the budget draft", "me: will do", "me: I'll send you my notes on the budget tonight"}, 1},
		{"a new promise after an accepted plan", []string{"let's sync tuesday at 2 on the pricing page", "me: sounds good", "did we ever do that sync?", "me: nope. I'll find a slot next week"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := commitmentsOf(t, friend, tc.texts...)
			if len(got) != tc.want {
				t.Errorf("%d commitments %+v, want %d", len(got), got, tc.want)
			}
		})
	}
}

// TestActivityQuestionsWithADayArePlans: "climbing wednesday?" proposes a
// plan as "dinner wednesday?" does, whatever form the activity takes.
func TestActivityQuestionsWithADayArePlans(t *testing.T) {
	for _, text := range []string{"climbing wednesday? the new wall is open", "bowling friday night?", "book club next thursday at 7?", "karaoke saturday??"} {
		t.Run(text, func(t *testing.T) {
			got := commitmentsOf(t, friend, text)
			if len(got) != 1 || got[0].Kind != KindPlan || got[0].Due == nil {
				t.Errorf("%q made %+v, want one dated plan", text, got)
			}
		})
	}
}

// TestABareTimeKeepsThePlansDay: "noon?" in reply to "lunch friday?" sets
// the hour of Friday's plan; it does not move the plan to the next noon.
func TestABareTimeKeepsThePlansDay(t *testing.T) {
	loc := time.FixedZone("PST", -8*3600)
	for _, tc := range []struct {
		name  string
		texts []string
		day   time.Weekday
		hour  int
	}{
		{"noon", []string{"let's get lunch friday?", "me: yes pls. noon?", "noon 👍"}, time.Friday, 12},
		{"a clock time with a question", []string{"climbing wednesday?", "me: yes! 6:30?", "6:30 works"}, time.Wednesday, 18},
		{"a clock time in the acceptance", []string{"dinner thursday?", "me: sure, I can do 7:30"}, time.Thursday, 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := commitmentsOf(t, friend, tc.texts...)
			if len(got) != 1 || got[0].Due == nil {
				t.Fatalf("got %+v, want one dated plan", got)
			}
			if s := got[0].Due.Start.In(loc); s.Weekday() != tc.day || s.Hour() != tc.hour {
				t.Errorf("due %s, want %s at %d:00", s.Format(time.RFC1123), tc.day, tc.hour)
			}
		})
	}
}

// TestAnOfferCountsOnceAccepted: "want me to save you some?" answered
// "YES" is the offerer's promise; an offer nobody takes up is none.
func TestAnOfferCountsOnceAccepted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		texts []string
		want  int
	}{
		{"accepted", []string{"want me to save you some of the lemon bars?", "me: YES obviously"}, 1},
		{"accepted with a thanks", []string{"do you want me to pick up your mail while you're away?", "me: yes please, that'd be amazing"}, 1},
		{"not answered", []string{"want me to pick up your mail friday?"}, 0},
		{"declined", []string{"want me to drive you to the airport?", "me: no thanks, I booked a car"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := commitmentsOf(t, friend, tc.texts...)
			if len(got) != tc.want {
				t.Fatalf("%d commitments %+v, want %d", len(got), got, tc.want)
			}
			if tc.want == 1 && (got[0].Kind != KindPromise || got[0].Owner != "them" || !got[0].Accepted) {
				t.Errorf("got %+v, want their accepted promise", got[0])
			}
		})
	}
}
