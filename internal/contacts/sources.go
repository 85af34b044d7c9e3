package contacts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Source is a place to read cards from. Kind is SourceAddressBook (a macOS
// AddressBook folder or one .abcddb file), SourceIOSAddressBook (an
// AddressBook.sqlitedb) or SourceVCard (a .vcf file or a folder of them).
type Source struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// Status reports how reading one file went. An AddressBook folder yields
// one Status per database it holds.
type Status struct {
	Kind  string `json:"kind"`
	Path  string `json:"path"`
	Cards int    `json:"cards"`
	// Err is nil when the file was read completely. With Cards > 0 it
	// means the read was partial (e.g. a *ParseError in a vCard file): the
	// cards that were read are used and the problem is reported.
	Err error `json:"-"`
}

// Partial reports whether cards were read despite an error.
func (s Status) Partial() bool { return s.Err != nil && s.Cards > 0 }

// DefaultAddressBookDir returns the macOS Contacts folder under home.
func DefaultAddressBookDir(home string) string {
	return filepath.Join(home, "Library", "Application Support", "AddressBook")
}

// DefaultSources returns the contact sources read when none are given: the
// user's AddressBook folder on macOS (goos "darwin"), nothing elsewhere.
func DefaultSources(home, goos string) []Source {
	if goos != "darwin" || home == "" {
		return nil
	}
	return []Source{{Kind: SourceAddressBook, Path: DefaultAddressBookDir(home)}}
}

// DetectSource tells what a --contacts PATH is: a .vcf file or a folder of
// .vcf files, a macOS AddressBook folder or .abcddb file, or an iOS
// AddressBook.sqlitedb (by name, or by its ABPerson table for backup files
// named by hash).
func DetectSource(path string) (Source, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Source{}, fmt.Errorf("contacts source: %w", err)
	}
	if st.IsDir() {
		if _, err := FindAddressBooks(path); err == nil {
			return Source{Kind: SourceAddressBook, Path: path}, nil
		}
		if _, err := os.Stat(filepath.Join(path, "AddressBook.sqlitedb")); err == nil {
			return Source{Kind: SourceIOSAddressBook, Path: filepath.Join(path, "AddressBook.sqlitedb")}, nil
		}
		if files, _ := vcardFiles(path); len(files) > 0 {
			return Source{Kind: SourceVCard, Path: path}, nil
		}
		return Source{}, fmt.Errorf("contacts source %s: no .vcf files, %s or AddressBook.sqlitedb in folder", path, AddressBookFile)
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".vcf", ".vcard":
		return Source{Kind: SourceVCard, Path: path}, nil
	case ".abcddb":
		return Source{Kind: SourceAddressBook, Path: path}, nil
	case ".sqlitedb":
		return Source{Kind: SourceIOSAddressBook, Path: path}, nil
	}
	head, err := readHead(path, 4096)
	if err != nil {
		return Source{}, fmt.Errorf("contacts source: %w", err)
	}
	switch {
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return detectSQLite(path)
	case bytes.Contains(bytes.ToUpper(head), []byte("BEGIN:VCARD")):
		return Source{Kind: SourceVCard, Path: path}, nil
	}
	return Source{}, fmt.Errorf("contacts source %s: not a vCard file or contacts database", path)
}

// detectSQLite tells an AddressBook-v22.abcddb from an AddressBook.sqlitedb
// by their tables.
func detectSQLite(path string) (Source, error) {
	ctx := context.Background()
	db, err := openReadOnly(ctx, path)
	if err != nil {
		return Source{}, fmt.Errorf("contacts source: %w", err)
	}
	defer db.Close()
	for kind, table := range map[string]string{SourceAddressBook: "ZABCDRECORD", SourceIOSAddressBook: "ABPerson"} {
		cols, err := columns(ctx, db, table)
		if err != nil {
			return Source{}, fmt.Errorf("contacts source %s: %w", path, err)
		}
		if len(cols) > 0 {
			return Source{Kind: kind, Path: path}, nil
		}
	}
	return Source{}, fmt.Errorf("contacts source %s: SQLite file without ZABCDRECORD or ABPerson table", path)
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:k], nil
}

// vcardFiles lists the .vcf/.vcard files directly inside dir, sorted.
func vcardFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("vcard folder: %w", err)
	}
	var out []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.Type().IsRegular() && (ext == ".vcf" || ext == ".vcard") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Load reads every source and returns all cards with one Status per file
// (or per source that could not be listed). A failing source never stops
// the others; callers report the statuses (see Checks).
func Load(ctx context.Context, sources []Source) ([]model.Contact, []Status) {
	var cards []model.Contact
	var statuses []Status
	add := func(kind, path string, cs []model.Contact, err error) {
		cards = append(cards, cs...)
		statuses = append(statuses, Status{Kind: kind, Path: path, Cards: len(cs), Err: err})
	}
	for _, src := range sources {
		if err := ctx.Err(); err != nil {
			add(src.Kind, src.Path, nil, err)
			continue
		}
		switch src.Kind {
		case SourceAddressBook:
			dbs, err := FindAddressBooks(src.Path)
			if err != nil {
				add(src.Kind, src.Path, nil, err)
				continue
			}
			for _, db := range dbs {
				cs, err := ReadAddressBook(ctx, db)
				add(src.Kind, db, cs, err)
			}
		case SourceIOSAddressBook:
			cs, err := ReadIOSAddressBook(ctx, src.Path)
			add(src.Kind, src.Path, cs, err)
		case SourceVCard:
			files := []string{src.Path}
			if st, err := os.Stat(src.Path); err == nil && st.IsDir() {
				if files, err = vcardFiles(src.Path); err != nil {
					add(src.Kind, src.Path, nil, err)
					continue
				}
				if len(files) == 0 {
					add(src.Kind, src.Path, nil, errors.New("no .vcf files in folder"))
					continue
				}
			}
			for _, f := range files {
				cs, err := ReadVCardFile(f)
				add(src.Kind, f, cs, err)
			}
		default:
			add(src.Kind, src.Path, nil, fmt.Errorf("unknown contacts source kind %q", src.Kind))
		}
	}
	return cards, statuses
}

// Open loads the sources and builds a Book with the given region. The
// error is only about the region; source problems are in the statuses.
func Open(ctx context.Context, sources []Source, region string) (*Book, []Status, error) {
	cards, statuses := Load(ctx, sources)
	b, err := NewBook(cards, region)
	if err != nil {
		return nil, statuses, err
	}
	return b, statuses, nil
}
