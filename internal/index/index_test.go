package index

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

func TestOpenCreatesPrivateFiles(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "home", "tidings")
	ix := openTest(t, dir, Options{})
	mustSync(t, ix, smallCorpus().source(nil))
	for _, p := range []string{dir} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("%s: mode %o, want 700", p, got)
		}
	}
	for _, p := range []string{"index.db", "index.db-wal", "index.db-shm"} {
		fi, err := os.Stat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s: mode %o, want 600", p, got)
		}
	}
	var v int
	if err := ix.rdb.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(migrations) {
		t.Errorf("user_version = %d, %v; want %d", v, err, len(migrations))
	}
	var mode string
	if err := ix.wdb.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir, Options{})
	if _, err := ix.wdb.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	_, err := Open(context.Background(), filepath.Join(dir, "index.db"), Options{})
	if err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Fatalf("Open on a newer schema: %v, want a refusal", err)
	}
}

func TestIncrementalSync(t *testing.T) {
	db := smallCorpus()
	ix := openTest(t, t.TempDir(), Options{})
	rep := mustSync(t, ix, db.source(nil))
	if got := rep.Sources[0].Added; got != 10 || !rep.Bulk {
		t.Fatalf("first sync added %d (bulk %v), want 10 (bulk)", got, rep.Bulk)
	}
	rep = mustSync(t, ix, db.source(nil))
	if s := rep.Sources[0]; s.Added != 0 || s.Updated != 0 || rep.Bulk {
		t.Fatalf("second sync: %+v bulk=%v, want nothing new", s, rep.Bulk)
	}
	db.add(model.Message{ID: "m11", ConversationIDs: []string{"iMessage;-;zoe@example.com"}, Sender: "zoe@example.com",
		Time: testNow.Add(-time.Hour), Text: "new sourdough starter arrived"})
	rep = mustSync(t, ix, db.source(nil))
	if s := rep.Sources[0]; s.Added != 1 {
		t.Fatalf("third sync: %+v, want 1 added", s)
	}
	r := mustSearch(t, ix, Query{Text: "sourdough", Mode: ModeFulltext})
	if got := hitIDs(r); !slices.Equal(got, []string{"m11"}) {
		t.Fatalf("search new message: %v", got)
	}
	// The watermark is stored with the rows.
	var wm []byte
	if err := ix.rdb.QueryRow("SELECT watermark FROM sources").Scan(&wm); err != nil || !bytes.Contains(wm, []byte(`"rowid":11`)) {
		t.Fatalf("watermark %s, %v", wm, err)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestEditsRetractionsDeletionsReactions(t *testing.T) {
	db := smallCorpus()
	clock := testNow
	ix := openTest(t, t.TempDir(), Options{Now: func() time.Time { return clock }})
	src := db.source(func() time.Time { return clock })
	mustSync(t, ix, src)
	ctx := context.Background()

	// Reactions: add, replace by the same sender, remove; another sender's stays.
	react := func(id, sender string, typ model.ReactionType, removed bool) {
		db.add(model.Message{ID: id, ConversationIDs: []string{"iMessage;-;+14155550101"}, Sender: sender, FromMe: sender == "",
			Kind: model.MsgReaction, Time: clock, Text: "Loved …", Reaction: &model.Reaction{Target: "m3", Type: typ, Removed: removed}})
		clock = clock.Add(time.Second)
	}
	react("r1", "+14155550101", model.ReactLove, false)
	react("r2", "", model.ReactLike, false)
	react("r3", "+14155550101", model.ReactLaugh, false) // replaces r1
	mustSync(t, ix, src)
	h, err := ix.History(ctx, HistoryQuery{Chat: "iMessage;-;+14155550101"})
	if err != nil {
		t.Fatal(err)
	}
	var m3 Message
	for _, m := range h.Messages {
		if m.ID == "m3" {
			m3 = m
		}
		if m.Kind == model.MsgReaction {
			t.Errorf("reaction %s stored as a message", m.ID)
		}
	}
	var types []string
	for _, r := range m3.Reactions {
		types = append(types, string(r.Type))
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"laugh", "like"}) {
		t.Fatalf("reactions on m3 = %v, want [laugh like]", types)
	}
	react("r4", "", model.ReactLike, true) // my removal
	mustSync(t, ix, src)
	h, _ = ix.History(ctx, HistoryQuery{Chat: "iMessage;-;+14155550101"})
	for _, m := range h.Messages {
		if m.ID == "m3" && (len(m.Reactions) != 1 || m.Reactions[0].Type != model.ReactLaugh) {
			t.Fatalf("after removal: %+v", m.Reactions)
		}
	}

	// Edit: the new text is found, the old is not; history keeps the edits.
	clock = clock.Add(time.Minute)
	db.update("m5", clock, func(m *model.Message) {
		m.Edits = []model.Edit{{Time: m.Time, Text: m.Text}, {Time: clock, Text: "The orthodontist appointment moved to Thursday"}}
		m.Text = "The orthodontist appointment moved to Thursday"
		m.Edited, m.TimeEdited = true, clock
	})
	// Retraction: unsent messages leave search.
	db.update("m7", clock, func(m *model.Message) { m.Text, m.Unsent, m.TimeUnsent = "", true, clock })
	// Deletion.
	db.remove("m1")
	rep := mustSync(t, ix, src)
	if s := rep.Sources[0]; s.Updated != 2 || s.Deleted != 1 {
		t.Fatalf("sync after changes: %+v, want 2 updated, 1 deleted", s)
	}
	for _, c := range []struct {
		q    string
		mode Mode
		want []string
	}{
		{"orthodontist", ModeFulltext, []string{"m5"}},
		{"dentist", ModeFulltext, nil},
		{"dentist", ModeSubstring, nil},
		{"THURS", ModeSubstring, []string{"m5"}},
		{"odontist appoint", ModeSubstring, []string{"m5"}},
		{"chalk", ModeFulltext, nil},
		{"chalk", ModeSubstring, nil},
		{"tix", ModeFulltext, nil},
		{"owe me $40", ModeSubstring, nil},
	} {
		if got := hitIDs(mustSearch(t, ix, Query{Text: c.q, Mode: c.mode})); !slices.Equal(got, c.want) {
			t.Errorf("%s %q = %v, want %v", c.mode, c.q, got, c.want)
		}
	}
	h, _ = ix.History(ctx, HistoryQuery{Chat: "zoe@example.com", DirectOnly: true})
	for _, m := range h.Messages {
		if m.ID == "m5" && (!m.Edited || len(m.Edits) != 2 || m.Edits[0].Text != "The dentist appointment moved to Tuesday") {
			t.Errorf("edited message: %+v", m)
		}
	}
	h, _ = ix.History(ctx, HistoryQuery{Chat: "chat100"})
	for _, m := range h.Messages {
		if m.ID == "m7" && !m.Unsent {
			t.Errorf("m7 not marked unsent: %+v", m)
		}
	}
	h, _ = ix.History(ctx, HistoryQuery{Chat: "+14155550101", DirectOnly: true})
	for _, m := range h.Messages {
		if m.ID == "m1" {
			t.Errorf("deleted message still in history")
		}
	}
	// A deleted reaction message takes its reaction away.
	db.remove("r3")
	mustSync(t, ix, src)
	h, _ = ix.History(ctx, HistoryQuery{Chat: "iMessage;-;+14155550101"})
	for _, m := range h.Messages {
		if m.ID == "m3" && len(m.Reactions) != 0 {
			t.Errorf("reactions after deleting r3: %+v", m.Reactions)
		}
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	// Counters follow: Sam's chat lost m1.
	c, err := ix.Conversation(ctx, "iMessage;-;+14155550101")
	if err != nil || c.MessageCount != 3 {
		t.Fatalf("conversation after deletion: %+v, %v", c, err)
	}
}

func TestMessageInSeveralConversations(t *testing.T) {
	db := smallCorpus()
	db.add(model.Message{ID: "both", ConversationIDs: []string{"iMessage;-;zoe@example.com", "iMessage;+;chat100"},
		Sender: "zoe@example.com", Time: testNow.Add(-time.Minute), Text: "kayak rental confirmed"})
	ix := openTest(t, t.TempDir(), Options{})
	mustSync(t, ix, db.source(nil))
	ctx := context.Background()
	for _, chat := range []string{"iMessage;-;zoe@example.com", "iMessage;+;chat100"} {
		h, err := ix.History(ctx, HistoryQuery{Chat: chat})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range h.Messages {
			if m.ID == "both" {
				found = true
				if m.Conversation.ID != chat {
					t.Errorf("in %s the message shows conversation %s", chat, m.Conversation.ID)
				}
			}
		}
		if !found {
			t.Errorf("message missing from %s", chat)
		}
		r := mustSearch(t, ix, Query{Text: "kayak", Mode: ModeFulltext, ConversationID: chat})
		if got := hitIDs(r); !slices.Equal(got, []string{"both"}) {
			t.Errorf("search in %s: %v", chat, got)
		}
	}
	if r := mustSearch(t, ix, Query{Text: "kayak", Mode: ModeFulltext}); len(r.Hits) != 1 {
		t.Errorf("unfiltered search returned the message %d times", len(r.Hits))
	}
}

// blockPolicy blocks conversations by guid.
type blockPolicy struct{ blocked map[string]bool }

func (p *blockPolicy) AllowConversation(c model.Conversation) bool { return !p.blocked[c.ID] }

func TestPolicyAtIngestionAndQuery(t *testing.T) {
	db := smallCorpus()
	pol := &blockPolicy{blocked: map[string]bool{"iMessage;-;zoe@example.com": true}}
	ix := openTest(t, t.TempDir(), Options{Policy: pol, Embedder: &hashEmbedder{id: "h", dim: 32}})
	rep := mustSync(t, ix, db.source(nil))
	if got := rep.Sources[0].SkippedPolicy; got != 3 {
		t.Fatalf("skipped %d messages, want 3", got)
	}
	var n int
	ix.rdb.QueryRow("SELECT count(*) FROM messages WHERE text LIKE '%dentist%'").Scan(&n)
	if n != 0 {
		t.Fatal("a blocked thread's message entered the index")
	}
	if _, err := ix.Conversation(context.Background(), "zoe@example.com"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("blocked conversation lookup: %v", err)
	}
	// Zoe's group message stays (the group is allowed).
	if r := mustSearch(t, ix, Query{Text: "dinner", Mode: ModeFulltext}); len(r.Hits) != 2 {
		t.Fatalf("dinner: %v", hitTexts(r))
	}
	// Blocking another thread: the next sync purges it.
	pol.blocked["iMessage;+;chat100"] = true
	rep = mustSync(t, ix, db.source(nil))
	if rep.Sources[0].Purged != 1 {
		t.Fatalf("purged %d, want 1", rep.Sources[0].Purged)
	}
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeSemantic, ModeHybrid} {
		if r := mustSearch(t, ix, Query{Text: "climbing chalk", Mode: mode}); slices.Contains(hitIDs(r), "m7") {
			t.Errorf("%s finds a purged message", mode)
		}
	}
	// Query-time check: a policy change hides a thread before any purge.
	pol.blocked["iMessage;-;+14155550101"] = true
	if r := mustSearch(t, ix, Query{Text: "dinner", Mode: ModeHybrid}); len(r.Hits) != 0 {
		t.Fatalf("query-time policy: %v", hitTexts(r))
	}
	if l, _ := ix.ListConversations(context.Background(), ListOptions{}); len(l.Conversations) != 0 {
		t.Fatalf("list shows blocked threads: %+v", l.Conversations)
	}
	if _, err := ix.History(context.Background(), HistoryQuery{Chat: "+14155550101"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("history of a blocked thread: %v", err)
	}
	n, err := ix.ApplyPolicy(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("ApplyPolicy = %d, %v; want 1", n, err)
	}
}

func TestPurgeLeavesNoTrace(t *testing.T) {
	db := smallCorpus()
	const secret = "Zanzibarsecretword"
	grp := "iMessage;+;chat100"
	db.add(model.Message{ID: "s1", ConversationIDs: []string{grp}, Sender: "+14155550199", Time: testNow.Add(-2 * time.Hour),
		Text: "the code is " + secret + " ok", Attachments: []model.Attachment{{ID: "att-secret", RowID: 77, Filename: "secret.jpg", MimeType: "image/jpeg", Path: "/x/secret.jpg"}}})
	db.add(model.Message{ID: "s2", ConversationIDs: []string{grp}, Kind: model.MsgReaction, Sender: "zoe@example.com", Time: testNow.Add(-time.Hour),
		Reaction: &model.Reaction{Target: "s1", Type: model.ReactLove}})
	dir := t.TempDir()
	ix := openTest(t, dir, Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, db.source(nil))
	ctx := context.Background()
	if _, err := ix.wdb.Exec("INSERT INTO dossiers(key, conv, data, updated) SELECT 'k', id, 'Zanzibarsecretword dossier', 0 FROM conversations WHERE guid = ?", grp); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.wdb.Exec("INSERT INTO triage(conv, data, updated) SELECT id, 'Zanzibarsecretword triage', 0 FROM conversations WHERE guid = ?", grp); err != nil {
		t.Fatal(err)
	}
	var vecBefore int
	ix.rdb.QueryRow("SELECT count(*) FROM vectors").Scan(&vecBefore)
	n, err := ix.Purge(ctx, grp)
	if err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v", n, err)
	}
	// No row anywhere refers to the conversation or its messages.
	var conv int
	for _, q := range []string{
		"SELECT count(*) FROM conversations WHERE guid = 'iMessage;+;chat100'",
		"SELECT count(*) FROM messages WHERE guid IN ('m7','m8','m9','s1')",
		"SELECT count(*) FROM reactions",
		"SELECT count(*) FROM attachments",
		"SELECT count(*) FROM dossiers",
		"SELECT count(*) FROM triage",
		"SELECT count(*) FROM terms WHERE term = 'zanzibarsecretword'",
		"SELECT count(*) FROM handles WHERE handle = '+14155550199'",
		"SELECT count(*) FROM fts WHERE fts MATCH 'zanzibarsecretword OR chalk'",
	} {
		if err := ix.rdb.QueryRow(q).Scan(&conv); err != nil || conv != 0 {
			t.Errorf("%s = %d, %v; want 0", q, conv, err)
		}
	}
	// Every table with a conv column is purged by name.
	rows, _ := ix.rdb.Query("SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'conv'")
	for rows.Next() {
		var name string
		rows.Scan(&name)
		if name != "messages" && !slices.Contains(perConversationTables, name) {
			t.Errorf("table %s has a conv column but Purge does not clear it", name)
		}
	}
	rows.Close()
	var vecAfter int
	ix.rdb.QueryRow("SELECT count(*) FROM vectors").Scan(&vecAfter)
	if vecBefore-vecAfter != 4 {
		t.Errorf("vectors %d → %d, want 4 fewer", vecBefore, vecAfter)
	}
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeSemantic, ModeHybrid} {
		for _, q := range []string{secret, "chalk", "running late"} {
			r := mustSearch(t, ix, Query{Text: q, Mode: mode})
			for _, h := range r.Hits {
				if h.Conversation.ID == grp || slices.Contains([]string{"m7", "m8", "m9", "s1"}, h.MessageID) {
					t.Errorf("%s %q finds purged %s", mode, q, h.MessageID)
				}
			}
		}
	}
	if _, err := ix.AttachmentFile(ctx, "77"); !errors.Is(err, ErrNotFound) {
		t.Errorf("purged attachment: %v", err)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	// No trace in the database files themselves.
	ix.Close()
	for _, p := range []string{"index.db", "index.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, s := range []string{secret, strings.ToLower(secret), "secret.jpg", "Bring chalk"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s still contains %q", p, s)
			}
		}
	}
}

