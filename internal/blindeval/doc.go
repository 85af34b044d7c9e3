// Package blindeval is the blind evaluation of issue 20: labelled data that
// an outsider wrote from the seeds' definitions alone (testdata/README.md),
// scored through the product's own path — a chat.db on the real schema, the
// imessage reader, the index, the query layer and a real MCP client for
// review_messages and search_messages; the Android exports through the
// androidindex source and the contact book. The commitment set of issue 21
// scores the dossier's extractor with the matcher of docs/dossier.md
// "Evaluation" (internal/dossier/dossiereval).
//
// It is test-only: the package holds no product code. Run it with
//
//	go test ./internal/blindeval -run TestBlind -v
//
// The dev half is scored on every run. The heldout half is scored only when
// TIDINGS_BLIND_HELDOUT=1, and then only aggregates are printed: whoever
// tunes the rules must not see its threads, queries or names
// (docs/triage.md, docs/search-quality.md).
package blindeval
