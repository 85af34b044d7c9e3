// Package triage decides which recent conversations need the owner's
// attention (the review_messages tool) and measures how fast the owner
// replies (get_response_stats).
//
// The classifier is deterministic and explainable: every decision comes
// with the reasons that produced it and a score that orders threads within
// a bucket. It reads plain values ([Thread], [Message]) that the service
// layer fills from the index, so it has no storage, network or clock of its
// own ("now" is an argument). Rules and the evaluation against a labelled
// set are documented in docs/triage.md.
//
// The package imports neither the MCP SDK nor the index.
package triage
