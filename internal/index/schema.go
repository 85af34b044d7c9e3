package index

// migrations are applied in order; PRAGMA user_version records how many ran.
// A migration never changes once released: add a new one instead. Each runs
// in its own transaction together with the user_version update.
//
// Layout notes (see docs/index.md):
//   - messages.id is assigned by the index, densely and monotonically; it is
//     the FTS rowid, the vector key and the index into the in-memory
//     docmeta columns. Ids are never reused (meta next_id).
//   - fts is contentless with detail=none and columnsize=0: it is a
//     posting-list engine; ranking, snippets and phrase checks run in Go over
//     the stored text with a tokenizer generated from SQLite's own unicode61
//     tables, so Go terms and FTS terms are identical. A row is removed
//     with FTS5's 'delete' command and the text it was indexed with
//     (indexText of the stored row), which needs no per-row docsize record
//     (migration 2; contentless_delete=1 kept one and cost 2.5x the FTS
//     build time).
//   - docmeta and veccodes hold fixed-size per-message records in chunks of
//     chunkSize ids, written in the same transaction as the rows they
//     describe, so a process loads them in milliseconds and they can never
//     disagree with the rows after a crash.
//   - docterms holds each searchable message's term record (length and
//     term frequencies, termrec.go) in chunks like docmeta, persisted with
//     it, so full-text ranking reads no text (migration 4).
//   - dossiers and triage are reserved for the features that build them;
//     every table holding per-conversation data has a conv column so Purge
//     can remove it.
var migrations = []string{
	// 1: initial schema.
	`
CREATE TABLE meta(
	key   TEXT PRIMARY KEY,
	value ANY
) WITHOUT ROWID;

CREATE TABLE sources(
	id        INTEGER PRIMARY KEY,
	key       TEXT NOT NULL UNIQUE,
	kind      TEXT NOT NULL,
	watermark BLOB,
	synced_at INTEGER,
	info      TEXT
);

CREATE TABLE conversations(
	id           INTEGER PRIMARY KEY,
	source       INTEGER NOT NULL,
	guid         TEXT NOT NULL,
	row_id       INTEGER NOT NULL DEFAULT 0,
	identifier   TEXT NOT NULL,
	kind         TEXT NOT NULL,
	display_name TEXT NOT NULL DEFAULT '',
	service      TEXT NOT NULL DEFAULT '',
	archived     INTEGER NOT NULL DEFAULT 0,
	msg_count    INTEGER NOT NULL DEFAULT 0,
	last_time    INTEGER NOT NULL DEFAULT 0,
	UNIQUE(source, guid)
);
CREATE INDEX conversations_identifier ON conversations(identifier);

CREATE TABLE handles(
	id     INTEGER PRIMARY KEY,
	handle TEXT NOT NULL UNIQUE,
	norm   TEXT NOT NULL,
	last10 TEXT NOT NULL DEFAULT ''
);
CREATE INDEX handles_norm ON handles(norm);
CREATE INDEX handles_last10 ON handles(last10);

CREATE TABLE participants(
	conv   INTEGER NOT NULL,
	handle INTEGER NOT NULL,
	pos    INTEGER NOT NULL,
	PRIMARY KEY(conv, handle)
) WITHOUT ROWID;
CREATE INDEX participants_handle ON participants(handle);

CREATE TABLE contacts(
	id     INTEGER PRIMARY KEY,
	source TEXT NOT NULL,
	ext_id TEXT NOT NULL,
	name   TEXT NOT NULL,
	data   TEXT NOT NULL,
	UNIQUE(source, ext_id)
);
CREATE TABLE contact_handles(
	contact INTEGER NOT NULL,
	key     TEXT NOT NULL,
	PRIMARY KEY(contact, key)
) WITHOUT ROWID;
CREATE INDEX contact_handles_key ON contact_handles(key);

CREATE TABLE messages(
	id             INTEGER PRIMARY KEY,
	source         INTEGER NOT NULL,
	guid           TEXT NOT NULL,
	row_id         INTEGER NOT NULL DEFAULT 0,
	conv           INTEGER NOT NULL,
	sender         INTEGER NOT NULL DEFAULT 0,
	from_me        INTEGER NOT NULL,
	kind           TEXT NOT NULL,
	detail         TEXT,
	service        TEXT,
	time           INTEGER NOT NULL,
	time_read      INTEGER,
	time_delivered INTEGER,
	time_edited    INTEGER,
	time_unsent    INTEGER,
	text           TEXT NOT NULL,
	search_extra   TEXT,
	text_source    TEXT,
	subject        TEXT,
	flags          INTEGER NOT NULL DEFAULT 0,
	error          INTEGER NOT NULL DEFAULT 0,
	reply_to       TEXT,
	reply_to_part  INTEGER,
	app            TEXT,
	effect         TEXT,
	extra          TEXT,
	searchable     INTEGER NOT NULL,
	hash           INTEGER NOT NULL
);

CREATE TABLE message_chats(
	conv INTEGER NOT NULL,
	msg  INTEGER NOT NULL,
	PRIMARY KEY(conv, msg)
) WITHOUT ROWID;
CREATE INDEX message_chats_msg ON message_chats(msg);

CREATE TABLE reactions(
	source  INTEGER NOT NULL,
	target  TEXT NOT NULL,
	part    INTEGER NOT NULL,
	sender  TEXT NOT NULL,
	slot    TEXT NOT NULL,
	from_me INTEGER NOT NULL,
	type    TEXT NOT NULL,
	emoji   TEXT NOT NULL DEFAULT '',
	guid    TEXT NOT NULL,
	conv    INTEGER NOT NULL,
	time    INTEGER NOT NULL,
	PRIMARY KEY(source, target, part, sender, slot)
) WITHOUT ROWID;
CREATE INDEX reactions_guid ON reactions(source, guid);
CREATE INDEX reactions_conv ON reactions(conv);

CREATE TABLE attachments(
	msg      INTEGER NOT NULL,
	idx      INTEGER NOT NULL,
	conv     INTEGER NOT NULL,
	guid     TEXT NOT NULL DEFAULT '',
	row_id   INTEGER NOT NULL DEFAULT 0,
	filename TEXT NOT NULL DEFAULT '',
	mime     TEXT NOT NULL DEFAULT '',
	uti      TEXT NOT NULL DEFAULT '',
	size     INTEGER NOT NULL DEFAULT 0,
	sticker  INTEGER NOT NULL DEFAULT 0,
	outgoing INTEGER NOT NULL DEFAULT 0,
	path     TEXT NOT NULL DEFAULT '',
	PRIMARY KEY(msg, idx)
) WITHOUT ROWID;
CREATE INDEX attachments_row ON attachments(row_id);
CREATE INDEX attachments_conv ON attachments(conv);

CREATE VIRTUAL TABLE fts USING fts5(
	text,
	content='',
	contentless_delete=1,
	detail=none,
	tokenize='unicode61 remove_diacritics 2'
);

CREATE TABLE terms(
	term TEXT PRIMARY KEY,
	df   INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE docmeta(
	chunk INTEGER PRIMARY KEY,
	ver   INTEGER NOT NULL,
	data  BLOB NOT NULL
);

CREATE TABLE vectors(
	id INTEGER PRIMARY KEY,
	q  BLOB NOT NULL
);
CREATE TABLE veccodes(
	chunk INTEGER PRIMARY KEY,
	ver   INTEGER NOT NULL,
	data  BLOB NOT NULL
);
CREATE TABLE embed_queue(
	id INTEGER PRIMARY KEY
);
CREATE TABLE embedder_state(
	key     TEXT PRIMARY KEY,
	data    BLOB NOT NULL,
	fit_docs INTEGER NOT NULL,
	fit_at  INTEGER NOT NULL
);

CREATE TABLE dossiers(
	id      INTEGER PRIMARY KEY,
	key     TEXT NOT NULL UNIQUE,
	conv    INTEGER,
	data    TEXT NOT NULL,
	upto    INTEGER NOT NULL DEFAULT 0,
	updated INTEGER NOT NULL
);
CREATE INDEX dossiers_conv ON dossiers(conv);
CREATE TABLE triage(
	conv    INTEGER PRIMARY KEY,
	data    TEXT NOT NULL,
	upto    INTEGER NOT NULL DEFAULT 0,
	updated INTEGER NOT NULL
);
`,
	// 2: FTS without the per-row docsize table (columnsize=0; rows are
	// deleted with the 'delete' command and their indexed text).
	`
DROP TABLE fts;
CREATE VIRTUAL TABLE fts USING fts5(
	text,
	content='',
	columnsize=0,
	detail=none,
	tokenize='unicode61 remove_diacritics 2'
);
INSERT INTO fts(rowid, text)
SELECT id, CASE WHEN search_extra IS NULL THEN text ELSE text || char(10) || search_extra END
FROM messages WHERE searchable = 1;
`,
	// 3: synced mail in its own tables (mail.go, docs/index.md "Mail").
	mailSchema,
	// 4: term records (termrec.go): per-message term frequencies and
	// lengths in chunks, so BM25 needs no text. Messages stored before
	// this migration have none (their text is read, as before) until they
	// are written again; docterms_from is where complete coverage starts
	// (Verify).
	`
CREATE TABLE docterms(
	chunk INTEGER PRIMARY KEY,
	ver   INTEGER NOT NULL,
	data  BLOB NOT NULL
);
INSERT INTO meta(key, value) SELECT 'docterms_from', coalesce((SELECT value FROM meta WHERE key = 'next_id'), 0);
`,
}

// ftsDelete removes a row from the FTS index; the text must be the one the
// row was indexed with (indexText of its stored text and search_extra).
const ftsDelete = "INSERT INTO fts(fts, rowid, text) VALUES('delete', ?, ?)"

// secondaryIndexes are the message indexes built after a bulk load (a
// B-tree built once from sorted input is several times faster than one
// maintained row by row) and kept from then on. Only two: filters by time,
// sender and flags run on the in-memory docmeta columns instead.
const secondaryIndexes = `
CREATE UNIQUE INDEX IF NOT EXISTS messages_guid ON messages(source, guid);
CREATE INDEX IF NOT EXISTS messages_conv_time ON messages(conv, time);
`

// perConversationTables lists every table whose rows belong to one
// conversation through a conv column; Purge deletes from each. A new table
// holding conversation data must be added here (TestPurge checks that every
// table with a conv column is listed).
var perConversationTables = []string{"message_chats", "reactions", "attachments", "dossiers", "triage", "participants"}
