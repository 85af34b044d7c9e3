package calendar

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/emersion/go-ical"
)

// This file is the calendar search store (docs/tools.md, "Calendar
// search"): every configured collection mirrored incrementally into a
// SQLite file of its own, calendar.db in the Tidings home, with an FTS5
// table over titles, locations and notes. A separate file rather than
// tables in index.db: the calendar is synced by the service that owns its
// accounts (the helper under `serve --bridge`), needs none of the index's
// message machinery, and can be deleted and rebuilt on its own.
//
// What is stored is already redacted: titles and locations as one-line
// fields, descriptions as bodies, through the same redactor as every
// output (docs/redaction.md), so a 2FA code in an invitation never
// reaches the search tables; names and addresses stay for the read
// policy's question at query time. An object whose organizer or attendee
// (other than the user) the read policy blocks is never stored.
//
// Crash safety: each collection's changes and its new change marker
// (state) are written in one transaction, so a sync cancelled at any
// point leaves every collection either at its old state with its old
// objects or at its new state with its new objects; the next sync starts
// from what was committed. Objects are keyed by (account, href), so
// nothing is ever stored twice.

// SyncMaxAge is how old the mirror may be when a search runs: older, and
// the search syncs first (docs/tools.md, "Calendar search").
const SyncMaxAge = 5 * time.Minute

const syncSchema = `
CREATE TABLE IF NOT EXISTS cal_collections (
	account    TEXT NOT NULL,
	href       TEXT NOT NULL,
	state      TEXT NOT NULL,
	synced     INTEGER NOT NULL,
	PRIMARY KEY (account, href)
);
CREATE TABLE IF NOT EXISTS cal_objects (
	id         INTEGER PRIMARY KEY,
	account    TEXT NOT NULL,
	collection TEXT NOT NULL,
	href       TEXT NOT NULL,
	etag       TEXT NOT NULL,
	comp       TEXT NOT NULL,
	ics        TEXT NOT NULL,
	UNIQUE (account, href)
);
CREATE INDEX IF NOT EXISTS cal_objects_collection ON cal_objects (account, collection);
CREATE VIRTUAL TABLE IF NOT EXISTS cal_fts USING fts5 (title, location, notes, tokenize = 'unicode61 remove_diacritics 2');
`

// Delta is what changed in one collection since the state a sync
// stored.
type Delta struct {
	// State is the collection's new change marker (ctag and sync-token,
	// file stamp, HTTP validators), stored with the changes.
	State string
	// Unchanged: nothing to apply, the stored objects stand.
	Unchanged bool
	// Full: Upserts is the whole collection; stored objects not in it
	// are deleted, and those whose ETag is unchanged are left alone.
	Full    bool
	Upserts []Object
	Deletes []string
}

// Syncer is implemented by backends that can say what changed:
// CalDAV (getctag, sync-collection, ETags), ICS files (mtime, size and
// hash) and ICS URLs (ETag and Last-Modified). known maps the stored
// objects' hrefs to their ETags.
type Syncer interface {
	Changes(ctx context.Context, c Collection, state string, known map[string]string) (Delta, error)
}

// SyncReport counts what one sync did (tests and docs/benchmarks.md).
type SyncReport struct {
	Collections int
	Unchanged   int
	Fetched     int // objects received from the backend
	Written     int // objects inserted or replaced
	Deleted     int
	Blocked     int // objects not stored because the read policy blocks a person on them
	Problems    []string
}

// SyncIndex is the calendar search store in one SQLite file.
type SyncIndex struct {
	db *sql.DB

	mu   sync.Mutex // one sync at a time
	last time.Time  // when the last sync finished, by the store's clock

	// afterWrite, when set (tests), runs after each object written
	// inside a collection's transaction, with the count so far.
	afterWrite func(n int)
}

var (
	sharedMu      sync.Mutex
	sharedIndexes = map[string]*SyncIndex{}
)

