package send

// Platform returns this system's confirmer and sender: on macOS a native
// dialog through osascript and Messages through osascript, verified in
// chat.db.
func Platform(p PlatformOptions) (Confirmer, Sender) { return macPlatform(p) }
