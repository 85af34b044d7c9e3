// Package schemas holds real Messages database schemas (sqlite3 .schema
// dumps of Apple's databases, no data) so that the demo generator and every
// package's tests build their databases from the same, real definitions; see
// README.md for each dump's origin and licence.
package schemas

import (
	"embed"
	"fmt"
	"regexp"
)

//go:embed *.sql
var files embed.FS

// trigger matches a CREATE TRIGGER statement through its END.
var trigger = regexp.MustCompile(`(?s)CREATE TRIGGER.*?\nEND;`)

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

// Tables returns the DDL of [DDL] without its triggers: tables and indexes
// only. Messages' triggers call SQL functions only Messages.app registers,
// so a database that rows are deleted from outside Messages needs this form.
func Tables(name string) (string, error) {
	s, err := DDL(name)
	if err != nil {
		return "", err
	}
	return trigger.ReplaceAllString(s, ""), nil
}
