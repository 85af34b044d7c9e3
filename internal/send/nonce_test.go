package send

import (
	"strings"
	"testing"
	"time"
)

func TestTagBindsEveryField(t *testing.T) {
	s := &nonceStore{key: []byte(strings.Repeat("k", keySize))}
	base := payload{Raw: "(415) 555-1234", Address: "+14155551234", Service: "iMessage", Text: "hi", ImageSHA256: "ab"}
	ref := s.tag("id", 1, 2, base)
	for name, p := range map[string]payload{
		"raw":     {Raw: "4155551234", Address: base.Address, Service: base.Service, Text: base.Text, ImageSHA256: base.ImageSHA256},
		"address": {Raw: base.Raw, Address: "+14155551235", Service: base.Service, Text: base.Text, ImageSHA256: base.ImageSHA256},
		"service": {Raw: base.Raw, Address: base.Address, Service: "SMS", Text: base.Text, ImageSHA256: base.ImageSHA256},
		"text":    {Raw: base.Raw, Address: base.Address, Service: base.Service, Text: "hi ", ImageSHA256: base.ImageSHA256},
		"image":   {Raw: base.Raw, Address: base.Address, Service: base.Service, Text: base.Text},
		// Moving bytes between adjacent fields must change the tag.
		"shifted": {Raw: base.Raw + "+", Address: base.Address[1:], Service: base.Service, Text: base.Text, ImageSHA256: base.ImageSHA256},
	} {
		if s.tag("id", 1, 2, p) == ref {
			t.Errorf("%s: same tag for a different payload", name)
		}
	}
	if s.tag("id2", 1, 2, base) == ref || s.tag("id", 1, 3, base) == ref || s.tag("id", 0, 2, base) == ref {
		t.Error("id or times are not bound")
	}
	other := &nonceStore{key: []byte(strings.Repeat("j", keySize))}
	if other.tag("id", 1, 2, base) == ref {
		t.Error("the key is not bound")
	}
}

// FuzzConsume checks that no token except the minted one is ever accepted,
// and that consuming never panics.
func FuzzConsume(f *testing.F) {
	f.Add("")
	f.Add("Zk9...short-opaque-string")
	f.Add(strings.Repeat("0", nonceIDLen) + "." + strings.Repeat("A", nonceTagLen))
	f.Add("../../../etc/passwd")
	f.Fuzz(func(t *testing.T, token string) {
		dir := t.TempDir()
		s := &nonceStore{dir: dir, key: []byte(strings.Repeat("k", keySize))}
		now := time.Unix(1_800_000_000, 0)
		real, _, err := s.mint(now, payload{Address: "+1", Service: "iMessage", Text: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.consume(token, now); err == nil && strings.TrimSpace(token) != real {
			t.Fatalf("token %q accepted", token)
		}
	})
}
