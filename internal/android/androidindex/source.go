// Package androidindex adapts SMS Backup & Restore exports
// (internal/android) to the index's Source contract (internal/index). It
// is a separate package so the reader stays free of the index.
//
// One Source serves every configured export (--android-xml, repeatable):
// messages are keyed by content-derived ids and conversations by
// participant set, so the same or an overlapping export adds nothing twice,
// whichever file it came from. Its watermark records each file's
// fingerprint, so an unchanged file is not read again.
package androidindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tidings-mcp/tidings/internal/android"
	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
)

// Key is the Source key of the Android exports. It deliberately does not
// name a file: every export shares one id space, so a newer export that
// overlaps an older one (or replaces it in the configuration) only adds
// what is new.
const Key = "android:sms-backup-restore"

// watermarkVersion changes when the reader or the id scheme changes in a
// way that must re-read every export.
//
// 2: group MMS contact_name lists name every member, and the watermark
// keeps the names of every export imported (Known).
const watermarkVersion = 2

// Source implements index.Source (and the index's ContactSource shape) over
// a set of export files.
type Source struct {
	// Paths are the export files.
	Paths []string
	// Region is the default phone region (config.Config.Region).
	Region string
	// Owner lists the user's own numbers; empty means detect per file.
	Owner []string
	// Reader bounds the reader (zero: defaults); Batch is the import batch
	// size (zero: default).
	Reader android.Options
	Batch  int
	// Logger receives warnings (truncated files, skipped records).
	Logger *slog.Logger

	mu       sync.Mutex
	results  []FileResult
	contacts map[string][]model.Contact // path → names from this process's Sync
	known    []model.Contact            // every export's names, from this process's Sync (watermark.Known)

	// readContacts is android.ReadContacts (replaced in tests).
	readContacts func(ctx context.Context, path, region string) ([]model.Contact, error)
}

// New returns a Source over paths.
func New(paths []string, region string) *Source {
	return &Source{Paths: paths, Region: region}
}

var (
	_ index.Source        = (*Source)(nil)
	_ index.ContactSource = (*Source)(nil)
)

// FileResult is what the last Sync did with one file.
type FileResult struct {
	Path string `json:"path"`
	// Unchanged is true when the file's fingerprint matched the watermark
	// and it was not read.
	Unchanged bool `json:"unchanged"`
	// Incomplete is true when the file is truncated (now or when it was
	// read): what it holds was imported, the rest is missing.
	Incomplete bool           `json:"incomplete,omitempty"`
	Result     android.Result `json:"result"`
	// Warning explains Incomplete (the reader's error).
	Warning string `json:"warning,omitempty"`
}

// Key implements index.Source.
func (s *Source) Key() string { return Key }

// Kind implements index.Source.
func (s *Source) Kind() string { return model.SourceAndroid }

type fileMark struct {
	FP         string `json:"fp"`
	Incomplete bool   `json:"incomplete,omitempty"`
	// Contacts are the file's contact names, kept (up to maxStoredCards)
	// so an unchanged file needs no pass for Contacts; nil when not kept.
	Contacts []model.Contact `json:"contacts,omitempty"`
}

// maxStoredCards bounds the contact cards kept per file in the watermark
// (about 120 bytes each); a file with more gets a metadata pass instead.
const maxStoredCards = 5000

type watermark struct {
	V      int                 `json:"v"`
	Region string              `json:"region"`
	Owner  []string            `json:"owner,omitempty"`
	Files  map[string]fileMark `json:"files"`
	// Known are the names of every export imported so far, newest per
	// number (up to maxStoredCards): a name learnt from one export
	// survives a later import of an older or shorter one that shows the
	// person as "(Unknown)", a raw number or not at all, and an export
	// dropped from the configuration (docs/android.md "Contact names").
	Known []model.Contact `json:"known,omitempty"`
}

func (s *Source) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (s *Source) region() string {
	if s.Region == "" {
		return contacts.DefaultRegion
	}
	return strings.ToUpper(s.Region)
}

// paths returns the configured paths, absolute, cleaned and deduplicated.
func (s *Source) paths() ([]string, error) {
	var out []string
	for _, p := range s.Paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("android export %s: %w", p, err)
		}
		if !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out, nil
}

