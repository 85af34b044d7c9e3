package demo

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"howett.net/plist"
	_ "modernc.org/sqlite" // the project's SQLite driver

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
	"github.com/tidings-mcp/tidings/internal/imessage/typedstream"
)

// outMsg is one message about to be written.
type outMsg struct {
	th   *thread
	guid string
	from string // "me" or a person key
	t    time.Time
	text string
	runs []typedstream.Run

	failed, unread  bool
	effect, balloon string
	assocGUID       string
	assocType       int
	assocEmoji      string
	assocLen        int
	threadGUID      string
	threadPart      string
	edits           []string // earlier versions, oldest first
	editAt          time.Time
	unsent          bool
	event           *eventSpec
	photo           string // attachment file name
	audio           bool   // a voice note (Audio Message.caf)
	transcript      string // the voice note's transcript, if any
	cloud           bool   // the photo's file is not on disk (iCloud)
	sticker         bool
	alsoIn          *thread
	deleted         bool
	orphan          bool
}

// gen holds the generator's state. Nothing grows with the message count
// except the rows on disk.
type gen struct {
	ctx    context.Context
	db     *sql.DB
	tx     *sql.Tx
	r      *rand.Rand
	now    time.Time
	dir    string
	stmts  map[string]*sql.Stmt
	thr    []*thread
	byKey  map[string]*thread
	msgID  int64
	attID  int64
	nAtt   int
	photos [][]byte
	stick  [][]byte

	pending []pendingRow      // rows of the day being prepared (producer side)
	bodies  map[string][]byte // encoded plain bodies by text (producer side)
	batches map[string]*batch // rows waiting for a multi-row INSERT (consumer side)

	plainSummary []byte
	literals     *strings.Replacer
	account      string
	accountGUID  string
}

func newGen(ctx context.Context, path, dir string, now time.Time, seed uint64) (*gen, error) {
	// synchronous=OFF and no rollback journal apply to this generated file
	// only: a failed or interrupted run leaves a .tmp file that is deleted.
	db, err := sql.Open("sqlite", path+"?_pragma=synchronous(OFF)&_pragma=journal_mode(OFF)&_pragma=cache_size(-65536)&_pragma=temp_store(MEMORY)&_pragma=threads(2)&_pragma=locking_mode(EXCLUSIVE)")
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	db.SetMaxOpenConns(1)
	g := &gen{ctx: ctx, db: db, r: rand.New(rand.NewPCG(seed, 0x74696469_6e677321)), now: now, dir: dir,
		stmts: map[string]*sql.Stmt{}, byKey: map[string]*thread{}, batches: map[string]*batch{}, bodies: map[string][]byte{}}
	// Indexes exist from the start, as in a real chat.db. Rows arrive in
	// time order and every index of the schema is keyed so that they land
	// at the end of a few key ranges; maintaining them while inserting
	// measured cheaper at 1M rows (and lighter on memory) than building 24
	// indexes afterwards, each a scan of the whole message table.
	// The real macOS 15 schema, tables and indexes exactly as dumped;
	// triggers are left out: they call functions only Messages.app
	// registers, and the demo never deletes.
	ddl, err := schemas.Tables("macos15")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("demo: %w", err)
	}
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		db.Close()
		return nil, fmt.Errorf("demo: create schema: %w", err)
	}
	for i := 0; i < 24; i++ {
		g.photos = append(g.photos, renderPhoto(i))
	}
	for i := 0; i < 4; i++ {
		g.stick = append(g.stick, renderSticker(i))
	}
	g.plainSummary, err = plist.Marshal(map[string]any{"amc": 0, "ust": true}, plist.BinaryFormat)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("demo: %w", err)
	}
	g.account = "E:" + Owner.Email
	g.accountGUID = uuidString(sha1Bytes("tidings-demo-account")[:16])
	g.literals = strings.NewReplacer("ACCOUNT_GUID", sqlQuote(g.accountGUID), "ACCOUNT", sqlQuote(g.account), "CALLER_ID", sqlQuote(Owner.Phone))
	return g, nil
}

