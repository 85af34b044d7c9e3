package schemas

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestDDLCreatesMessageTables executes every Messages dump on an empty
// database and checks the tables every reader needs exist.
func TestDDLCreatesMessageTables(t *testing.T) {
	for _, name := range []string{"iOS6.1.6", "iOS9.2.1", "iOS10.2", "iOS11.2", "macos15"} {
		t.Run(name, func(t *testing.T) {
			ddl, err := DDL(name)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(ddl, "CREATE TABLE sqlite_") {
				t.Fatal("reserved sqlite_* table left in the DDL")
			}
			db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "chat.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(ddl); err != nil {
				t.Fatalf("exec %s: %v", name, err)
			}
			for _, table := range []string{"message", "handle", "chat", "chat_message_join", "chat_handle_join", "attachment"} {
				var n int
				if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 1 {
					t.Errorf("%s: table %s missing", name, table)
				}
			}
		})
	}
}

func TestUnknownSchemaIsAnError(t *testing.T) {
	if _, err := DDL("macos99"); err == nil {
		t.Fatal("DDL of an unknown schema returned no error")
	}
}

func TestTablesHasNoTriggers(t *testing.T) {
	full, err := DDL("macos15")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := Tables("macos15")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(full, "CREATE TRIGGER") {
		t.Fatal("the macOS 15 dump has no trigger: the test no longer tests anything")
	}
	if strings.Contains(tables, "CREATE TRIGGER") {
		t.Error("Tables kept a trigger")
	}
	for _, want := range []string{"CREATE TABLE message", "CREATE INDEX"} {
		if !strings.Contains(tables, want) {
			t.Errorf("Tables lost %q", want)
		}
	}
}