func TestSnapshotSourceReimportAddsNothingTwice(t *testing.T) {
	msgs := []model.Message{
		{Source: model.SourceAndroid, ID: "h:aaa", ConversationIDs: []string{"+15550001"}, Sender: "+15550001", Time: testNow.Add(-time.Hour), Text: "parcel delivered", Kind: model.MsgText},
		{Source: model.SourceAndroid, ID: "h:bbb", ConversationIDs: []string{"+15550001"}, FromMe: true, Time: testNow, Text: "thanks!", Kind: model.MsgText},
	}
	fp := "v1"
	src := &SnapshotSource{SourceKey: "android:/x.xml", SourceKind: model.SourceAndroid,
		Fingerprint: func(context.Context) (string, error) { return fp, nil },
		Read: func(ctx context.Context, convs func([]model.Conversation) error, msg func(model.Message) error) error {
			if err := convs([]model.Conversation{{ID: "+15550001", Identifier: "+15550001", Kind: model.KindDirect, Participants: []string{"+15550001"}}}); err != nil {
				return err
			}
			for _, m := range msgs {
				if err := msg(m); err != nil {
					return err
				}
			}
			return nil
		}}
	ix := openTest(t, t.TempDir(), Options{})
	if rep := mustSync(t, ix, src); rep.Sources[0].Added != 2 {
		t.Fatalf("first import: %+v", rep.Sources[0])
	}
	if rep := mustSync(t, ix, src); rep.Sources[0].Added+rep.Sources[0].Unchanged != 0 {
		t.Fatalf("same fingerprint re-read the file: %+v", rep.Sources[0])
	}
	fp = "v2" // a newer export with one more message and the old ones again
	msgs = append(msgs, model.Message{Source: model.SourceAndroid, ID: "h:ccc", ConversationIDs: []string{"+15550001"}, Sender: "+15550001", Time: testNow.Add(time.Minute), Text: "see you", Kind: model.MsgText})
	rep := mustSync(t, ix, src)
	if s := rep.Sources[0]; s.Added != 1 || s.Unchanged != 2 {
		t.Fatalf("re-import: %+v, want 1 added, 2 unchanged", s)
	}
	var n int
	ix.rdb.QueryRow("SELECT count(*) FROM messages").Scan(&n)
	if n != 3 {
		t.Fatalf("%d messages stored, want 3", n)
	}
}

func TestVerifyDetectsDrift(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{})
	mustSync(t, ix, smallCorpus().source(nil))
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.wdb.Exec("UPDATE terms SET df = df + 1 WHERE term = 'dinner'"); err != nil {
		t.Fatal(err)
	}
	if err := ix.Verify(context.Background()); err == nil {
		t.Fatal("Verify missed a wrong document frequency")
	}
}

var _ = sql.ErrNoRows
