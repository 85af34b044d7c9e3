package policy

import (
	"fmt"
	"path/filepath"
	"sync"
)

// Store keeps the current policy of a folder and reloads it when its files
// change. Each [Store.Current] call lstats the policy files (three, or two
// with a hardened list, plus the contacts directory) and re-reads them only
// when one was created, removed, replaced or modified, so it is cheap
// enough to call once per request.
type Store struct {
	dir  string
	opts Options

	mu     sync.Mutex
	cur    *Policy
	stamps []stamp
	dirSt  stamp
}

// NewStore loads the policy under dir and returns a store for it. It fails
// when the first load fails.
func NewStore(dir string, opts Options) (*Store, error) {
	s := &Store{dir: dir, opts: opts}
	if _, err := s.Current(); err != nil {
		return nil, err
	}
	return s, nil
}

// Current returns the policy, reloading it first if a file changed. When
// the files changed and the new content is invalid or unsafe, it returns
// the error and no policy — it never falls back to the previous one, which
// might be missing an entry the person just added.
func (s *Store) Current() (*Policy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed, err := s.changed()
	if err != nil {
		s.cur = nil
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if !changed && s.cur != nil {
		return s.cur, nil
	}
	dirSt, err := statStamp(filepath.Join(s.dir, ContactsDir))
	if err != nil {
		s.cur = nil
		return nil, fmt.Errorf("read policy: %w", err)
	}
	p, stamps, err := load(s.dir, s.opts)
	if err != nil {
		s.cur, s.stamps = nil, nil
		return nil, err
	}
	s.cur, s.stamps, s.dirSt = p, stamps, dirSt
	return p, nil
}

// changed reports whether any watched file differs from the last load.
func (s *Store) changed() (bool, error) {
	if s.cur == nil {
		return true, nil
	}
	d, err := statStamp(filepath.Join(s.dir, ContactsDir))
	if err != nil {
		return false, err
	}
	if !sameStamp(d, s.dirSt, false) {
		return true, nil
	}
	for _, old := range s.stamps {
		now, err := statStamp(old.path)
		if err != nil {
			return false, err
		}
		if !sameStamp(now, old, true) {
			return true, nil
		}
	}
	return false, nil
}

// sameStamp compares two stamps; content=false ignores size and mtime
// (a directory's mtime changes whenever a temp file is created in it).
func sameStamp(a, b stamp, content bool) bool {
	if a.exists != b.exists || a.ino != b.ino || a.dev != b.dev || a.mode != b.mode || a.uid != b.uid {
		return false
	}
	return !content || a.size == b.size && a.mtime == b.mtime
}
