// Package dossier builds the living per-person dossier behind the
// get_contact_dossier tool: background (names, handles, services, first
// and last contact, volume by month), commitments (promises, requests,
// debts and plans, with who, what, when and how much, open until later
// messages settle them), and relationship history (activity and reply
// times per quarter, recurring topics, the last significant exchange).
//
// The dossier is extractive: rules and patterns over the messages, no
// model. Every claim cites the ids of the messages it rests on. An
// optional OpenAI-compatible chat endpoint may add a short summary on top,
// always marked as generated.
//
// A Dossier is a serialisable state: Update folds new messages into it, and
// folding messages in any number of batches gives exactly the state that
// Build gives for all of them at once. The index stores the JSON (see
// Store) and the service layer calls Refresh when the tool is used. The
// package imports neither the MCP SDK nor the index.
package dossier
