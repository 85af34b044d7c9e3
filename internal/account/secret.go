package account

import (
	"fmt"
	"log/slog"
)

// redacted is what every printed form of a Secret shows.
const redacted = "[REDACTED-SECRET]"

// Secret holds a password or token. Every way of printing it — fmt verbs
// (%v, %+v, %#v, %s, %q, %x), slog, encoding/json, encoding.TextMarshaler —
// shows [REDACTED-SECRET]; only Reveal returns the value, at the one place
// it is handed to a server. The value sits behind a pointer so that even
// fmt's reflection walk over a struct holding a Secret in an unexported
// field (which skips the methods above) prints an address, never the text
// (docs/security.md "Accounts and secrets").
type Secret struct {
	p *string
}

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{p: &s} }

// Reveal returns the secret itself. Call it only where the value leaves
// for the server it belongs to; never log or wrap its result.
func (s Secret) Reveal() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

// IsZero reports whether no value is held.
func (s Secret) IsZero() bool { return s.p == nil || *s.p == "" }

func (Secret) String() string   { return redacted }
func (Secret) GoString() string { return redacted }

// Format makes every fmt verb print the redaction.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue makes slog print the redaction.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON makes encoding/json print the redaction.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText makes text encoders (TOML, XML attributes, map keys) print
// the redaction.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
