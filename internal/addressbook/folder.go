package addressbook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Folder is a local folder of vCard files, one card per .vcf (the layout
// vdirsyncer and most exporters write). It is one address book named
// after the account. Writes are atomic: a temporary file in the same
// folder, fsync, then rename (or, for a new card, a hard link that fails
// when the name is taken), then fsync of the folder.
type Folder struct {
	account, dir string
	// mu orders this process's writes, so the If-Match comparison and
	// the rename that follows it are one step for every tool call here.
	mu sync.Mutex
}

// NewFolder is the vCard folder dir of account.
func NewFolder(account, dir string) *Folder { return &Folder{account: account, dir: dir} }

// Account implements Backend.
func (f *Folder) Account() string { return f.account }

// Kind implements Backend.
func (f *Folder) Kind() string { return "vcard-folder" }

// Dir is the folder, for status and for the messages index's sources.
func (f *Folder) Dir() string { return f.dir }

// Books implements Backend.
func (f *Folder) Books(context.Context) ([]Book, error) {
	fi, err := os.Stat(f.dir)
	if err != nil {
		return nil, fmt.Errorf("contacts account %q: folder: %w", f.account, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("contacts account %q: %s is not a folder", f.account, f.dir)
	}
	return []Book{{Account: f.account, Name: f.account, Href: f.dir}}, nil
}

func etagOf(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:16])
}

// Objects implements Backend: the .vcf files of the folder (not its
// subfolders; hidden and temporary files are skipped), sorted by name.
func (f *Folder) Objects(ctx context.Context, b Book) ([]Object, error) {
	ents, err := os.ReadDir(f.dir)
	if err != nil {
		return nil, fmt.Errorf("contacts account %q: read the folder: %w", f.account, err)
	}
	var out []Object
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.EqualFold(filepath.Ext(name), ".vcf") {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o, err := f.Get(ctx, name)
		if err != nil {
			continue // removed meanwhile, or unreadable: not a card here
		}
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Href < out[j].Href })
	return out, nil
}

// path turns an href (a file name) into a path inside the folder, never
// outside it.
func (f *Folder) path(href string) (string, error) {
	if href == "" || href != filepath.Base(href) || href == "." || href == ".." || strings.ContainsAny(href, `/\`) {
		return "", fmt.Errorf("contacts account %q: %q is not a file of the folder", f.account, href)
	}
	return filepath.Join(f.dir, href), nil
}

// Get implements Backend.
func (f *Folder) Get(_ context.Context, href string) (Object, error) {
	p, err := f.path(href)
	if err != nil {
		return Object{}, err
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Object{}, ErrNotFound
	}
	if err != nil {
		return Object{}, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxCard {
		return Object{}, fmt.Errorf("contacts account %q: %s is not a regular vCard file", f.account, href)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return Object{}, err
	}
	return Object{Href: href, ETag: etagOf(data), Data: data}, nil
}

// Put implements Backend.
func (f *Folder) Put(_ context.Context, _ Book, name, href string, data []byte, cond Cond) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if href == "" {
		href = name
	}
	p, err := f.path(href)
	if err != nil {
		return "", err
	}
	if cond.IfMatch != "" {
		cur, err := f.Get(context.Background(), href)
		if errors.Is(err, ErrNotFound) || (err == nil && cur.ETag != cond.IfMatch) {
			return "", ErrPrecondition
		}
		if err != nil {
			return "", err
		}
	}
	tmp, err := os.CreateTemp(f.dir, ".tidings-*.tmp")
	if err != nil {
		return "", fmt.Errorf("contacts account %q: write: %w", f.account, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("contacts account %q: write: %w", f.account, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("contacts account %q: write: %w", f.account, err)
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return "", err
	}
	if cond.IfNoneMatch {
		// link fails when the name is taken: no card is ever replaced by
		// a create, even by another program writing the folder.
		if err := os.Link(tmp.Name(), p); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return "", ErrPrecondition
			}
			return "", fmt.Errorf("contacts account %q: write: %w", f.account, err)
		}
	} else if err := os.Rename(tmp.Name(), p); err != nil {
		return "", fmt.Errorf("contacts account %q: write: %w", f.account, err)
	}
	return href, syncDir(f.dir)
}

// Delete implements Backend.
func (f *Folder) Delete(_ context.Context, href, etag string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.path(href)
	if err != nil {
		return err
	}
	cur, err := f.Get(context.Background(), href)
	if err != nil {
		return err
	}
	if etag != "" && cur.ETag != etag {
		return ErrPrecondition
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("contacts account %q: delete: %w", f.account, err)
	}
	return syncDir(f.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
