//go:build !darwin

package send

// Platform returns this system's confirmer and sender: a zenity or kdialog
// confirmer, and no sender, because only Messages on a Mac can send
// iMessage and SMS.
func Platform(p PlatformOptions) (Confirmer, Sender) { return otherPlatform(p) }