func (g *gen) close() error {
	for _, s := range g.stmts {
		s.Close()
	}
	if g.tx != nil {
		g.tx.Rollback()
	}
	return g.db.Close()
}

var insertSQL = map[string]string{
	"handle": "INSERT INTO handle (ROWID, id, country, service, uncanonicalized_id, person_centric_id) VALUES (?, ?, ?, ?, NULL, NULL)",
	"chat": `INSERT INTO chat (ROWID, guid, style, state, account_id, chat_identifier, service_name, room_name, account_login,
		is_archived, last_addressed_handle, display_name, group_id, is_filtered, successful_query, last_read_message_timestamp)
		VALUES (?, ?, ?, 3, ?, ?, ?, ?, ?, 0, ?, ?, ?, 0, 1, 0)`,
	"chj": "INSERT INTO chat_handle_join (chat_id, handle_id) VALUES (?, ?)",
	"msg": `INSERT INTO message (ROWID, guid, text, handle_id, attributedBody, service, account, account_guid, error, date,
		date_read, date_delivered, is_delivered, is_finished, is_from_me, is_read, is_sent, cache_has_attachments,
		cache_roomnames, item_type, other_handle, group_title, group_action_type, associated_message_guid,
		associated_message_type, associated_message_emoji, associated_message_range_location, associated_message_range_length,
		balloon_bundle_id, expressive_send_style_id, thread_originator_guid, thread_originator_part, message_summary_info,
		date_edited, date_retracted, destination_caller_id, part_count, was_data_detected, has_dd_results)
		VALUES (?, ?, NULL, ?, ?, ?, ACCOUNT, ACCOUNT_GUID, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, CALLER_ID, ?, 1, ?)`,
	"cmj":   "INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES (?, ?, ?)",
	"att":   `INSERT INTO attachment (ROWID, guid, created_date, start_date, filename, uti, mime_type, transfer_state, is_outgoing, transfer_name, total_bytes, is_sticker, original_guid) VALUES (?, ?, ?, 0, ?, ?, ?, 5, ?, ?, ?, ?, ?)`,
	"maj":   "INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (?, ?)",
	"recov": "INSERT INTO chat_recoverable_message_join (chat_id, message_id, delete_date, ck_sync_state) VALUES (?, ?, ?, 0)",
	"prop":  "INSERT INTO _SqliteDatabaseProperties (key, value) VALUES (?, ?)",
}

func (g *gen) exec(name string, args ...any) error {
	st, ok := g.stmts[name]
	if !ok {
		var err error
		st, err = g.tx.PrepareContext(g.ctx, insertSQL[name])
		if err != nil {
			return fmt.Errorf("demo: prepare %s: %w", name, err)
		}
		g.stmts[name] = st
	}
	if _, err := st.ExecContext(g.ctx, args...); err != nil {
		return fmt.Errorf("demo: insert %s: %w", name, err)
	}
	return nil
}

// pendingRow is a row waiting to be inserted.
type pendingRow struct {
	table string
	args  []any
}

// queue records a row for the inserting goroutine; it never fails (the
// error return keeps write's call sites uniform).
func (g *gen) queue(table string, args ...any) error {
	g.pending = append(g.pending, pendingRow{table, args})
	return nil
}

// batchRows is the number of rows per multi-row INSERT: one statement
// execution per 16 rows cuts the per-call cost of database/sql and SQLite.
const batchRows = 16

type batch struct {
	rows int
	args []any
}

// add buffers a row and inserts a full batch.
func (g *gen) add(r pendingRow) error {
	b := g.batches[r.table]
	if b == nil {
		b = &batch{}
		g.batches[r.table] = b
	}
	b.args = append(b.args, r.args...)
	b.rows++
	if b.rows == batchRows {
		return g.flush(r.table, b)
	}
	return nil
}

