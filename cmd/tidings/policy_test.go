package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/policy"
)

// runPolicyCmd runs `tidings policy ARGS` with TIDINGS_HOME=home.
func runPolicyCmd(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": filepath.Dir(home), "TIDINGS_HOME": home}
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	err := m.Run(context.Background(), append([]string{"policy"}, args...))
	return out.String() + errb.String(), err
}

func mustRun(t *testing.T, home string, args ...string) string {
	t.Helper()
	out, err := runPolicyCmd(t, home, args...)
	if err != nil {
		t.Fatalf("tidings policy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestPolicyBlockUnblock(t *testing.T) {
	home := filepath.Join(t.TempDir(), "tidings")
	out := mustRun(t, home, "block", "+1 (555) 123-4567", "--comment", "Therapist", "lawyer@example.com")
	if !strings.Contains(out, "blocked: +1 (555) 123-4567 (phone, matched by digits 5551234567)") || !strings.Contains(out, "blocked: lawyer@example.com (email)") {
		t.Errorf("block output:\n%s", out)
	}
	file := policy.Path(home, policy.Blocked)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "# Therapist\n+1 (555) 123-4567\nlawyer@example.com\n" {
		t.Errorf("blocked_chats.txt = %q", b)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o", fi.Mode().Perm())
	}

	// Idempotent, any format.
	out = mustRun(t, home, "block", "5551234567")
	if !strings.Contains(out, "already blocked: 5551234567") {
		t.Errorf("second block:\n%s", out)
	}
	if b2, _ := os.ReadFile(file); !bytes.Equal(b, b2) {
		t.Error("idempotent block changed the file")
	}

	// The policy now blocks the thread.
	p, err := policy.Load(home, policy.Options{})
	if err != nil || p.AllowThread(policy.Thread{Identifier: "+15551234567"}).Allowed {
		t.Fatalf("thread not blocked after `policy block`: %v", err)
	}

	out = mustRun(t, home, "unblock", "555.123.4567")
	if !strings.Contains(out, "removed from the blocklist (line 2): +1 (555) 123-4567") {
		t.Errorf("unblock output:\n%s", out)
	}
	out = mustRun(t, home, "unblock", "555.123.4567")
	if !strings.Contains(out, "nothing to remove") {
		t.Errorf("second unblock:\n%s", out)
	}
	if b, _ := os.ReadFile(file); string(b) != "# Therapist\nlawyer@example.com\n" {
		t.Errorf("after unblock: %q", b)
	}
}

func TestPolicyUnblockWarnsWhenStillBlocked(t *testing.T) {
	home := t.TempDir()
	mustRun(t, home, "block", "bob@example.com", "example.com")
	out := mustRun(t, home, "unblock", "bob@example.com")
	if !strings.Contains(out, "note: bob@example.com is still blocked by another entry") {
		t.Errorf("output:\n%s", out)
	}
}

func TestPolicyAllowModeList(t *testing.T) {
	home := t.TempDir()
	out := mustRun(t, home, "allow", "--dir", home, "friend@example.com")
	if !strings.Contains(out, "note: the allowlist is used only in allowlist mode") {
		t.Errorf("allow in blocklist mode:\n%s", out)
	}
	if got := strings.TrimSpace(mustRun(t, home, "mode")); got != "blocklist" {
		t.Errorf("mode = %q", got)
	}
	mustRun(t, home, "mode", "allowlist")
	if got := strings.TrimSpace(mustRun(t, home, "mode")); got != "allowlist" {
		t.Errorf("mode = %q", got)
	}
	mustRun(t, home, "block", "chat123456789")

	out = mustRun(t, home, "list")
	for _, want := range []string{"mode: allowlist", "blocked (1)", "chat123456789", "chat id", "allowed (1)", "friend@example.com", "email"} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}
	var listing policyListing
	if err := json.Unmarshal([]byte(mustRun(t, home, "list", "--json")), &listing); err != nil {
		t.Fatal(err)
	}
	if listing.Mode != policy.ModeAllowlist || len(listing.Blocked) != 1 || listing.Allowed[0].Entry != "friend@example.com" || listing.Allowed[0].Line != 1 {
		t.Errorf("json listing = %+v", listing)
	}

	mustRun(t, home, "disallow", "FRIEND@example.com")
	out = mustRun(t, home, "list")
	if !strings.Contains(out, "allowed (0)") || !strings.Contains(out, "no conversation is readable") {
		t.Errorf("after disallow:\n%s", out)
	}
}

// TestPolicyHomeFlagBeatsEnvironment: policy takes --home like every other
// command, before or after the verb; --dir stays as a hidden alias.
func TestPolicyHomeFlagBeatsEnvironment(t *testing.T) {
	for _, args := range [][]string{
		{"--home", "OTHER", "block", "+15551234567"},
		{"block", "--home", "OTHER", "+15551234567"},
		{"--dir", "OTHER", "block", "+15551234567"},
	} {
		home, other := t.TempDir(), t.TempDir()
		for i := range args {
			if args[i] == "OTHER" {
				args[i] = other
			}
		}
		mustRun(t, home, args...)
		if _, err := os.Stat(policy.Path(other, policy.Blocked)); err != nil {
			t.Errorf("%v: the folder flag is not used: %v", args, err)
		}
		if _, err := os.Stat(policy.Path(home, policy.Blocked)); !os.IsNotExist(err) {
			t.Errorf("%v: TIDINGS_HOME written despite the flag", args)
		}
	}
	if out := mustRun(t, t.TempDir(), "-h"); !strings.Contains(out, "--home DIR") || strings.Contains(out, "--dir") {
		t.Errorf("policy -h does not show --home (and only it):\n%s", out)
	}
}

func TestPolicyDefaultHome(t *testing.T) {
	base := t.TempDir()
	var out bytes.Buffer
	env := map[string]string{"HOME": base, "XDG_DATA_HOME": filepath.Join(base, "xdg")}
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }}
	if err := m.Run(context.Background(), []string{"policy", "block", "+15551234567"}); err != nil {
		t.Fatal(err)
	}
	var want string
	if runtime.GOOS == "darwin" {
		want = filepath.Join(base, "Library", "Application Support", "Tidings")
	} else {
		want = filepath.Join(base, "xdg", "tidings")
	}
	if _, err := os.Stat(policy.Path(want, policy.Blocked)); err != nil {
		t.Errorf("default home not used: %v\n%s", err, out.String())
	}
}

