package mail

// appleMailWrites: on macOS, an applemail account without imap is written
// through Mail.app (applemail_write.go).
const appleMailWrites = true
