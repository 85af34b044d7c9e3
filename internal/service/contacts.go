package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// FileBook is a ContactBook over configured contacts files (AddressBook
// folders or databases, iOS AddressBook.sqlitedb, vCard files or folders).
// It reloads them when a file's size or modification time changes, checked
// at most once per second, and calls OnLoad with the fresh cards (the serve
// wiring pushes them into the index so labels use the same names).
type FileBook struct {
	Paths  []string
	Region string
	// Sources are further card sources read on every (re)load, such as the
	// contact names an Android export carries (androidindex.Source);
	// SourceFiles are their files, whose changes trigger a reload like a
	// change of Paths does.
	Sources     []CardSource
	SourceFiles []string
	// OnLoad, when set, receives every fresh load (source key → cards).
	OnLoad func(ctx context.Context, cards map[string][]model.Contact) error
	Logger func(msg string, args ...any)

	mu        sync.Mutex
	book      *contacts.Book
	sig       string
	checked   time.Time
	err       error
	listeners []func(*contacts.Book)
}

// notify calls fn with every book loaded from now on, and at once with the
// current one if there is one. fn must not block or call back into f.
func (f *FileBook) notify(fn func(*contacts.Book)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listeners = append(f.listeners, fn)
	if f.book != nil {
		fn(f.book)
	}
}

// Book implements ContactBook.
func (f *FileBook) Book(ctx context.Context) (*contacts.Book, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.book != nil && time.Since(f.checked) < time.Second {
		return f.book, f.err
	}
	f.checked = time.Now()
	sig := filesSignature(append(slices.Clone(f.Paths), f.SourceFiles...))
	if f.book != nil && sig == f.sig {
		return f.book, f.err
	}
	perSource := map[string][]model.Contact{}
	var all []model.Contact
	var problems []string
	for _, p := range f.Paths {
		src, err := contacts.DetectSource(p)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		cards, sts := contacts.Load(ctx, []contacts.Source{src})
		for _, st := range sts {
			if st.Err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", st.Path, st.Err))
			}
		}
		abs, _ := filepath.Abs(p)
		perSource["contacts:"+abs] = cards
		all = append(all, cards...)
	}
	for _, cs := range f.Sources {
		cards, err := cs.Contacts(ctx)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", cs.Key(), err))
			continue
		}
		perSource[cs.Key()] = cards
		all = append(all, cards...)
	}
	b, err := contacts.NewBook(all, f.Region)
	if err != nil {
		return nil, fmt.Errorf("contacts: %w", err)
	}
	if len(problems) > 0 && f.Logger != nil {
		f.Logger("some contacts could not be read", "problems", strings.Join(problems, "; "))
	}
	if f.OnLoad != nil {
		if err := f.OnLoad(ctx, perSource); err != nil && f.Logger != nil {
			f.Logger("contacts not stored in the index", "err", err)
		}
	}
	f.book, f.sig, f.err = b, sig, nil
	for _, fn := range f.listeners {
		fn(b)
	}
	return b, nil
}

// filesSignature summarises the size and modification time of the files
// under paths (folders walked a few levels deep, at most 500 files).
func filesSignature(paths []string) string {
	var b strings.Builder
	n := 0
	for _, p := range paths {
		root := filepath.Clean(p)
		depth0 := strings.Count(root, string(filepath.Separator))
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || n > 500 {
				return nil
			}
			if d.IsDir() {
				if strings.Count(path, string(filepath.Separator))-depth0 > 4 {
					return filepath.SkipDir
				}
				return nil
			}
			if fi, err := d.Info(); err == nil {
				n++
				fmt.Fprintf(&b, "%s|%d|%d\n", path, fi.Size(), fi.ModTime().UnixNano())
			}
			return nil
		})
		if _, err := os.Stat(root); err != nil {
			fmt.Fprintf(&b, "%s|missing\n", root)
		}
	}
	return b.String()
}

// CardSource yields address-book cards from a message source (the index's
// ContactSource shape; androidindex.Source implements it). Key names the
// source in the index's contacts ("android:sms-backup-restore").
type CardSource interface {
	Key() string
	Contacts(ctx context.Context) ([]model.Contact, error)
}

// StaticBook is a ContactBook holding one fixed book.
type StaticBook struct{ B *contacts.Book }

// Book implements ContactBook.
func (s StaticBook) Book(context.Context) (*contacts.Book, error) { return s.B, nil }

// contactBook returns the address book, or nil when none is configured.
func (s *Service) contactBook(ctx context.Context) (*contacts.Book, error) {
	if s.book == nil {
		return nil, nil
	}
	b, err := s.book.Book(ctx)
	if err != nil {
		return nil, fmt.Errorf("contacts: %w", err)
	}
	return b, nil
}

// LookupParams are lookup_contacts' arguments.
type LookupParams struct {
	// Name is matched against full, first, last and nick names (case and
	// diacritics ignored): exact names first, then prefixes and words.
	Name string
	// Unfiltered skips the read policy (the manager bridge role only).
	Unfiltered bool
}

