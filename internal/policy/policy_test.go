package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/model"
)

func TestParseEntry(t *testing.T) {
	tests := []struct {
		in   string
		kind Kind
		key  string
	}{
		{"+1-555-123-4567", KindPhone, "5551234567"},
		{"5551234567", KindPhone, "5551234567"},
		{"(555) 123-4567", KindPhone, "5551234567"},
		{"+1 (555) 123.4567", KindPhone, "5551234567"},
		{"tel:+15551234567", KindPhone, "5551234567"},
		{"+44 7700 900123", KindPhone, "7700900123"},
		{"07700 900123", KindPhone, "7700900123"},
		{"72975", KindPhone, "72975"},
		{"555-1234", KindPhone, "5551234"},
		{"Lawyer@Example.com", KindEmail, "lawyer@example.com"},
		{"mailto:Bob@Example.com", KindEmail, "bob@example.com"},
		{"chat123456789", KindChatID, "chat123456789"},
		{"CHAT123456789", KindChatID, "chat123456789"},
		{"chatty@example.com", KindEmail, "chatty@example.com"},
		{"iMessage;+;chat42", KindSubstring, "imessage;+;chat42"},
		{"family-group", KindSubstring, "family-group"},
		{"chat room 7", KindSubstring, "chat room 7"},
		{"  padded@example.com  ", KindEmail, "padded@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := ParseEntry(tt.in)
			if err != nil {
				t.Fatalf("ParseEntry(%q): %v", tt.in, err)
			}
			if e.Kind != tt.kind || e.Key != tt.key {
				t.Errorf("ParseEntry(%q) = %v %q, want %v %q", tt.in, e.Kind, e.Key, tt.kind, tt.key)
			}
		})
	}
	for _, bad := range []string{"", "   ", "mom", "work", "12", "a@", "@b", "a@b@c", "a b@c", "chat\x00x", "ab\u0085cdefg", "\xff\xfe\xfd\xfc\xfb\xfa"} {
		if e, err := ParseEntry(bad); err == nil || !errors.Is(err, ErrEntry) {
			t.Errorf("ParseEntry(%q) = %+v, %v; want ErrEntry", bad, e, err)
		}
	}
}

