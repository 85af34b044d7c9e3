// Package vecscan is the index's pure vector arithmetic (docs/index.md,
// "Vectors"): the stored int8 form of an embedding (Quantize, Dequantize),
// the binary-code Hamming scan that picks semantic candidates (Codes.Nearest),
// and the deduplicated, off-heap pool of int8 vectors that re-ranks them
// (Pool). It knows nothing of messages or SQLite: which ids are in scope is
// a func(id int64) bool the caller passes, so every part is testable on
// its own.
package vecscan
