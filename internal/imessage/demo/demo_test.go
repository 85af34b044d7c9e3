package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

var testNow = testclock.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)

// generated caches one data set per (n, seed) for the tests that only read.
var generated = map[string]string{}

func dataset(t *testing.T, n int, seed uint64) string {
	t.Helper()
	key := fmt.Sprint(n, "/", seed)
	if dir, ok := generated[key]; ok {
		return dir
	}
	dir, err := os.MkdirTemp("", "tidings-demo-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {})
	if _, err := Generate(context.Background(), Options{Dir: dir, Messages: n, Seed: seed, Now: testNow}); err != nil {
		t.Fatal(err)
	}
	generated[key] = dir
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range generated {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// treeDigest hashes every file under dir (names and contents).
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s %x\n", rel, sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestDemoOutputDependsOnlyOnSeedCountAndNow: the same seed, message count
// and clock give a byte-identical tree, also when regenerated into a used
// folder; another seed gives another chat.db.
func TestDemoOutputDependsOnlyOnSeedCountAndNow(t *testing.T) {
	a := dataset(t, 3000, 7)
	b := t.TempDir()
	if _, err := Generate(context.Background(), Options{Dir: b, Messages: 3000, Seed: 7, Now: testNow}); err != nil {
		t.Fatal(err)
	}
	if da, db := treeDigest(t, a), treeDigest(t, b); da != db {
		t.Fatalf("same seed, count and now gave different output:\n%s\n%s", da, db)
	}
	c := dataset(t, 3000, 8)
	ca, _ := os.ReadFile(filepath.Join(a, "chat.db"))
	cc, _ := os.ReadFile(filepath.Join(c, "chat.db"))
	if bytes.Equal(ca, cc) {
		t.Error("a different seed gave the same chat.db")
	}
	// Regenerating into a used folder replaces everything.
	if _, err := Generate(context.Background(), Options{Dir: b, Messages: 3000, Seed: 7, Now: testNow}); err != nil {
		t.Fatal(err)
	}
	if da, db := treeDigest(t, a), treeDigest(t, b); da != db {
		t.Fatal("regenerating into the same folder changed the output")
	}
}

func TestSchemaIsMacOS15(t *testing.T) {
	dir := dataset(t, 3000, 1)
	got := schemaObjects(t, filepath.Join(dir, "chat.db"))
	ref := filepath.Join(t.TempDir(), "ref.db")
	ddl, err := schemas.Tables("macos15")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ddl); err != nil {
		t.Fatal(err)
	}
	db.Close()
	want := schemaObjects(t, ref)
	if !slices.Equal(got, want) {
		t.Errorf("demo schema differs from the macOS 15 dump:\n got %d objects\nwant %d objects", len(got), len(want))
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("missing: %.120s", w)
			}
		}
	}
}

func schemaObjects(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT type || ' ' || name || ' ' || COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	space := regexp.MustCompile(`\s+`)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, space.ReplaceAllString(s, " "))
	}
	return out
}