func TestSplitLine(t *testing.T) {
	tests := map[string]string{
		"# Therapist":                  "",
		"   # indented comment":        "",
		"":                             "",
		"+15551234567":                 "+15551234567",
		"+15551234567 # mom":           "+15551234567",
		"+15551234567\t# tab comment":  "+15551234567",
		"odd#name@example.com":         "odd#name@example.com",
		"  lawyer@example.com  ":       "lawyer@example.com",
		"chat123 #group # more":        "chat123",
		"iMessage;+;chat9#x # comment": "iMessage;+;chat9#x",
	}
	for in, want := range tests {
		if got := splitLine(in); got != want {
			t.Errorf("splitLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustNew(t *testing.T, mode Mode, blocked, allowed []string) *Policy {
	t.Helper()
	p, err := New(mode, blocked, allowed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAllowThread(t *testing.T) {
	blocked := []string{"+1-555-123-4567", "Lawyer@Example.com", "chat123456789", "secret-project", "555-9876"}
	allowed := []string{"(415) 555-0001", "friend@example.com", "chat999", "family-chat-guid", "72975"}
	direct := func(h string) Thread {
		return Thread{Identifier: h, GUID: "iMessage;-;" + h, Participants: []string{h}}
	}
	group := func(id string, people ...string) Thread {
		return Thread{Identifier: id, GUID: "iMessage;+;" + id, Participants: people, Group: true}
	}
	tests := []struct {
		name      string
		thread    Thread
		blocklist Reason
		allowlist Reason
	}{
		{"blocked phone, other format", direct("+15551234567"), ReasonBlocked, ReasonBlocked},
		{"blocked phone, national format", direct("(555) 123-4567"), ReasonBlocked, ReasonBlocked},
		{"blocked email, other case", direct("LAWYER@example.COM"), ReasonBlocked, ReasonBlocked},
		{"blocked chat id", group("chat123456789", "+14155550001"), ReasonBlocked, ReasonBlocked},
		{"blocked chat id via guid only", Thread{GUID: "iMessage;+;chat123456789", Participants: []string{"a@b.c", "d@e.f"}}, ReasonBlocked, ReasonBlocked},
		{"group containing a blocked person", group("chat555", "+14155550001", "+15551234567"), ReasonBlocked, ReasonBlocked},
		{"blocked substring in identifier", group("chat-secret-project-7", "+14155550001"), ReasonBlocked, ReasonBlocked},
		{"blocked substring in a handle", direct("secret-project@corp.example"), ReasonBlocked, ReasonBlocked},
		{"7-digit block entry matches full number", direct("+1 212 555 9876"), ReasonBlocked, ReasonBlocked},
		{"allowed phone", direct("+14155550001"), ReasonAllowed, ReasonAllowed},
		{"allowed email", direct("Friend@Example.com"), ReasonAllowed, ReasonAllowed},
		{"allowed short code", direct("72975"), ReasonAllowed, ReasonAllowed},
		{"short code is not a suffix", direct("+1 415 557 2975"), ReasonAllowed, ReasonNotAllowlisted},
		{"stranger", direct("+12125550000"), ReasonAllowed, ReasonNotAllowlisted},
		{"group allowed by chat id", group("chat999", "+12125550000", "x@y.z"), ReasonAllowed, ReasonAllowed},
		{"group allowed by guid substring", Thread{Identifier: "chat77", GUID: "iMessage;+;family-chat-guid", Participants: []string{"+12125550000", "z@y.x"}, Group: true}, ReasonAllowed, ReasonAllowed},
		{"allowed group with a blocked member", group("chat999", "+15551234567", "friend@example.com"), ReasonBlocked, ReasonBlocked},
		{"group where every member is allowed", group("chat5", "+14155550001", "friend@example.com"), ReasonAllowed, ReasonAllowed},
		{"group where one member is not allowed", group("chat5", "+14155550001", "stranger@example.com"), ReasonAllowed, ReasonNotAllowlisted},
		{"attacker handle containing an allowed substring", direct("family-chat-guid@evil.example"), ReasonAllowed, ReasonNotAllowlisted},
		{"direct thread guid containing an allowed substring", Thread{Identifier: "x@evil.example", GUID: "iMessage;-;family-chat-guid", Participants: []string{"x@evil.example"}}, ReasonAllowed, ReasonNotAllowlisted},
		{"allowed chat id is not a prefix match", group("chat9990", "+12125550000", "x@y.z"), ReasonAllowed, ReasonNotAllowlisted},
		{"no participants, no identifier", Thread{GUID: "iMessage;+;chat1", Group: true}, ReasonAllowed, ReasonNotAllowlisted},
		{"direct with identifier only", Thread{Identifier: "+14155550001"}, ReasonAllowed, ReasonAllowed},
		{"direct blocked by identifier only", Thread{Identifier: "+15551234567", Participants: []string{}}, ReasonBlocked, ReasonBlocked},
		{"two participants without Group flag is a group", Thread{Identifier: "+14155550001", Participants: []string{"+14155550001", "stranger@x.y"}}, ReasonAllowed, ReasonNotAllowlisted},
	}
	pb := mustNew(t, ModeBlocklist, blocked, allowed)
	pa := mustNew(t, ModeAllowlist, blocked, allowed)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pb.AllowThread(tt.thread); got.Reason != tt.blocklist || got.Allowed != (tt.blocklist == ReasonAllowed) {
				t.Errorf("blocklist mode: %+v, want %s", got, tt.blocklist)
			}
			if got := pa.AllowThread(tt.thread); got.Reason != tt.allowlist || got.Allowed != (tt.allowlist == ReasonAllowed) {
				t.Errorf("allowlist mode: %+v, want %s", got, tt.allowlist)
			}
		})
	}
}

func TestAllowlistShortPhoneIsExactOnly(t *testing.T) {
	p := mustNew(t, ModeAllowlist, nil, []string{"555-1234"})
	if d := p.AllowThread(Thread{Identifier: "+14155551234"}); d.Allowed {
		t.Error("a 7-digit allowlist entry allowed a full number ending in it")
	}
	if d := p.AllowThread(Thread{Identifier: "5551234"}); !d.Allowed {
		t.Error("a 7-digit allowlist entry did not allow the same digits")
	}
}

func TestAllowHandle(t *testing.T) {
	pb := mustNew(t, ModeBlocklist, []string{"+15551234567", "lawyer@example.com", "chat123", "secret-project"}, nil)
	pa := mustNew(t, ModeAllowlist, []string{"+15551234567"}, []string{"4155550001", "friend@example.com", "chat999"})
	tests := []struct {
		p    *Policy
		h    string
		want Reason
	}{
		{pb, "555.123.4567", ReasonBlocked},
		{pb, "Lawyer@EXAMPLE.com", ReasonBlocked},
		{pb, "chat123", ReasonBlocked},
		{pb, "me@secret-project.example", ReasonBlocked},
		{pb, "+14155550001", ReasonAllowed},
		{pa, "+1 415 555 0001", ReasonAllowed},
		{pa, "FRIEND@example.com", ReasonAllowed},
		{pa, "+15551234567", ReasonBlocked},
		{pa, "+12125550000", ReasonNotAllowlisted},
		{pa, "chat999", ReasonNotAllowlisted}, // a group is not a handle
		{nil, "+14155550001", ReasonNoPolicy},
	}
	for _, tt := range tests {
		if got := tt.p.AllowHandle(tt.h); got.Reason != tt.want || got.Allowed != (tt.want == ReasonAllowed) {
			t.Errorf("AllowHandle(%q) = %+v, want %s", tt.h, got, tt.want)
		}
	}
}

func TestNilPolicyFailsClosed(t *testing.T) {
	var p *Policy
	if d := p.AllowThread(Thread{Identifier: "+14155550001"}); d.Allowed || d.Reason != ReasonNoPolicy {
		t.Errorf("nil policy AllowThread = %+v", d)
	}
	if p.Mode() != ModeAllowlist || p.Fingerprint() != "" || p.Hardened() {
		t.Error("nil policy metadata is not fail-closed")
	}
}

func TestFingerprintIsSemantic(t *testing.T) {
	a := mustNew(t, ModeBlocklist, []string{"+1 (555) 123-4567", "Lawyer@example.com"}, nil)
	b := mustNew(t, ModeBlocklist, []string{"lawyer@EXAMPLE.com", "5551234567", "555.123.4567"}, nil)
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("same entries in other formats changed the fingerprint")
	}
	c := mustNew(t, ModeBlocklist, []string{"lawyer@example.com", "5551234568"}, nil)
	d := mustNew(t, ModeAllowlist, []string{"lawyer@example.com", "5551234567"}, nil)
	e := mustNew(t, ModeBlocklist, []string{"lawyer@example.com"}, []string{"5551234567"})
	seen := map[string]bool{a.Fingerprint(): true}
	for _, p := range []*Policy{c, d, e} {
		if seen[p.Fingerprint()] {
			t.Errorf("fingerprint %s repeats for a different policy", p.Fingerprint())
		}
		seen[p.Fingerprint()] = true
	}
}

func TestInfoNeverContainsEntries(t *testing.T) {
	p := mustNew(t, ModeAllowlist, []string{"+15551234567", "therapist@clinic.example", "chat777"}, []string{"sister@family.example"})
	b, err := json.Marshal(p.Info())
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"5551234567", "therapist", "clinic", "chat777", "sister"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("Info JSON %s contains %q", b, secret)
		}
	}
	if p.Info().BlockedEntries != 3 || p.Info().AllowedEntries != 1 || p.Info().Mode != ModeAllowlist {
		t.Errorf("Info = %+v", p.Info())
	}
}

