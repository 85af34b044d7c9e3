package index

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// TestDateFilterOnlyForTimeWindows: a date in a query becomes a hard filter
// only when the query asks for messages of a time window — the date phrase
// is all there is, a messaging verb or "from"/"since"/"during" ties it to
// the messages, or the phrase itself is a window ("in the last 5 days", an
// ISO date). A date that describes the topic ("conference in January",
// "dinner on Friday") is searched as words; a relative one ("dinner last
// week") ranks messages of that window higher without hiding the others.
func TestDateFilterOnlyForTimeWindows(t *testing.T) {
	// Calendar arithmetic checked against literal dates: the index and its
	// corpus are pinned to calendarNow, a literal Monday (internal/testclock
	// does not move it).
	ix := searchIndex(t, Options{Now: calendarNow})
	d := func(s string) time.Time {
		if s == "" {
			return time.Time{}
		}
		layout := "2006-01-02"
		if len(s) > len(layout) {
			layout = "2006-01-02T15:04"
		}
		t, err := time.Parse(layout, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	for _, tt := range []struct {
		q string
		// filter: the hard date filter [since, until) ("" = open); none
		// when both are empty and text is "".
		filterText, since, until string
	}{
		// Clearly a window: the date is all there is.
		{"yesterday", "yesterday", "2026-11-29", "2026-11-30"},
		{"last week", "last week", "2026-11-23", "2026-11-30"},
		{"messages from last week", "last week", "2026-11-23", "2026-11-30"},
		{"what happened this month", "this month", "2026-11-01", "2026-12-01"},
		// A messaging verb ties the date to the messages.
		{"what did Sam say yesterday", "yesterday", "2026-11-29", "2026-11-30"},
		{"what did Zoe text me this morning", "this morning", "2026-11-30", "2026-12-01"},
		{"who messaged me today", "today", "2026-11-30", "2026-12-01"},
		{"what did I send in March", "in march", "2026-03-01", "2026-04-01"},
		{"what did Jordan say about dinner last week", "last week", "2026-11-23", "2026-11-30"},
		{"did anyone mention the dentist 2 weeks ago", "2 weeks ago", "2026-11-16", "2026-11-23"},
		// "from", "since", "during" before the date.
		{"texts from yesterday", "yesterday", "2026-11-29", "2026-11-30"},
		{"photos from 3 days ago", "3 days ago", "2026-11-27", "2026-11-28"},
		{"texts from March 2025", "march 2025", "2025-03-01", "2025-04-01"},
		{"climbing since Friday", "since friday", "2026-11-27", ""},
		{"dinner plans since 2025", "since 2025", "2025-01-01", ""},
		{"rent during October", "during october", "2026-10-01", "2026-11-01"},
		// The phrase itself is a window.
		{"dinner in the last 5 days", "in the last 5 days", "2026-11-26", ""},
		{"owe over the past 2 weeks", "over the past 2 weeks", "2026-11-16T12:00", ""},
		{"2026-11-02 meeting", "2026-11-02", "2026-11-02", "2026-11-03"},
		// Dates that describe the topic: no filter.
		{"conference in San Francisco in January", "", "", ""},
		{"dinner on Friday", "", "", ""},
		{"dentist appointment in December", "", "", ""},
		{"flight to Berlin in March 2025", "", "", ""},
		{"party tonight", "", "", ""},
		{"dinner last week", "", "", ""},
		{"birthday party last year", "", "", ""},
		{"when is Lukas in town", "", "", ""},
		{"this may be fine", "", "", ""},
	} {
		t.Run(tt.q, func(t *testing.T) {
			r := mustSearch(t, ix, Query{Text: tt.q, Mode: ModeFulltext})
			in := r.Interpretation
			if in == nil {
				t.Fatal("no interpretation")
			}
			since, until := d(tt.since), d(tt.until)
			if in.DateText != tt.filterText || !in.Since.Equal(since) || !in.Until.Equal(until) {
				t.Errorf("filter %q %v..%v, want %q %v..%v", in.DateText, in.Since, in.Until, tt.filterText, since, until)
			}
		})
	}
}

// sfCorpus is smallCorpus plus Lukas' message about a conference, sent in
// November about January, and a January message about something else.
func sfCorpus() *fakeDB {
	db := smallCorpus()
	db.addConv(model.Conversation{ID: "iMessage;-;+493023125467", Identifier: "+493023125467", Kind: model.KindDirect, Service: "iMessage", Participants: []string{"+493023125467"}})
	lukas := "iMessage;-;+493023125467"
	add := func(id, sender string, at time.Time, text string) {
		db.add(model.Message{ID: id, ConversationIDs: []string{lukas}, Sender: sender, FromMe: sender == "", Time: at, Text: text})
	}
	add("sf1", "+493023125467", testNow.AddDate(0, 0, -5), "Hey! I'll be in San Francisco for a conference in January, are you around for a coffee?")
	add("sf2", "", testNow.AddDate(0, 0, -5).Add(5*time.Hour), "Yes!! would love that, send me your dates")
	add("sf3", "+493023125467", testNow.AddDate(0, 0, -4), "Jan 19-22, staying near Union Square")
	db.add(model.Message{ID: "jan1", ConversationIDs: []string{"iMessage;-;zoe@example.com"}, Sender: "zoe@example.com",
		Time: testclock.Date(2026, 1, 14, 10, 0, 0, 0, time.UTC), Text: "Happy new year! Conference room booked for the offsite"})
	return db
}

// TestTopicDatesAreWords: the message that says "conference in January" is
// found by a query that says the same, in every ranked mode.
func TestTopicDatesAreWords(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{Embedder: &hashEmbedder{id: "h", dim: 64}})
	mustSync(t, ix, sfCorpus().source(nil))
	for _, mode := range []Mode{ModeHybrid, ModeFulltext, ModeSemantic} {
		for _, q := range []string{"conference in San Francisco in January", "San Francisco conference in January", "coffee in January"} {
			r := mustSearch(t, ix, Query{Text: q, Mode: mode, Limit: 3})
			if ids := hitIDs(r); len(ids) == 0 || ids[0] != "sf1" {
				t.Errorf("%s %q: %v, want sf1 first (interpreted %+v)", mode, q, ids, r.Interpretation)
			}
		}
	}
	// Asked as a window, January is a filter: the November message is out.
	r := mustSearch(t, ix, Query{Text: "what did people say about the conference in January", Mode: ModeFulltext})
	if ids := hitIDs(r); !slices.Equal(ids, []string{"jan1"}) {
		t.Errorf("window query: %v, want [jan1]", ids)
	}
}

// TestPeopleAndWindowsInQueries: a word no message contains that names a
// contact limits the search to conversations with them ("when is Lukas in
// town" finds Lukas' messages, which never say "Lukas"), and a query that
// names only a window or a person lists its messages newest first.
func TestPeopleAndWindowsInQueries(t *testing.T) {
	ctx := context.Background()
	ix := openTest(t, t.TempDir(), Options{Embedder: &hashEmbedder{id: "h", dim: 64}})
	mustSync(t, ix, sfCorpus().source(nil))
	if _, err := ix.LoadContacts(ctx, "vcard:test", []model.Contact{
		{Source: "vcard", ID: "1", First: "Lukas", Last: "Becker", Phones: []string{"+49 30 23125467"}},
		{Source: "vcard", ID: "2", First: "Sam", Last: "Rivera", Phones: []string{"+1 415 555 0101"}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q      string
		mode   Mode
		people []string
		want   []string // exact hit ids, in order when ordered
		order  bool
	}{
		{"when is Lukas in town", ModeHybrid, []string{"Lukas Becker"}, []string{"sf1", "sf2", "sf3"}, false},
		{"when is Lukas in town", ModeFulltext, []string{"Lukas Becker"}, []string{"sf1", "sf2", "sf3"}, false}, // "town" is in no message
		{"Lukas conference San Francisco", ModeFulltext, []string{"Lukas Becker"}, []string{"sf1"}, true},
		{"Lukas", ModeHybrid, []string{"Lukas Becker"}, []string{"sf3", "sf2", "sf1"}, true},
		{"what did Lukas say yesterday", ModeFulltext, []string{"Lukas Becker"}, nil, true},
		{"what did Sam say in October", ModeFulltext, []string{"Sam Rivera"}, []string{"m2", "m1"}, true},
		{"messages from last week", ModeHybrid, nil, []string{"m9", "m8", "m7", "sf3", "sf2", "sf1"}, true}, // m7 and m8 share a time: newer id first
		{"dinner with Sam", ModeFulltext, []string{"Sam Rivera"}, []string{"m3", "m8"}, false},              // Sam is in the group too
	} {
		t.Run(string(tt.mode)+"/"+tt.q, func(t *testing.T) {
			r := mustSearch(t, ix, Query{Text: tt.q, Mode: tt.mode, Limit: 20})
			if in := r.Interpretation; in == nil || !slices.Equal(in.People, tt.people) {
				t.Errorf("people %+v, want %v", r.Interpretation, tt.people)
			}
			got := hitIDs(r)
			if !tt.order {
				slices.Sort(got)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("hits %v, want %v", got, tt.want)
			}
		})
	}
}
