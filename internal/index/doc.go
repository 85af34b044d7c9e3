// Package index is Tidings' message index and its one query layer: every
// surface (MCP tools, bridge helper, CLI) reads messages through it.
//
// The index is a SQLite database in WAL mode (index file 0600 in a 0700
// folder) synced incrementally from sources (chat.db, iOS backups, Android
// exports) through the Source interface. Read policy is applied at ingestion
// (a blocked thread never enters) and again at query time.
//
// Search has four modes: fulltext (BM25 over an FTS5 word index with
// stop-words, stemming, typo tolerance and relative dates), substring
// (case- and diacritic-insensitive, newest first, verified against the text),
// semantic (dot product over the embedder's vectors with a binary prefilter)
// and hybrid (reciprocal rank fusion of fulltext and semantic). Every answer
// says whether its scan was complete. See docs/index.md for the design and
// the measurements behind it.
package index