// TestReadBack reads the demo through the real reader: every row, every
// body decoded, and each storyline exactly as scripted.
func TestReadBack(t *testing.T) {
	const n = 6000
	dir := dataset(t, n, 1)
	ctx := context.Background()
	r, err := imessage.Open(ctx, filepath.Join(dir, "chat.db"), imessage.Options{Home: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Capabilities().JournalMode != "wal" {
		t.Errorf("journal mode %q, want wal like a live chat.db", r.Capabilities().JournalMode)
	}
	convs, err := r.Conversations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	convByID := map[string]model.Conversation{}
	for _, c := range convs {
		convByID[c.ID] = c
	}
	if len(convs) != len(people)+1+len(groups) {
		t.Errorf("%d conversations", len(convs))
	}
	for _, g := range groups {
		c := convByID[threadGUID("g:"+g.key)]
		if c.Kind != model.KindGroup || c.DisplayName != g.name || len(c.Participants) != len(g.members) {
			t.Errorf("group %s read as %+v", g.key, c)
		}
	}
	if c := convByID[threadGUID("p:lea")]; c.Kind != model.KindDirect || !slices.Equal(c.Participants, []string{"+33639981234"}) {
		t.Errorf("Léa's chat: %+v", c)
	}

	msgs := map[string]model.Message{}
	kinds := map[string]int{}
	count, undecodable := 0, 0
	var last int64
	err = r.Messages(ctx, 0, func(m model.Message) error {
		count++
		if m.RowID != last+1 {
			return fmt.Errorf("rowid %d after %d", m.RowID, last)
		}
		last = m.RowID
		if m.TextSource == imessage.TextUndecodable {
			undecodable++
		}
		if m.Time.After(testNow) || m.Time.Before(testNow.AddDate(-2, 0, -5)) {
			return fmt.Errorf("%s at %v, outside the two years before now", m.ID, m.Time)
		}
		kinds[string(m.Kind)]++
		switch {
		case m.Edited:
			kinds["edited"]++
		case m.Unsent:
			kinds["unsent"]++
		case m.Error != 0:
			kinds["failed"]++
		case len(m.Attachments) > 0:
			kinds["attachment"]++
		case m.ReplyTo != "":
			kinds["reply"]++
		case len(m.ConversationIDs) == 0:
			kinds["orphan"]++
		}
		for _, run := range m.Runs {
			switch {
			case run.OneTimeCode:
				kinds["otc"]++
			case run.Mention != "":
				kinds["mention"]++
			case run.Link != "":
				kinds["link"]++
			}
		}
		msgs[m.ID] = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count != n || undecodable != 0 {
		t.Fatalf("read %d messages (want %d), %d undecodable", count, n, undecodable)
	}
	for _, k := range []string{"text", "reaction", "group_event", "app", "edited", "unsent", "failed", "attachment", "reply", "orphan", "otc", "mention", "link"} {
		if kinds[k] == 0 {
			t.Errorf("no %s messages in the demo (kinds: %v)", k, kinds)
		}
	}
	t.Logf("kinds: %v", kinds)

	for _, s := range Stories(testNow) {
		for _, sm := range s.Messages {
			m, ok := msgs[sm.GUID]
			if !ok {
				t.Errorf("story %s: message %s missing", s.ID, sm.GUID)
				continue
			}
			if m.Text != sm.Text && sm.Kind != "reaction" {
				t.Errorf("story %s: text %q, want %q", s.ID, m.Text, sm.Text)
			}
			if !m.Time.Equal(sm.Time) {
				t.Errorf("story %s: time %v, want %v", s.ID, m.Time, sm.Time)
			}
			if m.RecentlyDeleted {
				continue
			}
			if !slices.Contains(m.ConversationIDs, s.Conversation) {
				t.Errorf("story %s: %s in %v, want %s", s.ID, sm.GUID, m.ConversationIDs, s.Conversation)
			}
		}
	}
	story := func(id, key string) model.Message { return msgs[storyGUID(id, key)] }
	if m := story("thursday-dinner", "booked"); !m.Edited || len(m.Edits) != 2 || !strings.Contains(m.Edits[0].Text, "7:30") || !strings.Contains(m.Text, "8:00") {
		t.Errorf("edited booking: %+v", m)
	}
	if m := story("thursday-dinner", "bring"); m.ReplyTo != storyGUID("thursday-dinner", "book") {
		t.Errorf("reply: %+v", m)
	}
	if m := story("sam-owes-40", "love"); m.Kind != model.MsgReaction || m.Reaction.Target != storyGUID("sam-owes-40", "paid") || m.Reaction.Type != model.ReactLove {
		t.Errorf("tapback: %+v", m.Reaction)
	}
	if m := story("lisbon-trip", "flag"); m.Reaction == nil || m.Reaction.Type != model.ReactEmoji || m.Reaction.Emoji != "🇵🇹" {
		t.Errorf("emoji tapback: %+v", m.Reaction)
	}
	if m := story("lisbon-trip", "sticker"); m.Reaction == nil || m.Reaction.Type != model.ReactSticker || len(m.Attachments) != 1 || !m.Attachments[0].Sticker {
		t.Errorf("sticker tapback: %+v", m)
	}
	if m := story("lisbon-trip", "oops"); !m.Unsent || m.Text != "" {
		t.Errorf("unsent: %+v", m)
	}
	if m := story("lisbon-trip", "added"); m.GroupEvent == nil || m.GroupEvent.Type != model.GroupMemberAdded || m.GroupEvent.Other != "+33639981234" || !m.FromMe {
		t.Errorf("member added: %+v", m)
	}
	if m := story("lisbon-trip", "rename"); m.GroupEvent == nil || m.GroupEvent.Title != "Lisbon trip 🇵🇹" {
		t.Errorf("rename: %+v", m)
	}
	if m := story("lisbon-trip", "askbook"); len(m.Runs) < 1 || m.Runs[0].Mention != "+14155550134" {
		t.Errorf("mention: %+v", m.Runs)
	}
	if m := story("lisbon-trip", "bookedflights"); m.Effect != "com.apple.messages.effect.CKConfettiEffect" {
		t.Errorf("effect: %q", m.Effect)
	}
	if m := story("two-factor", "code"); len(m.Runs) != 3 || !m.Runs[1].OneTimeCode || m.Text[m.Runs[1].Start:m.Runs[1].End] != "482913" {
		t.Errorf("one-time code: %+v", m.Runs)
	}
	if m := story("failed-send", "late-failed"); m.Error == 0 || m.IsSent {
		t.Errorf("failed send: %+v", m)
	}
	if m := story("emma-birthday", "vent"); !m.RecentlyDeleted || !slices.Equal(m.ConversationIDs, []string{threadGUID("p:emma")}) {
		t.Errorf("recently deleted: %+v", m)
	}
	if m := story("mom-questions", "sunday"); len(m.ConversationIDs) != 2 {
		t.Errorf("message in two chats: %v", m.ConversationIDs)
	}
	if m := story("landlord-sink", "lease"); m.IsRead || m.Service != "SMS" || m.Sender != "+14155550171" {
		t.Errorf("unread SMS from the landlord: %+v", m)
	}

	// Attachments resolve to real image files in the demo folder.
	photo := story("landlord-sink", "photo")
	if len(photo.Attachments) != 1 || photo.Text != "\ufffc" || len(photo.Runs) != 1 || photo.Runs[0].AttachmentID != photo.Attachments[0].ID {
		t.Fatalf("photo message: %+v", photo)
	}
	a, err := r.Attachment(ctx, photo.Attachments[0].RowID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Filename != "IMG_4512.jpeg" || a.MimeType != "image/jpeg" || !strings.HasPrefix(a.Path, dir) {
		t.Errorf("attachment %+v", a)
	}
	f, err := os.Open(a.Path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, format, err := image.DecodeConfig(f)
	f.Close()
	if err != nil || format != "jpeg" || cfg.Width == 0 {
		t.Errorf("attachment file is not a JPEG: %v %s", err, format)
	}
	if st, _ := os.Stat(a.Path); st == nil || st.Size() != a.Size {
		t.Errorf("attachment size %d vs file %v", a.Size, st)
	}
}

// TestRecentReplies: near "now" only the storylines leave a conversation
// waiting on the owner, so triage evaluations have exact ground truth.
func TestRecentReplies(t *testing.T) {
	dir := dataset(t, 6000, 1)
	ctx := context.Background()
	r, err := imessage.Open(ctx, filepath.Join(dir, "chat.db"), imessage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lastIn := map[string]model.Message{} // conversation → its latest non-reaction message
	since := testNow.AddDate(0, 0, -10)
	r.Messages(ctx, 0, func(m model.Message) error {
		if m.Time.Before(since) || m.Kind == model.MsgReaction || m.Kind == model.MsgGroupEvent || m.RecentlyDeleted {
			return nil
		}
		for _, c := range m.ConversationIDs {
			if prev, ok := lastIn[c]; !ok || !m.Time.Before(prev.Time) {
				lastIn[c] = m
			}
		}
		return nil
	})
	want := map[string]bool{}
	for _, s := range Stories(testNow) {
		if s.NeedsReply {
			want[s.Conversation] = true
			if last := lastIn[s.Conversation]; !slices.Contains(s.Awaiting, last.ID) {
				t.Errorf("story %s: last message %s is not one it awaits", s.ID, last.ID)
			}
		}
	}
	automated := map[string]bool{}
	for _, p := range people {
		if p.Role == "automated" || p.Key == "dentist" {
			automated[threadGUID("p:"+p.Key)] = true
		}
	}
	for c, m := range lastIn {
		waiting := !m.FromMe
		if waiting && !want[c] && !automated[c] {
			t.Errorf("%s waits on the owner (%q) but no storyline says so", c, m.Text)
		}
		if !waiting && want[c] {
			t.Errorf("%s: storyline awaits a reply but the owner wrote last", c)
		}
	}
}

func TestContactsVCard(t *testing.T) {
	dir := dataset(t, 3000, 1)
	data, err := os.ReadFile(filepath.Join(dir, "contacts.vcf"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if strings.Count(s, "BEGIN:VCARD\r\n") != strings.Count(s, "END:VCARD\r\n") || strings.Count(s, "VERSION:3.0\r\n") < 30 {
		t.Errorf("malformed vCards")
	}
	if strings.Count(s, "FN:Lukas Becker\r\n") != 2 {
		t.Error("Lukas should have two cards")
	}
	for _, want := range []string{"TEL;TYPE=CELL,VOICE:+33 6 39 98 12 34", "TEL;TYPE=CELL,VOICE:+49 30 23125467", "TEL;TYPE=CELL,VOICE:+49 (0)30 23125 467",
		"NICKNAME:Mom", "FN:Léa Martin", "EMAIL;TYPE=INTERNET:priya.shah@northwind.example"} {
		if !strings.Contains(s, want+"\r\n") {
			t.Errorf("contacts.vcf lacks %q", want)
		}
	}
	if strings.Contains(s, "32665") {
		t.Error("short codes must not have cards")
	}
}

func TestStoriesStable(t *testing.T) {
	a, b := Stories(testNow), Stories(testNow.AddDate(0, 3, 11))
	seen := map[string]bool{}
	for i := range a {
		if a[i].ID != b[i].ID || len(a[i].Messages) != len(b[i].Messages) {
			t.Fatalf("story %d differs between nows", i)
		}
		for j := range a[i].Messages {
			g := a[i].Messages[j].GUID
			if g != b[i].Messages[j].GUID {
				t.Errorf("guid of %s/%d depends on now", a[i].ID, j)
			}
			if seen[g] {
				t.Errorf("duplicate guid %s", g)
			}
			seen[g] = true
			if a[i].Messages[j].Time.After(testNow) {
				t.Errorf("%s/%d is in the future", a[i].ID, j)
			}
		}
		for _, f := range a[i].Facts {
			for _, e := range f.Evidence {
				if !seen[e] {
					t.Errorf("fact %q cites %s, not a message of the story", f.Text, e)
				}
			}
		}
	}
	if got := storyGUID("sam-owes-40", "owe"); got != "AF0C0C8C-35A4-98F0-0B98-2E1A8E5A61E4" && len(got) != 36 {
		t.Errorf("guid format %q", got)
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, o := range []Options{{Dir: t.TempDir(), Messages: 10}, {Dir: t.TempDir(), Messages: MaxMessages + 1}, {Messages: 5000}} {
		if _, err := Generate(context.Background(), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	// A folder with other content (a real Messages folder) is refused and
	// left untouched.
	real := t.TempDir()
	os.WriteFile(filepath.Join(real, "chat.db"), []byte("precious"), 0o600)
	os.MkdirAll(filepath.Join(real, "Attachments", "ab"), 0o700)
	if _, err := Generate(context.Background(), Options{Dir: real, Messages: 5000, Now: testNow}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-demo folder: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(real, "chat.db")); string(b) != "precious" {
		t.Error("a non-demo chat.db was touched")
	}
	if _, err := os.Stat(filepath.Join(real, "Attachments", "ab")); err != nil {
		t.Error("a non-demo Attachments folder was touched")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if _, err := Generate(ctx, Options{Dir: dir, Messages: 5000, Now: testNow}); err == nil {
		t.Error("cancelled context accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "chat.db")); err == nil {
		t.Error("a cancelled run left a chat.db")
	}
}
