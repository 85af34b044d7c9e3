// Package android reads "SMS Backup & Restore" XML exports (the
// <smses> files of SyncTech's app, com.riteshsahu.SMSBackupRestore) and
// turns them into plain model values: conversations keyed by participant
// set, messages with stable content-derived ids, attachment metadata, and
// contact names.
//
// # Reading
//
// Exports reach gigabytes, almost all of it base64 media in <part data="…">
// attributes, so Reader is a purpose-built streaming scanner rather than
// encoding/xml: encoding/xml materialises every attribute value (a 20 MB
// photo becomes a 20 MB string, twice) and decodes a UTF-16 surrogate pair
// written as two character references (&#55357;&#56832;, as the app writes
// emoji) into two U+FFFD. Reader keeps only the attributes it needs, each
// bounded (Options.MaxText), counts a data payload's decoded size without
// keeping it, recombines surrogate pairs, and holds a fixed 64 KiB buffer
// plus one record at a time, so memory does not grow with the file.
//
// Reader is lenient where exports are known to be broken and strict where
// safety needs it: a malformed record is skipped and counted (Stats), never
// fatal; a file that ends early returns what was read and then an error
// wrapping ErrTruncated; a DOCTYPE is skipped and no entity it declares is
// ever expanded (unknown entity references stay literal text).
//
// # Importing
//
// Import (and ReadFile) map records to model values. The owner's own
// numbers are worked out first (sent MMS "from" addresses and the sole
// recipient of received MMS), so a group thread is keyed by the other
// participants only. Handles are normalised with contacts.Normalize, the
// same function that keys iMessage handles and address-book cards, so a
// person's SMS thread and iMessage thread resolve to one contacts person.
// Message ids hash the record's own fields (direction, date, raw addresses,
// content), so importing the same or an overlapping export twice stores
// nothing twice. See docs/android.md.
//
// The package imports neither the MCP SDK nor the index; the index adapter
// lives in internal/android/androidindex.
package android
