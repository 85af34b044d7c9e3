// Package demo writes a deterministic, realistic synthetic Messages
// database so every feature of Tidings can be tried, tested and benchmarked
// without anyone's personal data.
//
// Generate writes DIR/chat.db (the real macOS 15 schema, triggers omitted;
// modern rows: text NULL, the body only in attributedBody, written with the
// typedstream encoder), DIR/contacts.vcf (vCard 3.0) and small real image
// files under DIR/Attachments and DIR/StickerCache, which the stored
// "~/Library/Messages/…" paths resolve to when the reader opens the copy.
//
// The data mixes scripted storylines placed in the weeks before "now"
// (Stories: known facts, fixed guids, and which threads await a reply) with
// generated filler conversations spread over two years. Same seed, message
// count and now give byte-identical output.
package demo

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf16"
)

// DefaultMessages is the message count of `tidings demo` without --messages.
const DefaultMessages = 20000

// MaxMessages bounds --messages (the generator keeps nothing per message in
// memory, so this is about disk: ~1 KB per message).
const MaxMessages = 20_000_000

// Options configures Generate.
type Options struct {
	// Dir receives chat.db, contacts.vcf and the attachment folders. It is
	// created if missing; existing demo files in it are replaced.
	Dir string
	// Messages is the number of message rows (storylines included);
	// 0 means DefaultMessages.
	Messages int
	// Seed selects the filler; storylines do not depend on it.
	Seed uint64
	// Now is the newest moment of the data; the zero time means time.Now.
	// Callers pass config.Now() so TIDINGS_NOW pins it.
	Now time.Time
}

// Result describes what Generate wrote.
type Result struct {
	ChatDB        string
	Contacts      string
	Messages      int
	Conversations int
	Attachments   int
	Now           time.Time
	Stories       []Story
}

// MinMessages returns the smallest accepted message count: the storylines
// plus a little filler.
func MinMessages() int {
	n := 0
	for _, s := range storySpecs(time.Unix(0, 0)) {
		n += len(s.lines)
	}
	return n + 50
}

// Generate writes the demo data set to opts.Dir. The database is built
// under a temporary name and renamed into place, so a half-written chat.db
// never exists.
func Generate(ctx context.Context, opts Options) (*Result, error) {
	if opts.Messages == 0 {
		opts.Messages = DefaultMessages
	}
	if min := MinMessages(); opts.Messages < min || opts.Messages > MaxMessages {
		return nil, fmt.Errorf("demo: --messages must be between %d and %d, got %d", min, MaxMessages, opts.Messages)
	}
	if opts.Dir == "" {
		return nil, errors.New("demo: no output folder")
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	now := opts.Now.UTC().Truncate(time.Second)
	if err := claimDir(opts.Dir); err != nil {
		return nil, err
	}
	final := filepath.Join(opts.Dir, "chat.db")
	tmp := final + ".tmp"
	for _, p := range []string{tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"} {
		os.Remove(p)
	}
	for _, d := range []string{"Attachments", "StickerCache"} {
		if err := os.RemoveAll(filepath.Join(opts.Dir, d)); err != nil {
			return nil, fmt.Errorf("demo: clear old attachments: %w", err)
		}
	}
	g, err := newGen(ctx, tmp, opts.Dir, now, opts.Seed)
	if err != nil {
		return nil, err
	}
	res, err := g.run(ctx, opts.Messages)
	if cerr := g.close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	for _, p := range []string{final + "-wal", final + "-shm"} {
		os.Remove(p)
	}
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	contacts := filepath.Join(opts.Dir, "contacts.vcf")
	if err := os.WriteFile(contacts, vcard(), 0o600); err != nil {
		return nil, fmt.Errorf("demo: write contacts: %w", err)
	}
	res.ChatDB, res.Contacts, res.Now = final, contacts, now
	res.Stories = Stories(now)
	return res, nil
}

// markerFile marks a folder as written by Generate. Generate replaces
// chat.db and the attachment folders, so it refuses a non-empty folder
// without the marker: `tidings demo --dir ~/Library/Messages` must never
// touch a real Messages folder.
const markerFile = ".tidings-demo"

func claimDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	marker := filepath.Join(dir, markerFile)
	if len(ents) > 0 {
		if _, err := os.Stat(marker); err != nil {
			return fmt.Errorf("demo: %s is not empty and was not written by tidings demo; choose an empty or new folder", dir)
		}
		return nil
	}
	if err := os.WriteFile(marker, []byte("written by tidings demo; the folder's contents are replaced on the next run\n"), 0o600); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// thread is one chat being generated.
type thread struct {
	key      string // "p:sam", "p:mom#sms", "g:lisbon"
	guid     string
	rowID    int64
	service  string
	group    bool
	roomName string
	members  []string         // person keys, owner excluded
	handles  map[string]int64 // person key → handle ROWID
	role     string
	weight   int
	auto     bool
	story    bool // storyline thread: no filler in the story window
}

// threadGUID returns the chat guid for a thread key.
func threadGUID(key string) string {
	kind, name, _ := strings.Cut(key, ":")
	if kind == "g" {
		h := sha1.Sum([]byte("tidings-demo-group/" + name))
		return fmt.Sprintf("iMessage;+;chat%018d", binary.BigEndian.Uint64(h[:8])%1e18)
	}
	person, variant, _ := strings.Cut(name, "#")
	p := personByKey(person)
	service := p.Service
	if variant == "sms" {
		service = "SMS"
	}
	return service + ";-;" + p.Handle()
}

// threadMembers returns the person keys of a thread.
func threadMembers(key string) []string {
	kind, name, _ := strings.Cut(key, ":")
	if kind == "g" {
		for _, g := range groups {
			if g.key == name {
				return g.members
			}
		}
		panic("demo: unknown group " + name)
	}
	person, _, _ := strings.Cut(name, "#")
	return []string{person}
}

// uuid draws an uppercase UUID (Apple's format) whose first 48 bits are the
// message time in milliseconds, as in UUID version 7. Time-ordered guids
// make the UNIQUE(guid) index grow at its end instead of at random places,
// which makes generating a million rows several times faster; readers see
// ordinary UUIDs.
func uuid(r *rand.Rand, t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16|uint64(r.Uint32()&0xffff))
	binary.BigEndian.PutUint64(b[8:], r.Uint64())
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return uuidString(b[:])
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// dayQuotas splits total messages over days, with weekends busier and
// recent months busier than old ones; the quotas sum to total exactly.
func dayQuotas(days, total int, firstWeekday time.Weekday) []int {
	w := make([]float64, days)
	sum := 0.0
	for d := range w {
		wd := (int(firstWeekday) + d) % 7
		x := 0.6 + 0.8*float64(d)/float64(days)
		if wd == 0 || wd == 6 {
			x *= 1.35
		}
		w[d] = x
		sum += x
	}
	q := make([]int, days)
	acc, given := 0.0, 0
	for d := range w {
		acc += w[d] / sum * float64(total)
		n := int(acc+0.5) - given
		q[d] = n
		given += n
	}
	q[days-1] += total - given
	return q
}

// sortEvents orders a day's messages by time, keeping generation order for
// equal times (sort.SliceStable is deterministic).
func sortEvents(evs []*outMsg) {
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].t.Before(evs[j].t) })
}