func TestThreadOf(t *testing.T) {
	c := model.Conversation{ID: "iMessage;+;chat1", Identifier: "chat1", Kind: model.KindGroup, Participants: []string{"+14155550001"}, DisplayName: "+14155550001"}
	th := ThreadOf(c)
	if !th.Group || th.GUID != c.ID || th.Identifier != "chat1" || len(th.Participants) != 1 {
		t.Errorf("ThreadOf = %+v", th)
	}
	// The display name is never matched: renaming a group to an allowed
	// number must not open it.
	p := mustNew(t, ModeAllowlist, nil, []string{"+14155550009"})
	c.DisplayName = "+14155550009"
	c.Participants = []string{"stranger@example.com"}
	if p.AllowThread(ThreadOf(c)).Allowed {
		t.Error("display name matched the allowlist")
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New("sometimes", nil, nil); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := New(ModeBlocklist, []string{"mom"}, nil); err == nil {
		t.Error("short entry accepted")
	}
}

func BenchmarkAllowThread(b *testing.B) {
	var blocked, allowed []string
	for i := range 200 {
		blocked = append(blocked, "+1415555"+string(rune('0'+i%10))+string(rune('0'+i/10%10))+"0"+string(rune('0'+i/100)))
		allowed = append(allowed, "user"+string(rune('a'+i%26))+string(rune('a'+i/26))+"@example.com")
	}
	p, err := New(ModeAllowlist, blocked, append(allowed, "chat-family-1"))
	if err != nil {
		b.Fatal(err)
	}
	th := Thread{Identifier: "chat42", GUID: "iMessage;+;chat42", Participants: []string{"+12125550001", "userab@example.com", "userzz@example.com"}, Group: true}
	b.ReportAllocs()
	for b.Loop() {
		_ = p.AllowThread(th)
	}
}
