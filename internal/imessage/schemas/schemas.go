// Package schemas holds real Messages database schemas (sqlite3 .schema
// dumps of Apple's databases, no data) so that every package's tests build
// their fixture databases from the same, real definitions. It is imported by
// tests only; see README.md for each dump's origin and licence.
package schemas

import (
	"embed"
	"fmt"
	"regexp"
)

//go:embed *.sql
var files embed.FS

// reservedTable matches statements creating sqlite_* tables, which SQLite
// reserves and creates itself.
var reservedTable = regexp.MustCompile(`(?s)CREATE TABLE sqlite_\w+\s*\([^)]*\);`)

// Raw returns the dump named name (for example "macos15" or "iOS6.1.6")
// byte for byte as published.
func Raw(name string) (string, error) {
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		return "", fmt.Errorf("schema %q: %w", name, err)
	}
	return string(b), nil
}

// DDL returns the dump named name ready to execute on an empty database:
// exactly as dumped (indexes and triggers included) except for the sqlite_*
// tables.
func DDL(name string) (string, error) {
	s, err := Raw(name)
	if err != nil {
		return "", err
	}
	return reservedTable.ReplaceAllString(s, ""), nil
}