// flushAll inserts every buffered row, in a fixed table order.
func (g *gen) flushAll() error {
	for _, t := range []string{"att", "msg", "maj", "cmj", "recov"} {
		if b := g.batches[t]; b != nil && b.rows > 0 {
			if err := g.flush(t, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gen) flush(table string, b *batch) error {
	key := table + "/" + strconv.Itoa(b.rows)
	st, ok := g.stmts[key]
	if !ok {
		// Values shared by every row (the owner's account) are literals:
		// binding them a million times costs more than the rows' own data.
		head, tuple, _ := strings.Cut(g.literals.Replace(insertSQL[table]), "VALUES")
		tuple = strings.TrimSpace(tuple)
		q := head + "VALUES " + strings.Repeat(tuple+", ", b.rows-1) + tuple
		var err error
		if st, err = g.tx.PrepareContext(g.ctx, q); err != nil {
			return fmt.Errorf("demo: prepare %s: %w", key, err)
		}
		g.stmts[key] = st
	}
	if _, err := st.ExecContext(g.ctx, b.args...); err != nil {
		return fmt.Errorf("demo: insert %s: %w", table, err)
	}
	b.rows, b.args = 0, b.args[:0]
	return nil
}

// commitEvery is the number of messages per transaction.
const commitEvery = 100_000

// commit ends the current transaction and starts the next one; prepared
// statements belong to a transaction, so they are prepared again.
func (g *gen) commit(ctx context.Context) error {
	if err := g.flushAll(); err != nil {
		return err
	}
	for _, s := range g.stmts {
		s.Close()
	}
	g.stmts = map[string]*sql.Stmt{}
	if err := g.tx.Commit(); err != nil {
		return fmt.Errorf("demo: commit: %w", err)
	}
	var err error
	if g.tx, err = g.db.BeginTx(ctx, nil); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// run writes everything in large transactions, then builds the indexes and
// switches the file to WAL like a live chat.db.
func (g *gen) run(ctx context.Context, total int) (*Result, error) {
	var err error
	if g.tx, err = g.db.BeginTx(ctx, nil); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	for _, kv := range [][2]string{{"_ClientVersion", "18020"}, {"counter_in_all", "0"}, {"counter_out_all", "0"},
		{"counter_in_lifetime", "0"}, {"counter_out_lifetime", "0"}, {"counter_last_reset", "0"}} {
		if err := g.exec("prop", kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	if err := g.setupThreads(); err != nil {
		return nil, err
	}
	specs := storySpecs(g.now)
	storyByDay := map[int][]*outMsg{}
	storyCount := 0
	today := midnight(g.now)
	const days = 730
	start := today.AddDate(0, 0, -days)
	for _, s := range specs {
		msgs, err := g.storyMessages(s)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			d := int(midnight(m.t).Sub(start).Hours()/24 + 0.5)
			storyByDay[d] = append(storyByDay[d], m)
			storyCount++
		}
	}
	fillerDays := days - 3
	quotas := dayQuotas(fillerDays, total-storyCount, start.Weekday())
	storyWindow := days - 22 // no filler in storyline threads after this day
	// One goroutine prepares rows (text, bodies, plists, files: everything
	// that draws from the RNG, so the output stays deterministic) while this
	// one inserts them; on two cores that overlaps most of the work.
	type day struct {
		rows []pendingRow
		msgs int64
	}
	days_ := make(chan day, 8)
	prodErr := make(chan error, 1)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(days_)
		for d := 0; d <= days; d++ {
			if err := pctx.Err(); err != nil {
				prodErr <- err
				return
			}
			var evs []*outMsg
			if d < fillerDays {
				evs = g.fillerDay(start.AddDate(0, 0, d), quotas[d], d >= storyWindow, d >= days-14)
				if d == 40 && len(evs) > 0 {
					evs[0].orphan = true // a message in no chat, as real databases have
				}
			}
			evs = append(evs, storyByDay[d]...)
			sortEvents(evs)
			before := g.msgID
			g.pending = nil
			for _, m := range evs {
				if err := g.write(m); err != nil {
					prodErr <- err
					return
				}
			}
			select {
			case days_ <- day{g.pending, g.msgID - before}:
			case <-pctx.Done():
				prodErr <- pctx.Err()
				return
			}
		}
		prodErr <- nil
	}()
	var written, committed int64
	var insErr error
	for dy := range days_ {
		if insErr != nil {
			continue // drain so the producer can finish
		}
		for _, r := range dy.rows {
			if insErr = g.add(r); insErr != nil {
				cancel()
				break
			}
		}
		written += dy.msgs
		if insErr == nil && written-committed >= commitEvery {
			// Committing in chunks keeps the dirty set inside the page
			// cache (no spilling and re-reading) on large runs.
			if insErr = g.commit(ctx); insErr != nil {
				cancel()
			}
			committed = written
		}
	}
	// An insert error cancels the producer; report the cause, not the
	// cancellation.
	if err := <-prodErr; insErr == nil && err != nil {
		return nil, err
	}
	if insErr != nil {
		return nil, insErr
	}
	if err := g.flushAll(); err != nil {
		return nil, err
	}
	for _, s := range g.stmts {
		s.Close()
	}
	g.stmts = map[string]*sql.Stmt{}
	if err := g.tx.Commit(); err != nil {
		return nil, fmt.Errorf("demo: commit: %w", err)
	}
	g.tx = nil
	// Messages keeps chat.db in WAL mode; so does the demo, so readers take
	// the same path as on a Mac. Closing checkpoints and removes the -wal.
	if _, err := g.db.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	return &Result{Messages: int(g.msgID), Conversations: len(g.thr), Attachments: g.nAtt}, nil
}

func midnight(t time.Time) time.Time {
	l := t.In(demoZone)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, demoZone)
}

func sha1Bytes(s string) []byte {
	h := sha1.Sum([]byte(s))
	return h[:]
}

// setupThreads writes handles, chats and participants.
func (g *gen) setupThreads() error {
	var handleID int64
	handleIDs := map[string]int64{} // "id|service"
	handle := func(p Person, service string) (int64, error) {
		id := p.Phone
		if service == "iMessage" && (p.ViaEmail || p.Phone == "") {
			id = p.Email
		}
		k := id + "|" + service
		if h, ok := handleIDs[k]; ok {
			return h, nil
		}
		handleID++
		country := "us"
		switch {
		case strings.HasPrefix(id, "+33"):
			country = "fr"
		case strings.HasPrefix(id, "+49"):
			country = "de"
		}
		if err := g.exec("handle", handleID, id, country, service); err != nil {
			return 0, err
		}
		handleIDs[k] = handleID
		return handleID, nil
	}
	storyThreads := map[string]bool{}
	for _, s := range storySpecs(g.now) {
		storyThreads[s.thread] = true
		for _, l := range s.lines {
			if l.alsoIn != "" {
				storyThreads[l.alsoIn] = true
			}
		}
	}
	var keys []string
	for _, p := range people {
		keys = append(keys, "p:"+p.Key)
		if p.Key == "mom" {
			keys = append(keys, "p:mom#sms")
		}
	}
	for _, gr := range groups {
		keys = append(keys, "g:"+gr.key)
	}
	for i, key := range keys {
		th := &thread{key: key, guid: threadGUID(key), rowID: int64(i + 1), handles: map[string]int64{}, story: storyThreads[key]}
		th.service, _, _ = strings.Cut(th.guid, ";")
		th.members = threadMembers(key)
		kind, name, _ := strings.Cut(key, ":")
		displayName, groupID, ident := "", "", ""
		if kind == "g" {
			th.group = true
			ident = strings.TrimPrefix(th.guid, "iMessage;+;")
			th.roomName = ident
			groupID = uuidString(sha1Bytes("group-id/" + name)[:16])
			for _, gr := range groups {
				if gr.key == name {
					displayName, th.role, th.weight = gr.name, gr.role, gr.weight
				}
			}
		} else {
			p := personByKey(th.members[0])
			ident = strings.TrimPrefix(th.guid, th.service+";-;")
			th.role, th.weight, th.auto = p.Role, p.Weight, p.Role == "automated"
			if strings.HasSuffix(key, "#sms") {
				th.weight = 2
			}
		}
		for _, m := range th.members {
			h, err := handle(personByKey(m), th.service)
			if err != nil {
				return err
			}
			th.handles[m] = h
		}
		var dn, gid, room any
		if displayName != "" {
			dn = displayName
		}
		if groupID != "" {
			gid, room = groupID, th.roomName
		}
		style := 45
		if th.group {
			style = 43
		}
		if err := g.exec("chat", th.rowID, th.guid, style, g.accountGUID, ident, th.service, room, g.account, Owner.Phone, dn, gid); err != nil {
			return err
		}
		for _, m := range th.members {
			if err := g.exec("chj", th.rowID, th.handles[m]); err != nil {
				return err
			}
		}
		g.thr = append(g.thr, th)
		g.byKey[key] = th
	}
	return nil
}

// storyMessages turns a story spec into messages with fixed guids.
func (g *gen) storyMessages(s storySpec) ([]*outMsg, error) {
	th := g.byKey[s.thread]
	texts := map[string]lineSpec{}
	for _, l := range s.lines {
		texts[l.key] = l
	}
	var out []*outMsg
	for _, l := range s.lines {
		m := &outMsg{th: th, guid: storyGUID(s.id, l.key), from: l.from, t: l.time(g.now), text: l.text,
			failed: l.failed, unread: l.unread, effect: l.effect, unsent: l.unsent, event: l.event, deleted: l.deleted}
		if len(l.edits) > 0 {
			m.edits, m.editAt = l.edits, m.t.Add(l.editAfter)
		}
		if l.photo != "" {
			m.photo, m.cloud = l.photo, l.cloud
		}
		if l.audio {
			m.audio, m.text = true, ""
			m.transcript = l.text
		}
		if l.alsoIn != "" {
			m.alsoIn = g.byKey[l.alsoIn]
		}
		if l.replyTo != "" {
			target := texts[l.replyTo]
			m.threadGUID = storyGUID(s.id, l.replyTo)
			m.threadPart = "0:0:" + strconv.Itoa(utf16Len(target.text))
		}
		if l.tapback != 0 {
			target := texts[l.target]
			m.assocType, m.assocEmoji, m.sticker = l.tapback, l.emoji, l.sticker
			m.assocGUID = "p:0/" + storyGUID(s.id, l.target)
			m.assocLen = utf16Len(target.text)
			m.text = reactionText(l.tapback, l.emoji, target.text, target.photo != "")
		}
		runs, err := buildRuns(m.text, l.runs)
		if err != nil {
			return nil, fmt.Errorf("demo: story %s/%s: %w", s.id, l.key, err)
		}
		m.runs = runs
		out = append(out, m)
	}
	return out, nil
}

// reactionText is the body Messages gives a tapback row.
func reactionText(t int, emoji, target string, image bool) string {
	quoted := "“" + target + "”"
	if image {
		quoted = "an image"
	}
	verbs := map[int]string{2000: "Loved ", 2001: "Liked ", 2002: "Disliked ", 2003: "Laughed at ", 2004: "Emphasized ", 2005: "Questioned ",
		3000: "Removed a heart from ", 3001: "Removed a like from ", 3002: "Removed a dislike from ", 3003: "Removed a laugh from ",
		3004: "Removed an exclamation from ", 3005: "Removed a question mark from "}
	switch t {
	case 2006:
		return "Reacted " + emoji + " to " + quoted
	case 2007:
		return "Reacted with a sticker to " + quoted
	}
	return verbs[t] + quoted
}

// buildRuns turns run specs (substrings) into runs that tile text, part 0.
func buildRuns(text string, specs []runSpec) ([]typedstream.Run, error) {
	if len(specs) == 0 || text == "" {
		return nil, nil
	}
	var runs []typedstream.Run
	pos := 0
	for _, s := range specs {
		i := strings.Index(text[pos:], s.sub)
		if i < 0 {
			return nil, fmt.Errorf("run %q not in %q after byte %d", s.sub, text, pos)
		}
		start := pos + i
		if start > pos {
			runs = append(runs, typedstream.Run{Start: pos, End: start, Part: 0})
		}
		r := typedstream.Run{Start: start, End: start + len(s.sub), Part: 0}
		switch s.kind {
		case "otc":
			r.OneTimeCode = true
		case "link":
			r.Link = s.value
		case "mention":
			r.Mention = personByKey(s.value).Handle()
		case "money", "phone", "address", "calendar":
			r.Detected = []string{s.kind}
		default:
			return nil, fmt.Errorf("unknown run kind %q", s.kind)
		}
		runs = append(runs, r)
		pos = start + len(s.sub)
	}
	if pos < len(text) {
		runs = append(runs, typedstream.Run{Start: pos, End: len(text), Part: 0})
	}
	return runs, nil
}

// write inserts one message with its joins and attachments.
func (g *gen) write(m *outMsg) error {
	g.msgID++
	id := g.msgID
	th := m.th
	fromMe := m.from == "me"
	handleID := int64(0)
	if !fromMe {
		handleID = th.handles[m.from]
	} else if !th.group {
		handleID = th.handles[th.members[0]]
	}
	date := imessage.AppleNanos(m.t)

	// Attachment rows first: the body's runs name them.
	var attIDs []int64
	text, runs := m.text, m.runs
	if m.photo != "" || m.sticker || m.audio {
		attGUID := "at_0_" + uuid(g.r, m.t)
		name, uti, mime, data := m.photo, "public.jpeg", "image/jpeg", g.photos[g.nAtt%len(g.photos)]
		if p, ok := storyPhotos[name]; ok {
			uti, mime, data = p.uti, p.mime, p.data()
		}
		if m.audio {
			// A voice note: Messages keeps Apple's transcription on the
			// attachment's run (IMAudioTranscription, docs/imessage.md).
			name, uti, mime, data = "Audio Message.caf", "com.apple.coreaudio-format", "audio/x-caf", []byte("caff\x00\x01\x00\x00demo voice note")
		}
		var stored string
		if m.sticker {
			name, uti, mime, data = "sticker.png", "public.png", "image/png", g.stick[g.nAtt%len(g.stick)]
			stored = fmt.Sprintf("~/Library/Messages/StickerCache/%s/%s", attGUID, name)
		} else {
			stored = fmt.Sprintf("~/Library/Messages/Attachments/%02x/%02d/%s/%s", g.r.IntN(256), g.r.IntN(100), attGUID, name)
		}
		disk := filepath.Join(g.dir, filepath.FromSlash(strings.TrimPrefix(stored, "~/Library/Messages/")))
		// The guid folder is always new; only its parents may need creating.
		if err := os.Mkdir(filepath.Dir(disk), 0o700); err != nil {
			if err := os.MkdirAll(filepath.Dir(disk), 0o700); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
		}
		if m.cloud {
			// Kept in iCloud: the row names the file, the disk has none.
		} else if err := os.WriteFile(disk, data, 0o600); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		g.attID++
		g.nAtt++
		if err := g.queue("att", g.attID, attGUID, m.t.Unix()-978307200, stored, uti, mime, b2i(fromMe), name, len(data), b2i(m.sticker), attGUID); err != nil {
			return err
		}
		attIDs = append(attIDs, g.attID)
		if !m.sticker {
			caption := text
			text = "\ufffc" + caption
			runs = []typedstream.Run{{Start: 0, End: 3, Part: 0, AttachmentGUID: attGUID, Filename: name, Transcription: m.transcript}}
			if caption != "" {
				runs = append(runs, typedstream.Run{Start: 3, End: len(text), Part: 1})
			}
		}
	}

	var body []byte
	if text != "" && !m.unsent && m.event == nil {
		var err error
		if body, err = g.encode(text, runs); err != nil {
			return fmt.Errorf("demo: encode body of %s: %w", m.guid, err)
		}
	}
	var summary any
	var dateEdited, dateRetracted int64
	switch {
	case len(m.edits) > 0:
		versions := make([]any, 0, len(m.edits)+1)
		for i, v := range append(append([]string(nil), m.edits...), text) {
			b, err := typedstream.EncodeAttributedBody(v, nil)
			if err != nil {
				return fmt.Errorf("demo: encode edit of %s: %w", m.guid, err)
			}
			at := m.t
			if i > 0 {
				at = m.editAt
			}
			entry := map[string]any{"d": float64(at.UnixNano()-978307200e9) / 1e9, "t": b}
			if i > 0 {
				entry["bcg"] = uuid(g.r, at)
			}
			versions = append(versions, entry)
		}
		s, err := plist.Marshal(map[string]any{"amc": 0, "ust": true, "ep": []int{0},
			"otr": map[string]any{"0": map[string]any{"lo": 0, "le": utf16Len(text)}},
			"ec":  map[string]any{"0": versions}}, plist.BinaryFormat)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		summary, dateEdited = s, imessage.AppleNanos(m.editAt)
	case m.unsent:
		s, err := plist.Marshal(map[string]any{"amc": 0, "ust": true, "rp": []int{0},
			"otr": map[string]any{"0": map[string]any{"lo": 0, "le": utf16Len(m.text)}}}, plist.BinaryFormat)
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		summary, dateRetracted = s, imessage.AppleNanos(m.t.Add(40*time.Second))
	case th.service == "iMessage" && m.event == nil:
		summary = g.plainSummary
	}

	var dateRead, dateDelivered int64
	isRead, isSent, isDelivered := !m.unread, fromMe, true
	errCode := 0
	if fromMe {
		isRead = false
		if th.service == "iMessage" {
			dateDelivered = date + int64(1+g.r.IntN(3))*1e9
			if !th.group && g.r.IntN(3) == 0 {
				isRead, dateRead = true, date+int64(60+g.r.IntN(3600))*1e9
			}
		}
		if m.failed {
			isSent, isDelivered, dateDelivered, errCode = false, false, 0, 22
		}
	} else if isRead {
		dateRead = date + int64(30+g.r.IntN(2400))*1e9
	}
	var itemType, action int
	otherHandle := int64(-1)
	var groupTitle any
	if m.event != nil {
		itemType, action = m.event.itemType, m.event.action
		if m.event.other != "" {
			otherHandle = th.handles[m.event.other]
		} else {
			otherHandle = 0
		}
		if m.event.title != "" {
			groupTitle = m.event.title
		}
	}
	var room any
	if th.group {
		room = th.roomName
	}
	partCount := 1
	if len(runs) > 1 && runs[len(runs)-1].Part > 0 {
		partCount = runs[len(runs)-1].Part + 1
	}
	if err := g.queue("msg", id, m.guid, handleID, nullBytes(body), th.service, errCode, date,
		dateRead, dateDelivered, b2i(isDelivered), b2i(fromMe), b2i(isRead), b2i(isSent), b2i(len(attIDs) > 0), room,
		itemType, otherHandle, groupTitle, action, nullStr(m.assocGUID), m.assocType, nullStr(m.assocEmoji), m.assocLen,
		nullStr(m.balloon), nullStr(m.effect), nullStr(m.threadGUID), nullStr(m.threadPart), summary,
		dateEdited, dateRetracted, partCount, b2i(len(runs) > 1)); err != nil {
		return err
	}
	for _, a := range attIDs {
		if err := g.queue("maj", id, a); err != nil {
			return err
		}
	}
	switch {
	case m.orphan:
	case m.deleted:
		if err := g.queue("recov", th.rowID, id, date+60e9); err != nil {
			return err
		}
	default:
		if err := g.queue("cmj", th.rowID, id, date); err != nil {
			return err
		}
		if m.alsoIn != nil {
			if err := g.queue("cmj", m.alsoIn.rowID, id, date); err != nil {
				return err
			}
		}
	}
	return nil
}

// encode returns the attributedBody of text. Plain bodies repeat a lot in
// template filler ("sounds good", "👍"), so they are cached; the cache is
// cleared when it grows large, which keeps memory bounded.
func (g *gen) encode(text string, runs []typedstream.Run) ([]byte, error) {
	if runs != nil {
		return typedstream.EncodeAttributedBody(text, runs)
	}
	if b, ok := g.bodies[text]; ok {
		return b, nil
	}
	b, err := typedstream.EncodeAttributedBody(text, nil)
	if err != nil {
		return nil, err
	}
	if len(g.bodies) >= 50000 {
		clear(g.bodies)
	}
	g.bodies[text] = b
	return b, nil
}

// sqlQuote returns s as an SQL string literal.
func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}
