// Package imessage reads Apple's Messages databases — macOS chat.db and iOS
// sms.db, live or from an unencrypted iPhone backup — and returns plain
// model values (conversations, messages, reactions, attachments).
//
// The reader never writes: a live chat.db is opened with SQLite's
// "file:…?mode=ro" so that rows still in the WAL are seen, and no pragma that
// writes is ever set, so a copy in rollback-journal mode opens as well. Only
// when a read-only open is refused does the reader fall back to a private copy
// of the database (db + -wal), and then it says so: Reader.Stale reports that
// results may be stale.
//
// Columns and tables differ between every iOS and macOS release (and even
// between two machines on one release), so the reader probes them once with
// pragma_table_info and composes its queries with neutral literals for what
// is missing (see Capabilities). Queries are tested against the real schemas
// of iOS 6.1.6, 9.2.1, 10.2, 11.2 and macOS 15.
//
// # Syncing an index
//
// The API is shaped for incremental sync by ROWID watermarks:
//
//	convs, _ := r.Conversations(ctx)            // small: every chat with participants
//	max, _ := r.MaxRowID(ctx)                   // message watermark to store after a full pass
//	r.Messages(ctx, lastRowID, func(m model.Message) error { … })  // new rows, ROWID order
//	r.Changed(ctx, lastSync, func(m model.Message) error { … })    // edits, unsends, read/delivery, recently deleted
//	r.Deleted(ctx, lastDeletedRowID, func(d Deletion) error { … }) // tombstones (guids) of deleted rows
//
// Messages streams in pages of a few thousand rows, each page in its own
// short read transaction, so a full pass over a million rows runs in
// constant memory and never holds a snapshot long enough to stall Apple's WAL
// checkpoints. A message that belongs to several chats is delivered once, with
// every chat in ConversationIDs.
package imessage
