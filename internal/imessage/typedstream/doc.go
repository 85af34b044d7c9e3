// Package typedstream reads (and, for fixtures, writes) NSArchiver
// "typedstream" archives, the format of the attributedBody column of
// Messages' chat.db/sms.db.
//
// AttributedBody is the entry point for message bodies: it returns the text
// and its attribute runs (message parts, attachments, mentions, links, data
// detectors, styles). Decode returns the generic object model of any
// typedstream. Both are strict: a blob is decoded completely or not at all.
// docs/typedstream.md describes the format as the reader follows it, and
// the design, limits and measurements.
//
// EncodeAttributedBody, Encode and EncodeValue write typedstreams the way
// Messages does. They exist for test fixtures and synthetic demo data only.
package typedstream
