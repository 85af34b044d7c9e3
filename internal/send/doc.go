// Package send is the only way Tidings sends a message: a gate no agent can
// complete alone.
//
//  1. [Gate.Preview] validates the recipient (a phone number in any format,
//     normalised to E.164, or an email address; group chat ids refused),
//     the text (1–4000 characters, no control characters other than \n \r
//     \t, no invisible characters) and the service (iMessage or SMS),
//     checks the read policy, resolves the name, and mints a nonce: an
//     HMAC-SHA256 tag with a per-install key over (recipient as written,
//     address, service, text, image digest, issue and expiry time), valid
//     for 60 s and one send attempt, kept as a 0600 file under
//     $TIDINGS_HOME/nonces/ (0700).
//  2. [Gate.Send] consumes the nonce before anything else (an atomic
//     rename: of two concurrent attempts exactly one gets it), then refuses
//     — before any dialog — a missing, malformed, unknown, used or expired
//     nonce, a changed payload, a recipient blocked since the preview, the
//     rate limit (10 sends per rolling hour by default), an identical
//     message to the same person within 10 minutes that the preview did not
//     warn about, and a system that has no confirmer or no sender.
//  3. A [Confirmer] asks a person in a native window the agent cannot
//     answer: an NSAlert through osascript on macOS ([MacDialog]), zenity
//     or kdialog elsewhere ([DesktopDialog]). Cancel is the default and
//     waiting 60 s cancels.
//  4. A [Sender] delivers: [MessagesSender] runs a constant AppleScript
//     with the data in argv, bounded in time, then [Verifier] reads
//     chat.db back (rows above the pre-send ROWID, from me, in the
//     recipient's conversation, carrying the text) and reports sent,
//     failed (Apple's error code), unconfirmed or cannot_verify.
//
// Every preview, confirmation and send is appended to
// $TIDINGS_HOME/audit.jsonl (0600) with the recipient, the SHA-256 and
// length of the text, and the outcome — never the text. The rate limit and
// the duplicate guard read the log back, so they survive restarts.
//
// Process invocations are data ([Command]) run by a [Runner], so tests check
// the exact script and arguments with a fake runner and nothing real ever
// runs. The scripts live in scripts/ and are embedded.
//
// docs/security.md ("Send gate") describes the threat model and the
// choices.
package send
