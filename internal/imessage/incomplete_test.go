package imessage

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
)

// incompleteDB builds a database from a real schema (tables and indexes,
// no triggers), fills it with the reader tests' scenario, then applies
// damage: drop a table, or rebuild one without some columns.
func incompleteDB(t *testing.T, schema string, damage func(db *sql.DB) error) string {
	t.Helper()
	ddl, err := schemas.Tables(schema)
	if err != nil {
		t.Fatal(err)
	}
	db, path := chatdb.CreateForTest(t, ddl)
	defer db.Close()
	f := &fixture{t: t, db: db, path: path, cols: map[string]map[string]bool{}}
	for _, tb := range []string{"message", "chat", "handle", "chat_message_join", "chat_handle_join", "attachment", "message_attachment_join"} {
		f.cols[tb] = columnsOf(t, db, tb)
	}
	populate(f)
	if err := damage(db); err != nil {
		t.Fatal(err)
	}
	return path
}

func columnsOf(t *testing.T, db *sql.DB, table string) map[string]bool {
	t.Helper()
	rows, err := db.Query("SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		set[n] = true
	}
	return set
}

// dropTable removes a table.
func dropTable(table string) func(*sql.DB) error {
	return func(db *sql.DB) error {
		_, err := db.Exec("DROP TABLE " + table)
		return err
	}
}

// dropColumns rebuilds table without cols (ALTER TABLE DROP COLUMN refuses
// indexed and UNIQUE columns, which are exactly the interesting ones).
func dropColumns(table string, cols ...string) func(*sql.DB) error {
	return func(db *sql.DB) error {
		rows, err := db.Query("SELECT name FROM pragma_table_info(?)", table)
		if err != nil {
			return err
		}
		var keep []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			drop := false
			for _, c := range cols {
				drop = drop || c == n
			}
			if !drop {
				keep = append(keep, `"`+n+`"`)
			}
		}
		rows.Close()
		for _, q := range []string{
			"CREATE TABLE damaged AS SELECT ROWID AS ROWID, " + strings.Join(keep, ", ") + " FROM " + table,
			"DROP TABLE " + table,
			"ALTER TABLE damaged RENAME TO " + table,
		} {
			if _, err := db.Exec(q); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestIncompleteSchemaIsNamed: a chat.db or sms.db that lacks a table or a
// column the reader needs is refused at Open with ErrIncompleteSchema and a
// sentence naming the table and column (docs/imessage.md), never read as
// "no messages" or with every date, sender or direction silently zero; and
// `tidings doctor`'s check says so with a fix.
func TestIncompleteSchemaIsNamed(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, schema string
		damage       func(*sql.DB) error
		want         string
	}{
		{"message table missing", "macos15", dropTable("message"), "table message is missing"},
		{"chat table missing", "macos15", dropTable("chat"), "table chat is missing"},
		{"handle table missing", "macos15", dropTable("handle"), "table handle is missing"},
		{"chat_message_join missing", "macos15", dropTable("chat_message_join"), "table chat_message_join is missing"},
		{"message.guid", "macos15", dropColumns("message", "guid"), "table message has no column guid"},
		{"message.date", "macos15", dropColumns("message", "date"), "table message has no column date"},
		{"message.is_from_me", "macos15", dropColumns("message", "is_from_me"), "table message has no column is_from_me"},
		{"message.handle_id", "macos15", dropColumns("message", "handle_id"), "table message has no column handle_id"},
		{"message bodies", "macos15", dropColumns("message", "text", "attributedBody"), "table message has neither a text nor an attributedBody column"},
		{"chat.guid", "macos15", dropColumns("chat", "guid"), "table chat has no column guid"},
		{"handle.id", "macos15", dropColumns("handle", "id"), "table handle has no column id"},
		{"chat_message_join.message_id", "macos15", dropColumns("chat_message_join", "message_id"), "table chat_message_join has no column message_id"},
		{"chat_handle_join.handle_id", "macos15", dropColumns("chat_handle_join", "handle_id"), "table chat_handle_join has no column handle_id"},
		{"deleted_messages.guid", "macos15", dropColumns("deleted_messages", "guid"), "table deleted_messages has no column guid"},
		{"recently deleted without dates", "macos15", dropColumns("chat_recoverable_message_join", "delete_date"), "table chat_recoverable_message_join has no column delete_date"},
		{"attachment join", "macos15", dropColumns("message_attachment_join", "attachment_id"), "table message_attachment_join has no column attachment_id"},
		{"sms.db message.date", "iOS6.1.6", dropColumns("message", "date"), "table message has no column date"},
		{"sms.db message table missing", "iOS6.1.6", dropTable("message"), "table message is missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := incompleteDB(t, tc.schema, tc.damage)
			r, err := Open(ctx, path, Options{})
			if err == nil {
				r.Close()
				t.Fatalf("Open accepted a database where %s", tc.want)
			}
			if !errors.Is(err, ErrIncompleteSchema) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open: %v\nwant ErrIncompleteSchema saying %q", err, tc.want)
			}
			checks := CheckDatabase(ctx, path)
			last := checks[len(checks)-1]
			if last.OK || !strings.Contains(last.Detail, tc.want) || !strings.Contains(last.Fix, "chat.db") {
				t.Errorf("doctor: %+v\nwant a failed check naming %q with a fix", last, tc.want)
			}
		})
	}
	t.Run("not a Messages database at all", func(t *testing.T) {
		path := incompleteDB(t, "macos15", func(db *sql.DB) error {
			for _, tb := range []string{"message", "chat"} {
				if err := dropTable(tb)(db); err != nil {
					return err
				}
			}
			return nil
		})
		if _, err := Open(ctx, path, Options{}); !errors.Is(err, ErrNotMessagesDB) {
			t.Errorf("Open: %v, want ErrNotMessagesDB", err)
		}
	})
}