// ContactMatch is one person, as in the bridge protocol's contacts_lookup:
// phone_last10 or email (the primary handle that the policy allows), plus the
// contact_id get_contact_dossier takes.
type ContactMatch struct {
	Name        string `json:"name"`
	PhoneLast10 string `json:"phone_last10,omitempty"`
	Email       string `json:"email,omitempty"`
	ContactID   string `json:"contact_id"`
	// OtherHandles counts the person's further phones and addresses.
	OtherHandles int `json:"other_handles,omitempty"`
}

// ContactLookup is lookup_contacts' result.
type ContactLookup struct {
	Query      string         `json:"query"`
	MatchCount int            `json:"match_count"`
	Matches    []ContactMatch `json:"matches"`
	// Total counts every allowed match; Truncated says the list stops at 25.
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
	// Ambiguous is true when the name does not single out one person.
	Ambiguous bool `json:"ambiguous"`
}

// LookupContacts finds people by name (at most 25), filtered by the read
// policy: a person with a blocked handle is not shown at all, and in
// allowlist mode only allowlisted handles are.
func (s *Service) LookupContacts(ctx context.Context, prm LookupParams) (ContactLookup, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return ContactLookup{}, err
	}
	name := trimRef(prm.Name)
	if name == "" {
		return ContactLookup{}, userErr("name is required: give part of the person's name, e.g. \"Sam\"")
	}
	b, err := s.contactBook(ctx)
	if err != nil {
		return ContactLookup{}, err
	}
	if b == nil {
		return ContactLookup{}, userErr("no contacts source is configured, so names cannot be looked up (set contacts in config.toml or pass --contacts)")
	}
	keep := func(pp contacts.Person) bool { _, ok := allowPerson(p, handleKeys(pp)); return ok }
	if prm.Unfiltered {
		keep = nil
	}
	res, err := b.Lookup(name, keep)
	if forms := output.NameForms(name); err == nil && res.Total == 0 && len(forms) > 1 {
		// The escaped form of a name an answer showed (output.Name).
		res, err = b.Lookup(forms[1], keep)
	}
	switch {
	case errors.Is(err, contacts.ErrLongQuery):
		return ContactLookup{}, userErr("name is longer than %d characters; give a shorter part of the name", contacts.MaxQueryRunes)
	case errors.Is(err, contacts.ErrEmptyQuery):
		return ContactLookup{}, userErr("name is required: give part of the person's name, e.g. \"Sam\"")
	case err != nil:
		return ContactLookup{}, fmt.Errorf("look up contacts: %w", err)
	}
	out := ContactLookup{Query: output.Name(name), Matches: []ContactMatch{}, Total: res.Total, Truncated: res.Truncated, Ambiguous: res.Ambiguous}
	for _, m := range res.Matches {
		pp, ok := b.Person(m.PersonID)
		if !ok {
			continue
		}
		out.Matches = append(out.Matches, s.contactMatch(p, pp, prm.Unfiltered))
	}
	out.MatchCount = len(out.Matches)
	return out, nil
}

// contactMatch builds a match from the handles the policy allows.
func (s *Service) contactMatch(p *policy.Policy, pp contacts.Person, unfiltered bool) ContactMatch {
	m := ContactMatch{Name: output.Name(pp.Name), ContactID: pp.ID}
	var hs []contacts.Handle
	for _, h := range pp.Handles {
		if unfiltered || p.AllowHandle(h.Key).Allowed {
			hs = append(hs, h)
		}
	}
	// Primary, as contacts.Person.Primary chooses: the first phone, else
	// the first e-mail, else the first other handle.
	pi := -1
	for _, kind := range []contacts.Kind{contacts.KindPhone, contacts.KindEmail} {
		if pi < 0 {
			pi = slices.IndexFunc(hs, func(h contacts.Handle) bool { return h.Kind == kind })
		}
	}
	if pi < 0 && len(hs) > 0 {
		pi = 0
	}
	if pi >= 0 {
		h := hs[pi]
		if h.Kind == contacts.KindEmail {
			m.Email = output.Name(h.Key)
		} else {
			m.PhoneLast10 = output.Name(cmpOr(h.Last10, h.Key))
		}
		m.OtherHandles = len(hs) - 1
	}
	return m
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// handleKeys lists a person's handles (normalised keys).
func handleKeys(pp contacts.Person) []string {
	out := make([]string, 0, len(pp.Handles))
	for _, h := range pp.Handles {
		out = append(out, h.Key)
	}
	return out
}

// isHandleLike reports whether s is a phone number or an e-mail address
// rather than a name or a chat id.
func isHandleLike(s string) bool {
	if strings.Contains(s, "@") {
		return true
	}
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune("+-() .", r):
		default:
			return false
		}
	}
	return digits >= 3
}