// openShared returns the process's one SyncIndex of path: the Calendar
// and Reminders services share it (and its sync lock).
func openShared(ctx context.Context, path string) (*SyncIndex, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if ix, ok := sharedIndexes[path]; ok {
		return ix, nil
	}
	ix, err := OpenSyncIndex(ctx, path)
	if err != nil {
		return nil, err
	}
	sharedIndexes[path] = ix
	return ix, nil
}

// OpenSyncIndex opens (creating it 0600) the calendar search store at
// path.
func OpenSyncIndex(ctx context.Context, path string) (*SyncIndex, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open calendar search store: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open calendar search store: %w", err)
	}
	f.Close()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "secure_delete(1)")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open calendar search store: %w", err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, syncSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open calendar search store: %w", err)
	}
	return &SyncIndex{db: db}, nil
}

// Close closes the store.
func (ix *SyncIndex) Close() error { return ix.db.Close() }

// Sync brings the store up to date with every backend of st. A backend
// or collection that fails is named in the report's Problems and keeps
// what was stored for it; the error is only for the store itself or a
// cancelled context.
func (ix *SyncIndex) Sync(ctx context.Context, st *Store) (SyncReport, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.syncLocked(ctx, st)
}

func (ix *SyncIndex) syncLocked(ctx context.Context, st *Store) (SyncReport, error) {
	var rep SyncReport
	for _, b := range st.Backends {
		cols, err := b.Collections(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			rep.Problems = append(rep.Problems, err.Error())
			continue
		}
		var hrefs []string
		for _, c := range cols {
			if !c.Holds(Events) && !c.Holds(Todos) {
				continue
			}
			hrefs = append(hrefs, c.Href)
			rep.Collections++
			if err := ix.syncCollection(ctx, st, b, c, &rep); err != nil {
				if ctx.Err() != nil {
					return rep, ctx.Err()
				}
				rep.Problems = append(rep.Problems, err.Error())
			}
		}
		if err := ix.dropOthers(ctx, b.Account(), hrefs); err != nil {
			return rep, err
		}
	}
	// Accounts no longer configured leave the store.
	var accounts []string
	for _, b := range st.Backends {
		accounts = append(accounts, b.Account())
	}
	if err := ix.dropAccounts(ctx, accounts); err != nil {
		return rep, err
	}
	ix.last = st.Now()
	return rep, nil
}

func (ix *SyncIndex) syncCollection(ctx context.Context, st *Store, b Backend, c Collection, rep *SyncReport) error {
	var state string
	err := ix.db.QueryRowContext(ctx, "SELECT state FROM cal_collections WHERE account = ? AND href = ?", c.Account, c.Href).Scan(&state)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("calendar search store: %w", err)
	}
	known := map[string]string{}
	rows, err := ix.db.QueryContext(ctx, "SELECT href, etag FROM cal_objects WHERE account = ? AND collection = ?", c.Account, c.Href)
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	for rows.Next() {
		var h, e string
		if err := rows.Scan(&h, &e); err != nil {
			rows.Close()
			return fmt.Errorf("calendar search store: %w", err)
		}
		known[h] = e
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	var d Delta
	if s, ok := b.(Syncer); ok {
		d, err = s.Changes(ctx, c, state, known)
	} else {
		d, err = fullDelta(ctx, b, c)
	}
	if err != nil {
		return err
	}
	if d.Unchanged {
		rep.Unchanged++
		return ix.touch(ctx, c, d.State)
	}
	return ix.apply(ctx, st, c, d, known, rep)
}

// fullDelta reads a backend that cannot say what changed: every object,
// each with the hash of its text as ETag.
func fullDelta(ctx context.Context, b Backend, c Collection) (Delta, error) {
	d := Delta{Full: true}
	for _, comp := range []string{Events, Todos} {
		if !c.Holds(comp) {
			continue
		}
		objs, err := b.Objects(ctx, c, comp)
		if err != nil {
			return d, err
		}
		for _, o := range objs {
			if o.ETag == "" {
				o.ETag = hashObject(o.Cal)
			}
			d.Upserts = append(d.Upserts, o)
		}
	}
	return d, nil
}