func TestPolicyUsageErrors(t *testing.T) {
	home := t.TempDir()
	for _, args := range [][]string{
		{"frobnicate"},
		{"--dir", home},
		{"block"},
		{"block", "mom"},
		{"allow", "a@b@c"},
		{"unblock"},
		{"mode", "sometimes"},
		{"mode", "allowlist", "blocklist"},
		{"list", "extra"},
		{"block", "--no-such-flag", "+15551234567"},
	} {
		out, err := runPolicyCmd(t, home, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("policy %v: err = %v, want a usage error\n%s", args, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, policy.ContactsDir)); !os.IsNotExist(err) {
		t.Error("a failed command created files")
	}
	if out := mustRun(t, home, "help"); !strings.Contains(out, "Usage: tidings policy") {
		t.Errorf("help:\n%s", out)
	}
}

func TestPolicyDoubleDashEndsFlags(t *testing.T) {
	home := t.TempDir()
	out := mustRun(t, home, "block", "--", "--comment")
	if !strings.Contains(out, "blocked: --comment") {
		t.Errorf("`--` did not make --comment an entry:\n%s", out)
	}
	if b, _ := os.ReadFile(policy.Path(home, policy.Blocked)); string(b) != "--comment\n" {
		t.Errorf("file = %q", b)
	}
}

func TestPolicyRefusesBrokenFiles(t *testing.T) {
	home := t.TempDir()
	mustRun(t, home, "block", "+15551234567")
	if err := os.WriteFile(policy.ModePath(home), []byte("maybe\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runPolicyCmd(t, home, "list"); err == nil || !strings.Contains(err.Error(), "unknown mode") {
		t.Errorf("list with a broken mode file: %v", err)
	}
}
