package androidindex

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/android"
	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

const region = "US"

// normalize is the handle normaliser the CLI gives the index: contacts'
// libphonenumber keys for the configured region.
func normalize(h string) string {
	if k, _ := contacts.Normalize(h, region); k != "" {
		return k
	}
	return index.NormalizeHandle(h)
}

func openIndex(t *testing.T) *index.Index {
	t.Helper()
	now := testclock.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ix, err := index.Open(context.Background(), filepath.Join(t.TempDir(), "ix", "index.db"),
		index.Options{NormalizeHandle: normalize, Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func fixture(name string) string { return filepath.Join("..", "testdata", name) }

// copyFixture copies a fixture into a temp folder so a test may touch it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(fixture(name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustSync(t *testing.T, ix *index.Index, src index.Source) index.SourceReport {
	t.Helper()
	rep, err := ix.Sync(context.Background(), index.SyncOptions{}, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sources) != 1 {
		t.Fatalf("%d source reports", len(rep.Sources))
	}
	return rep.Sources[0]
}

func count(t *testing.T, ix *index.Index) (convs, msgs int64) {
	t.Helper()
	st, err := ix.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Conversations, st.Messages
}

func search(t *testing.T, ix *index.Index, text string) []index.Hit {
	t.Helper()
	res, err := ix.Search(context.Background(), index.Query{Text: text, Mode: index.ModeFulltext, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	return res.Hits
}

// TestEndToEnd imports the full fixture into a real index: search finds
// message text, list_conversations shows the threads, history returns a
// thread in order, and the contacts the export carries name the threads.
func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	ix := openIndex(t)
	src := New([]string{fixture("full.xml")}, region)
	rep := mustSync(t, ix, src)
	if rep.Added != 19 || rep.SkippedOrphan != 0 || rep.SkippedPolicy != 0 {
		t.Fatalf("report %+v, want 19 added", rep)
	}
	if convs, msgs := count(t, ix); convs != 8 || msgs != 19 {
		t.Fatalf("index holds %d conversations, %d messages; want 8, 19", convs, msgs)
	}

	hits := search(t, ix, "terrace")
	if len(hits) != 1 || hits[0].Source != model.SourceAndroid || hits[0].Sender != "+14155550123" ||
		!strings.Contains(hits[0].Text, "The view from the terrace 🌅") {
		t.Fatalf("search terrace: %+v", hits)
	}
	alice := hits[0].Conversation.ID
	if want := android.ConversationID([]string{"+14155550123"}); alice != want {
		t.Errorf("conversation %s, want %s", alice, want)
	}
	if len(search(t, ix, "Saturday")) != 1 || len(search(t, ix, "corkscrew")) != 1 {
		t.Errorf("group MMS text or draft not searchable")
	}
	// Emoji written as surrogate references are searchable text, not U+FFFD.
	for _, h := range search(t, ix, "wine") {
		if strings.ContainsRune(h.Text, '\uFFFD') || !strings.Contains(h.Text, "😀") {
			t.Errorf("text %q", h.Text)
		}
	}

	if _, err := ix.LoadContacts(ctx, Key, mustContacts(t, src)); err != nil {
		t.Fatal(err)
	}
	list, err := ix.ListConversations(ctx, index.ListOptions{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 8 {
		t.Fatalf("%d conversations listed", list.Total)
	}
	byID := map[string]index.Conversation{}
	for _, c := range list.Conversations {
		byID[c.ID] = c
	}
	a, ok := byID[alice]
	if !ok || a.Kind != model.KindDirect || a.Identifier != "+14155550123" || a.MessageCount != 9 || a.Label != "Alice M. Martin" {
		t.Errorf("Alice's thread: %+v", a)
	}
	if !a.LastActivity.Equal(time.UnixMilli(1795001300000)) {
		t.Errorf("last activity %v", a.LastActivity)
	}
	group := byID[android.ConversationID([]string{"+12125550111", "+13125550122", "+16505550199", "+17185550133"})]
	if group.Kind != model.KindGroup || group.ParticipantCount != 4 || group.MessageCount != 2 {
		t.Errorf("group thread: %+v", group)
	}
	if list.Conversations[0].ID != alice {
		t.Errorf("newest conversation %s, want Alice's", list.Conversations[0].ID)
	}

	// History by phone number in another format, chronological.
	h, err := ix.History(ctx, index.HistoryQuery{Chat: "(415) 555-0123", DirectOnly: true, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) != 9 || h.Messages[0].Text != "Dinner at 7? Bring the \"good\" wine & cheese <3\n😀 see you" ||
		h.Messages[8].Text != "Thanks for tonight!" {
		t.Fatalf("history: %d messages", len(h.Messages))
	}
	for i := 1; i < len(h.Messages); i++ {
		if h.Messages[i].Time.Before(h.Messages[i-1].Time) {
			t.Errorf("history not chronological at %d", i)
		}
	}
	var withPhoto *index.Message
	for i := range h.Messages {
		if len(h.Messages[i].Attachments) > 0 {
			withPhoto = &h.Messages[i]
		}
	}
	if withPhoto == nil || withPhoto.Attachments[0].Filename != "IMG_2041.jpg" || withPhoto.Attachments[0].MimeType != "image/jpeg" ||
		withPhoto.Attachments[0].Size != 160 || withPhoto.Service != "MMS" {
		t.Errorf("photo message: %+v", withPhoto)
	}
	if loc, err := ix.AttachmentFile(ctx, withPhoto.Attachments[0].ID); err != nil || loc.Path != "" {
		t.Errorf("an Android attachment has no file: AttachmentFile = %q, %v", loc.Path, err)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func mustContacts(t *testing.T, src *Source) []model.Contact {
	t.Helper()
	cards, err := src.Contacts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cards
}

// TestReimportIsIdempotent: importing the same export again adds nothing,
// whether the file is unchanged (not even read), touched (read, every
// message unchanged), or listed twice.
func TestReimportIsIdempotent(t *testing.T) {
	ix := openIndex(t)
	p := copyFixture(t, "full.xml")
	src := New([]string{p}, region)
	if rep := mustSync(t, ix, src); rep.Added != 19 {
		t.Fatalf("first import: %+v", rep)
	}

	rep := mustSync(t, ix, New([]string{p}, region))
	if rep.Added+rep.Updated+rep.Unchanged != 0 {
		t.Errorf("unchanged file was read again: %+v", rep)
	}

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	src = New([]string{p, p, filepath.Join(filepath.Dir(p), ".", filepath.Base(p))}, region)
	rep = mustSync(t, ix, src)
	if rep.Added != 0 || rep.Updated != 0 || rep.Unchanged != 19 {
		t.Errorf("touched file: %+v, want 19 unchanged", rep)
	}
	if res := src.Results(); len(res) != 1 || res[0].Unchanged || res[0].Result.Messages != 19 {
		t.Errorf("results %+v: the same file listed three times must be read once", res)
	}
	if convs, msgs := count(t, ix); convs != 8 || msgs != 19 {
		t.Errorf("index holds %d conversations, %d messages after re-import", convs, msgs)
	}

	// A changed region re-reads every file (conversation keys depend on it).
	src = New([]string{p}, "GB")
	rep = mustSync(t, ix, src)
	if rep.Added+rep.Updated+rep.Unchanged != 19 {
		t.Errorf("region change did not re-read: %+v", rep)
	}
}

// TestOverlappingExports imports an older export and then a newer one that
// repeats part of it: only the new messages are added, changed flags update
// in place, and nothing is stored twice.
func TestOverlappingExports(t *testing.T) {
	ix := openIndex(t)
	a, b := fixture("overlap-a.xml"), fixture("overlap-b.xml")
	if rep := mustSync(t, ix, New([]string{a}, region)); rep.Added != 6 {
		t.Fatalf("older export: %+v", rep)
	}
	rep := mustSync(t, ix, New([]string{a, b}, region))
	// B repeats A3-A6: A3 is now read and A5's photo has a different
	// payload size (updated); A4 and A6 are unchanged; B7-B9 are new.
	if rep.Added != 3 || rep.Updated != 2 || rep.Unchanged != 2 {
		t.Errorf("newer export: %+v, want 3 added, 2 updated, 2 unchanged", rep)
	}
	if convs, msgs := count(t, ix); msgs != 9 || convs != 5 {
		t.Errorf("index holds %d conversations, %d messages; want 5, 9", convs, msgs)
	}
	for _, q := range []string{"harbour", "lighthouse", "picnic", "carol", "B8", "B9"} {
		if len(search(t, ix, q)) == 0 {
			t.Errorf("%q not found", q)
		}
	}
	if got := search(t, ix, "picnic"); len(got) != 1 {
		t.Errorf("picnic stored %d times", len(got))
	}
	// The group thread is one thread in both exports (same owner, same set).
	group := android.ConversationID([]string{"+12125550111", "+16505550199"})
	h, err := ix.History(context.Background(), index.HistoryQuery{Chat: group, Limit: 10})
	if err != nil || len(h.Messages) != 2 {
		t.Fatalf("group history: %v, %+v", err, h)
	}
	// Importing the older one again (alone, as after the user deleted the
	// newer file) changes nothing.
	rep = mustSync(t, ix, New([]string{a}, region))
	if rep.Added != 0 {
		t.Errorf("older export again: %+v", rep)
	}
	if _, msgs := count(t, ix); msgs != 9 {
		t.Errorf("%d messages after re-importing the older export", msgs)
	}
	// And both at once into a fresh index give the same 9 messages.
	ix2 := openIndex(t)
	if rep := mustSync(t, ix2, New([]string{b, a}, region)); rep.Added != 9 {
		t.Errorf("both into a fresh index: %+v", rep)
	}
}

// TestTruncatedExport: a truncated file imports what it holds, does not
// fail the sync, and says it is incomplete (now and on later syncs).
func TestTruncatedExport(t *testing.T) {
	ix := openIndex(t)
	p := copyFixture(t, "truncated.xml")
	src := New([]string{p}, region)
	rep := mustSync(t, ix, src)
	if rep.Added != 3 {
		t.Fatalf("report %+v, want the 3 complete records", rep)
	}
	res := src.Results()
	if len(res) != 1 || !res[0].Incomplete || !strings.Contains(res[0].Warning, "truncated") || !res[0].Result.Stats.Incomplete {
		t.Fatalf("results %+v", res)
	}
	src = New([]string{p}, region)
	mustSync(t, ix, src)
	if res := src.Results(); len(res) != 1 || !res[0].Unchanged || !res[0].Incomplete {
		t.Errorf("second sync results %+v: must still say incomplete", res)
	}
}

func TestMissingAndInvalidFiles(t *testing.T) {
	ix := openIndex(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls.xml")
	os.WriteFile(calls, []byte(`<?xml version="1.0"?><calls count="0"></calls>`), 0o600)
	tests := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "nope.xml"), os.ErrNotExist},
		{"folder", dir, nil},
		{"call log", calls, android.ErrNotExport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ix.Sync(context.Background(), index.SyncOptions{}, New([]string{tt.path}, region))
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
}

// TestHostileExport: the hostile fixture imports its valid records, with
// DOCTYPE entities left literal.
func TestHostileExport(t *testing.T) {
	ix := openIndex(t)
	src := New([]string{fixture("hostile.xml")}, region)
	rep := mustSync(t, ix, src)
	// 10 records are valid; one is an exact duplicate of another.
	if rep.Added != 9 {
		t.Errorf("report %+v, want 9 added", rep)
	}
	res := src.Results()[0].Result.Stats
	if res.Skipped != 13 || res.Ignored["doctype"] != 1 {
		t.Errorf("stats %+v", res)
	}
	hits := search(t, ix, "laughs")
	if len(hits) != 1 || !strings.Contains(hits[0].Text, "&lol9;") || strings.Contains(hits[0].Text, "lollol") {
		t.Errorf("entity hits: %+v", hits)
	}
}

// TestSamePersonAcrossSources: an Android thread and an iMessage thread
// with the same person (numbers written differently) resolve to one
// contacts person, and the index finds both threads by that person.
func TestSamePersonAcrossSources(t *testing.T) {
	ctx := context.Background()
	// The iMessage side, as chat.db stores it: handle "+14155550123".
	imsg := &fakeChatDB{
		convs: []model.Conversation{{Source: model.SourceIMessage, ID: "iMessage;-;+14155550123", RowID: 1,
			Identifier: "+14155550123", Kind: model.KindDirect, Service: "iMessage", Participants: []string{"+14155550123"}}},
		msgs: []model.Message{{Source: model.SourceIMessage, ID: "G-1", RowID: 1, ConversationIDs: []string{"iMessage;-;+14155550123"},
			Sender: "+14155550123", Service: "iMessage", Kind: model.MsgText, Time: time.UnixMilli(1795002000000).UTC(),
			Text: "sent from my iPhone about the harbour"}},
	}
	ix := openIndex(t)
	if _, err := ix.Sync(ctx, index.SyncOptions{}, &index.RowSource{SourceKey: "imessage:test", SourceKind: model.SourceIMessage, Reader: imsg},
		New([]string{fixture("full.xml")}, region)); err != nil {
		t.Fatal(err)
	}

	// Contacts: the Android export's names merged with an address-book
	// card that writes Alice's number in national format.
	src := New([]string{fixture("full.xml")}, region)
	androidCards := mustContacts(t, src)
	card := model.Contact{Source: "vcard", ID: "alice-uid", First: "Alice", Last: "Martin", Phones: []string{"415.555.0123"},
		Emails: []string{"alice@example.com"}, Modified: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} // literal date: a contact modification date, no clock
	book, err := contacts.NewBook(append(slices.Clone(androidCards), card), region)
	if err != nil {
		t.Fatal(err)
	}
	convs, err := ix.ResolveConversations(ctx, "415-555-0123", true)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	var people []string
	for _, c := range convs {
		sources = append(sources, c.Source)
		for _, p := range c.Participants {
			person, ok := book.Resolve(p.Handle)
			if !ok {
				t.Fatalf("%s handle %q resolves to no person", c.Source, p.Handle)
			}
			people = append(people, person.ID)
		}
	}
	slices.Sort(sources)
	if !slices.Equal(sources, []string{model.SourceAndroid, model.SourceIMessage}) {
		t.Fatalf("threads with the person: %v, want one Android and one iMessage", sources)
	}
	if len(people) != 2 || people[0] != people[1] {
		t.Fatalf("persons %v: the two threads must resolve to one person", people)
	}
	person, _ := book.Person(people[0])
	if len(person.Cards) != 2 || person.Name == "" {
		t.Errorf("person %+v: the Android card and the address-book card must merge", person)
	}
	// The Android participant key equals the iMessage handle exactly.
	aConv := android.ConversationID([]string{"+14155550123"})
	for _, c := range convs {
		if c.Source == model.SourceAndroid && (c.ID != aConv || c.Identifier != imsg.convs[0].Identifier) {
			t.Errorf("android thread %+v", c)
		}
	}
	// The Android contact names the iMessage thread too once loaded.
	if _, err := ix.LoadContacts(ctx, Key, androidCards); err != nil {
		t.Fatal(err)
	}
	c, err := ix.Conversation(ctx, "iMessage;-;+14155550123")
	if err != nil || c.Label != "Alice M. Martin" {
		t.Errorf("iMessage thread label %q (%v), want the Android contact name", c.Label, err)
	}
	// A search by contact covers both sources.
	res, err := ix.Search(ctx, index.Query{Text: "harbour", Contact: "Alice", Mode: index.ModeFulltext})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Source != model.SourceIMessage {
		t.Errorf("search by contact: %v %+v", err, res)
	}
	res, err = ix.Search(ctx, index.Query{Text: "terrace", Contact: "+1 (415) 555-0123", Mode: index.ModeFulltext})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Source != model.SourceAndroid {
		t.Errorf("search by contact phone: %v %+v", err, res)
	}
}

// fakeChatDB serves fixed iMessage rows through index.RowReader.
type fakeChatDB struct {
	convs []model.Conversation
	msgs  []model.Message
}

func (f *fakeChatDB) Conversations(context.Context) ([]model.Conversation, error) {
	return f.convs, nil
}

func (f *fakeChatDB) Messages(_ context.Context, after int64, fn func(model.Message) error) error {
	for _, m := range f.msgs {
		if m.RowID > after {
			if err := fn(m); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fakeChatDB) Changed(context.Context, time.Time, func(model.Message) error) error {
	return errors.ErrUnsupported
}

func (f *fakeChatDB) Deleted(context.Context, int64, func(int64, string) error) error {
	return errors.ErrUnsupported
}

// TestContactsFromWatermark: contact names of an unchanged file come from
// the watermark, so `tidings index` on an unchanged export reads only its
// fingerprint; a file the watermark does not cover gets a metadata pass.
func TestContactsFromWatermark(t *testing.T) {
	ctx := context.Background()
	ix := openIndex(t)
	full, a := fixture("full.xml"), fixture("overlap-a.xml")
	first := New([]string{full}, region)
	mustSync(t, ix, first)
	want := mustContacts(t, first)
	if len(want) != 6 { // four 1:1 names and two people named only by the group's list
		t.Fatalf("%d cards", len(want))
	}

	second := New([]string{full, a}, region)
	var passes []string
	second.readContacts = func(ctx context.Context, path, region string) ([]model.Contact, error) {
		passes = append(passes, filepath.Base(path))
		return android.ReadContacts(ctx, path, region)
	}
	// Before any sync in this process, every file needs a pass.
	if _, err := second.Contacts(ctx); err != nil || len(passes) != 2 {
		t.Fatalf("passes %v, err %v", passes, err)
	}
	passes = nil
	mustSync(t, ix, second) // full.xml unchanged (names from the watermark), overlap-a.xml read
	got := mustContacts(t, second)
	if len(passes) != 0 {
		t.Errorf("metadata passes %v after a sync: names must come from the sync and the watermark", passes)
	}
	ids := func(cs []model.Contact) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID+"="+c.FullName)
		}
		return out
	}
	for _, w := range ids(want) {
		if !slices.Contains(ids(got), w) {
			t.Errorf("card %s missing from %v", w, ids(got))
		}
	}
	// overlap-a names her "Carol" in September; full.xml's group list
	// names her "Carol Diaz" in November: the newest name wins.
	if !slices.Contains(ids(got), "android:+12125550111=Carol Diaz") {
		t.Errorf("Carol's newest name missing: %v", ids(got))
	}
}

// TestOlderExportKeepsNames pins docs/android.md "Contact names": a name
// the index learnt from one export survives a later import of another —
// an older or shorter export where that person is "(Unknown)", a raw
// number, or absent — whether the first file is still configured or not.
func TestOlderExportKeepsNames(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		head := `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>` + "\n<smses count=\"2\">\n"
		if err := os.WriteFile(p, []byte(head+body+"</smses>\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := write("full.xml", `<sms address="+19255550127" date="1776913200000" type="1" body="practice moved" read="1" contact_name="Coach Dev Anand" />
<sms address="+15035550133" date="1776913300000" type="1" body="call me" read="1" contact_name="Aunt Linda" />
<sms address="+14155550188" date="1776913400000" type="1" body="only here" read="1" contact_name="Kofi Mensah" />
`)
	older := write("older.xml", `<sms address="(925) 555-0127" date="1770080400000" type="1" body="first practice" read="1" contact_name="(Unknown)" />
<sms address="+15035550133" date="1770080500000" type="1" body="hi" read="1" contact_name="5035550133" />
`)
	names := func(cards []model.Contact) map[string]string {
		out := map[string]string{}
		for _, c := range cards {
			out[c.ID] = c.FullName
		}
		return out
	}
	want := map[string]string{"android:+19255550127": "Coach Dev Anand", "android:+15035550133": "Aunt Linda", "android:+14155550188": "Kofi Mensah"}
	for _, paths := range [][]string{{older}, {full, older}, {older, full}} {
		ix := openIndex(t)
		mustSync(t, ix, New([]string{full}, region))
		src := New(paths, region)
		mustSync(t, ix, src)
		if got := names(mustContacts(t, src)); !maps.Equal(got, want) {
			t.Errorf("full.xml, then %d file(s): names %v, want %v", len(paths), got, want)
		}
	}
}