// hashObject is a content ETag for objects that have none (ICS).
func hashObject(cal *ical.Calendar) string {
	c := ical.NewCalendar()
	withHeader(c, cal)
	c.Children = cal.Children
	b, err := encode(c)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

func (ix *SyncIndex) touch(ctx context.Context, c Collection, state string) error {
	_, err := ix.db.ExecContext(ctx, `INSERT INTO cal_collections (account, href, state, synced) VALUES (?, ?, ?, 1)
ON CONFLICT (account, href) DO UPDATE SET state = excluded.state`, c.Account, c.Href, state)
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	return nil
}

// apply writes one collection's delta and its new state in one
// transaction.
func (ix *SyncIndex) apply(ctx context.Context, st *Store, c Collection, d Delta, known map[string]string, rep *SyncReport) (err error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	rep.Fetched += len(d.Upserts)
	seen := map[string]bool{}
	written := 0
	for _, o := range d.Upserts {
		seen[o.Href] = true
		if e, ok := known[o.Href]; ok && d.Full && e == o.ETag && o.ETag != "" {
			continue
		}
		if err := ix.deleteObject(ctx, tx, c.Account, o.Href); err != nil {
			return err
		}
		if o.Cal == nil {
			continue
		}
		if st.objectHidden(o.Cal) {
			rep.Blocked++
			continue
		}
		if err := ix.writeObject(ctx, tx, c, o); err != nil {
			return err
		}
		written++
		rep.Written++
		if ix.afterWrite != nil {
			ix.afterWrite(written)
		}
	}
	deletes := d.Deletes
	if d.Full {
		for h := range known {
			if !seen[h] {
				deletes = append(deletes, h)
			}
		}
	}
	for _, h := range deletes {
		if _, ok := known[h]; !ok {
			continue
		}
		if err := ix.deleteObject(ctx, tx, c.Account, h); err != nil {
			return err
		}
		rep.Deleted++
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO cal_collections (account, href, state, synced) VALUES (?, ?, ?, 1)
ON CONFLICT (account, href) DO UPDATE SET state = excluded.state`, c.Account, c.Href, d.State); err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	return nil
}

func (ix *SyncIndex) deleteObject(ctx context.Context, tx *sql.Tx, account, href string) error {
	var id int64
	err := tx.QueryRowContext(ctx, "SELECT id FROM cal_objects WHERE account = ? AND href = ?", account, href).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err == nil {
		_, err = tx.ExecContext(ctx, "DELETE FROM cal_fts WHERE rowid = ?", id)
	}
	if err == nil {
		_, err = tx.ExecContext(ctx, "DELETE FROM cal_objects WHERE id = ?", id)
	}
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	return nil
}

// writeObject stores o redacted: its text properties pass the redactor
// before they reach either table.
func (ix *SyncIndex) writeObject(ctx context.Context, tx *sql.Tx, c Collection, o Object) error {
	cal, comp, title, location, notes := redactObject(o.Cal)
	if comp == "" {
		return nil // neither an event nor a to-do (a lone VTIMEZONE)
	}
	text, err := encode(cal)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, "INSERT INTO cal_objects (account, collection, href, etag, comp, ics) VALUES (?, ?, ?, ?, ?, ?)",
		c.Account, c.Href, o.Href, o.ETag, comp, string(text))
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	id, err := res.LastInsertId()
	if err == nil {
		_, err = tx.ExecContext(ctx, "INSERT INTO cal_fts (rowid, title, location, notes) VALUES (?, ?, ?, ?)", id, title, location, notes)
	}
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	return nil
}

// redactObject returns a copy of cal whose SUMMARY, LOCATION and
// DESCRIPTION are redacted (and sanitized), the object's component kind,
// and its text for the FTS table.
func redactObject(in *ical.Calendar) (*ical.Calendar, string, string, string, string) {
	cal := ical.NewCalendar()
	withHeader(cal, in)
	var comp string
	var titles, locs, notes []string
	for _, ch := range in.Children {
		if ch.Name != Events && ch.Name != Todos {
			cal.Children = append(cal.Children, ch)
			continue
		}
		if comp == "" {
			comp = ch.Name
		}
		cp := &ical.Component{Name: ch.Name, Props: ical.Props{}, Children: ch.Children}
		for k, v := range ch.Props {
			cp.Props[k] = v
		}
		for _, f := range []struct {
			name string
			line bool
			into *[]string
		}{{ical.PropSummary, true, &titles}, {ical.PropLocation, true, &locs}, {ical.PropDescription, false, &notes}} {
			p := cp.Props.Get(f.name)
			if p == nil {
				continue
			}
			s := propText(ch, f.name)
			if f.line {
				s = body.Line(s)
			} else {
				s = body.Body(s, nil)
			}
			cp.Props.SetText(f.name, s)
			*f.into = append(*f.into, s)
		}
		cal.Children = append(cal.Children, cp)
	}
	return cal, comp, strings.Join(titles, "\n"), strings.Join(locs, "\n"), strings.Join(notes, "\n")
}

// objectHidden applies the read policy to every person of every
// component of an object (fail closed, as Store.hidden).
func (s *Store) objectHidden(cal *ical.Calendar) bool {
	for _, ch := range cal.Children {
		if ch.Name != Events && ch.Name != Todos {
			continue
		}
		o := Occurrence{}
		if p := ch.Props.Get(ical.PropOrganizer); p != nil {
			o.Organizer = person(p)
		}
		for _, p := range ch.Props.Values(ical.PropAttendee) {
			o.Attendees = append(o.Attendees, *person(&p))
		}
		if s.hidden(o) {
			return true
		}
	}
	return false
}

func (ix *SyncIndex) dropOthers(ctx context.Context, account string, keep []string) error {
	rows, err := ix.db.QueryContext(ctx, "SELECT href FROM cal_collections WHERE account = ?", account)
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	var gone []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return fmt.Errorf("calendar search store: %w", err)
		}
		if !contains(keep, h) {
			gone = append(gone, h)
		}
	}
	rows.Close()
	for _, h := range gone {
		if err := ix.dropCollection(ctx, "account = ? AND collection = ?", "account = ? AND href = ?", account, h); err != nil {
			return err
		}
	}
	return nil
}

func (ix *SyncIndex) dropAccounts(ctx context.Context, keep []string) error {
	rows, err := ix.db.QueryContext(ctx, "SELECT DISTINCT account FROM cal_collections")
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	var gone []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			rows.Close()
			return fmt.Errorf("calendar search store: %w", err)
		}
		if !contains(keep, a) {
			gone = append(gone, a)
		}
	}
	rows.Close()
	for _, a := range gone {
		if err := ix.dropCollection(ctx, "account = ?", "account = ?", a); err != nil {
			return err
		}
	}
	return nil
}

// dropCollection deletes objects (and their FTS rows) and collections
// matching the two WHERE clauses, in one transaction.
func (ix *SyncIndex) dropCollection(ctx context.Context, objWhere, colWhere string, args ...any) (err error) {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("calendar search store: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	for _, q := range []string{
		"DELETE FROM cal_fts WHERE rowid IN (SELECT id FROM cal_objects WHERE " + objWhere + ")",
		"DELETE FROM cal_objects WHERE " + objWhere,
		"DELETE FROM cal_collections WHERE " + colWhere,
	} {
		if _, err = tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("calendar search store: %w", err)
		}
	}
	return tx.Commit()
}

// ftsQuery turns free text into an FTS5 query: every word must match,
// each as a prefix (so "dent" finds "dentist"); quotes keep FTS5's
// operators out of the user's words.
func ftsQuery(q string) (string, error) {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return "", errors.New("query must contain at least one word")
	}
	if len(words) > 16 {
		words = words[:16]
	}
	for i, w := range words {
		words[i] = `"` + w + `"*`
	}
	return strings.Join(words, " "), nil
}

// search returns the stored objects of kind comp in cols whose title,
// location or notes match q, decoded.
func (ix *SyncIndex) search(ctx context.Context, cols []Collection, comp, q string) ([]Object, []Collection, error) {
	fq, err := ftsQuery(q)
	if err != nil {
		return nil, nil, err
	}
	var objs []Object
	var in []Collection
	for _, c := range cols {
		rows, err := ix.db.QueryContext(ctx, `SELECT o.href, o.etag, o.ics FROM cal_fts JOIN cal_objects o ON o.id = cal_fts.rowid
WHERE cal_fts MATCH ? AND o.account = ? AND o.collection = ? AND o.comp = ? ORDER BY o.id`, fq, c.Account, c.Href, comp)
		if err != nil {
			return nil, nil, fmt.Errorf("calendar search: %w", err)
		}
		for rows.Next() {
			var o Object
			var text string
			if err := rows.Scan(&o.Href, &o.ETag, &text); err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("calendar search: %w", err)
			}
			cal, err := decode([]byte(text))
			if err != nil {
				continue // written by this file; a broken row is skipped, not fatal
			}
			o.Cal = cal
			objs = append(objs, o)
			in = append(in, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("calendar search: %w", err)
		}
	}
	return objs, in, nil
}

// fresh syncs when the last sync is older than SyncMaxAge; a failed
// refresh is a problem sentence, and the search runs on what is stored.
func (ix *SyncIndex) fresh(ctx context.Context, st *Store) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.last.IsZero() && st.Now().Sub(ix.last) < SyncMaxAge && !st.Now().Before(ix.last) {
		return nil
	}
	rep, err := ix.syncLocked(ctx, st)
	if err != nil {
		return []string{"the calendar search store could not be refreshed: " + err.Error()}
	}
	return rep.Problems
}

// errNoSearch is returned by a search when the store has no file for
// the search store (no Tidings home).
var errNoSearch = errors.New("calendar search is not available: there is no Tidings home to keep its store in")

// SearchIndex returns the store's calendar search store, opened on first
// use (the Calendar and Reminders services share it).
func (s *Store) SearchIndex(ctx context.Context) (*SyncIndex, error) {
	if s.SearchPath == "" {
		return nil, errNoSearch
	}
	return openShared(ctx, s.SearchPath)
}

// SearchEvents is Events over the search store: the occurrences inside
// [from, to) of the events of cols whose title, location or notes match
// q, after a sync when the store is older than SyncMaxAge.
func (s *Store) SearchEvents(ctx context.Context, cols []Collection, q string, from, to time.Time) (EventsResult, error) {
	var res EventsResult
	if _, err := ftsQuery(q); err != nil {
		return res, err
	}
	ix, err := s.SearchIndex(ctx)
	if err != nil {
		return res, err
	}
	res.Problems = ix.fresh(ctx, s)
	objs, in, err := ix.search(ctx, cols, Events, q)
	if err != nil {
		return res, err
	}
	x := Expander{Loc: s.Loc}
	for i, o := range objs {
		r, err := x.Expand(o.Cal, from, to)
		if err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("%s: %v", in[i].Path(), err))
			continue
		}
		res.Cut = res.Cut || r.Cut
		for _, occ := range r.Occurrences {
			if s.hidden(occ) { // the policy may have changed since the sync
				res.Hidden++
				continue
			}
			res.Events = append(res.Events, Event{Occurrence: occ, Calendar: in[i]})
		}
	}
	sortEvents(res.Events)
	return res, nil
}

// SearchTodos is Todos over the search store: the to-dos of cols whose
// title or notes match q.
func (s *Store) SearchTodos(ctx context.Context, cols []Collection, q string) ([]TodoItem, []string, error) {
	if _, err := ftsQuery(q); err != nil {
		return nil, nil, err
	}
	ix, err := s.SearchIndex(ctx)
	if err != nil {
		return nil, nil, err
	}
	problems := ix.fresh(ctx, s)
	objs, in, err := ix.search(ctx, cols, Todos, q)
	if err != nil {
		return nil, nil, err
	}
	x := Expander{Loc: s.Loc}
	var out []TodoItem
	for i, o := range objs {
		if s.objectHidden(o.Cal) {
			continue
		}
		for _, t := range x.Todos(o.Cal) {
			out = append(out, TodoItem{Todo: t, List: in[i], Href: o.Href, ETag: o.ETag})
		}
	}
	return out, problems, nil
}