// Sync implements index.Source: every file whose fingerprint changed (or
// every file, when the region, owner setting or reader version changed) is
// read in full and delivered; the index skips messages it already holds
// unchanged. A truncated file is imported as far as it goes, logged, and
// reported in Results; it does not fail the sync.
func (s *Source) Sync(ctx context.Context, req index.SyncRequest, w index.Writer) error {
	paths, err := s.paths()
	if err != nil {
		return err
	}
	region := s.region()
	owner := slices.Clone(s.Owner)
	slices.Sort(owner)
	var prev watermark
	if len(req.Watermark) > 0 {
		if err := json.Unmarshal(req.Watermark, &prev); err != nil {
			prev = watermark{}
		}
	}
	if prev.V != watermarkVersion || prev.Region != region || !slices.Equal(prev.Owner, owner) {
		prev.Files = nil
	}
	if prev.V != watermarkVersion || prev.Region != region {
		prev.Known = nil // keys depend on the region
	}
	next := watermark{V: watermarkVersion, Region: region, Owner: owner, Files: map[string]fileMark{}}
	known := map[string]model.Contact{}
	mergeCards(known, prev.Known)
	defer func() {
		s.mu.Lock()
		s.known = next.Known
		s.mu.Unlock()
	}()
	var results []FileResult
	defer func() {
		s.mu.Lock()
		s.results = results
		s.mu.Unlock()
	}()
	log := s.logger()
	for _, p := range paths {
		fp, err := Fingerprint(p)
		if err != nil {
			return err
		}
		if mark, ok := prev.Files[p]; ok && mark.FP == fp {
			next.Files[p] = mark
			if mark.Contacts != nil {
				s.setContacts(p, mark.Contacts)
				mergeCards(known, mark.Contacts)
			}
			fr := FileResult{Path: p, Unchanged: true, Incomplete: mark.Incomplete}
			if mark.Incomplete {
				fr.Warning = "export is truncated; re-export it to import the rest"
				log.Warn("android export is truncated (imported as far as it goes)", "path", p)
			}
			results = append(results, fr)
			continue
		}
		opts := android.ImportOptions{Region: region, Owner: s.Owner, Reader: s.Reader, Batch: s.Batch}
		res, err := android.ReadFile(ctx, p, opts, android.Sink{Conversations: w.Conversations, Message: w.Message})
		fr := FileResult{Path: p, Result: res}
		if err != nil {
			if !errors.Is(err, android.ErrTruncated) {
				return err
			}
			fr.Incomplete, fr.Warning = true, err.Error()
			log.Warn("android export is truncated (imported as far as it goes)", "path", p, "err", err)
		}
		if res.Stats.Skipped > 0 {
			log.Warn("android export: malformed records skipped", "path", p, "skipped", res.Stats.Skipped, "reasons", res.Stats.Reasons)
		}
		results = append(results, fr)
		cards := res.Contacts
		if cards == nil {
			cards = []model.Contact{}
		}
		s.setContacts(p, cards)
		mergeCards(known, cards)
		next.Known = knownCards(known)
		mark := fileMark{FP: fp, Incomplete: fr.Incomplete}
		if len(cards) <= maxStoredCards {
			mark.Contacts = cards
		}
		next.Files[p] = mark
		if err := checkpoint(w, next); err != nil {
			return err
		}
	}
	next.Known = knownCards(known)
	return checkpoint(w, next)
}

// mergeCards adds cards to byID, the newest name (Modified) winning.
func mergeCards(byID map[string]model.Contact, cards []model.Contact) {
	for _, c := range cards {
		if cur, ok := byID[c.ID]; !ok || c.Modified.After(cur.Modified) {
			byID[c.ID] = c
		}
	}
}

// knownCards is byID sorted by id, or nil past maxStoredCards (the
// watermark stays small; such a phone's names come from its configured
// files only).
func knownCards(byID map[string]model.Contact) []model.Contact {
	if len(byID) > maxStoredCards {
		return nil
	}
	out := make([]model.Contact, 0, len(byID))
	for _, c := range byID {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b model.Contact) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func (s *Source) setContacts(path string, cards []model.Contact) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.contacts == nil {
		s.contacts = map[string][]model.Contact{}
	}
	s.contacts[path] = cards
}

func checkpoint(w index.Writer, wm watermark) error {
	b, err := json.Marshal(wm)
	if err != nil {
		return fmt.Errorf("android watermark: %w", err)
	}
	return w.Checkpoint(b)
}

// Results returns what the last Sync did with each file.
func (s *Source) Results() []FileResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.results)
}

// Contacts returns the contact names the exports carry (Source "android",
// one card per number; the newest name wins across files), for
// contacts.NewBook. Names come from this process's Sync (read now, or kept
// in the watermark of an unchanged file); other files get a metadata-only
// pass.
func (s *Source) Contacts(ctx context.Context) ([]model.Contact, error) {
	paths, err := s.paths()
	if err != nil {
		return nil, err
	}
	byID := map[string]model.Contact{}
	s.mu.Lock()
	mergeCards(byID, s.known)
	s.mu.Unlock()
	for _, p := range paths {
		s.mu.Lock()
		cards, ok := s.contacts[p]
		s.mu.Unlock()
		if !ok {
			read := s.readContacts
			if read == nil {
				read = android.ReadContacts
			}
			cards, err = read(ctx, p, s.region())
			if err != nil && !errors.Is(err, android.ErrTruncated) {
				return nil, err
			}
		}
		mergeCards(byID, cards)
	}
	out := make([]model.Contact, 0, len(byID))
	for _, c := range byID {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b model.Contact) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// fpWindow is how much of each end of a file the fingerprint hashes.
const fpWindow = 64 << 10

// Fingerprint identifies a file's content cheaply: its size, modification
// time and a SHA-256 of its first and last 64 KiB (an export rewritten in
// place changes its tail, where the newest records and </smses> are).
func Fingerprint(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("android export: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("android export: %w", err)
	}
	if st.IsDir() {
		return "", fmt.Errorf("android export %s: is a folder, want an XML file", path)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%d\x00", st.Size(), st.ModTime().UnixNano())
	if _, err := io.CopyN(h, f, fpWindow); err != nil && err != io.EOF {
		return "", fmt.Errorf("android export %s: %w", path, err)
	}
	if st.Size() > 2*fpWindow {
		if _, err := f.Seek(-fpWindow, io.SeekEnd); err != nil {
			return "", fmt.Errorf("android export %s: %w", path, err)
		}
		if _, err := io.Copy(h, f); err != nil {
			return "", fmt.Errorf("android export %s: %w", path, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}
