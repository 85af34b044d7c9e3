//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// hardenedList writes a root-owned-looking allowlist naming allowed, in a
// hierarchy the hardened checks accept for this test (the test's euid
// stands in for root; policy.HardenedTrustForTest).
func hardenedList(t *testing.T, allowed ...string) string {
	t.Helper()
	trust := t.TempDir()
	t.Cleanup(policy.HardenedTrustForTest(uint32(os.Geteuid()), trust))
	conf := filepath.Join(trust, "etc", "tidings")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{trust, filepath.Join(trust, "etc"), conf} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(conf, "allowed_chats.txt")
	if err := os.WriteFile(list, []byte("# managed by root\n"+strings.Join(allowed, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return list
}

// The hardened read policy of seed 000 is reachable: from serve's
// --hardened-allowlist flag and from config.toml's hardened_allowlist, a
// real tool call returns only the chats the root-owned list names (the
// user's read_policy.txt saying blocklist does not matter), get_status
// reports policy.hardened with the list's path, and index and helper take
// the flag too (docs/security.md, "Hardened read policy").
func TestHardenedAllowlistIsReachable(t *testing.T) {
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	list := hardenedList(t, servicetest.FrenchPhone)
	for _, tc := range []struct {
		name string
		file string // config.toml
		args []string
	}{
		{"flag", "", []string{"--hardened-allowlist", list}},
		{"config.toml", "hardened_allowlist = " + strconvQuote(list) + "\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"TIDINGS_NOW": servicetest.Now.Format(time.RFC3339)}
			m, _, _ := testMain(t, env)
			home := m.Getenv("TIDINGS_HOME")
			env["TIDINGS_HOME"] = home
			servicetest.WritePolicy(t, home, policy.ModeBlocklist, nil, []string{servicetest.HostilePhone})
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c := startClient(t, env, append([]string{"--imessage", chatDB, "--contacts", vcf}, tc.args...)...)
			out := c.waitFor("list_conversations", map[string]any{}, func(r callResult) bool {
				return !r.IsErr && listed(r.Out, "Camille") != nil
			}).Out
			raw, _ := json.Marshal(out)
			for _, other := range []string{"Alex", "Jamie", "Zanzisentinel", "4155550099"} {
				if strings.Contains(string(raw), other) {
					t.Errorf("list_conversations shows %q outside the hardened allowlist", other)
				}
			}
			r := c.call("get_conversation_messages", map[string]any{"conversation_id": "Alex Hostile"})
			if !r.IsErr {
				t.Errorf("a chat outside the hardened allowlist was read: %s", clip(r.Raw))
			}
			st := c.mustCall("get_status", map[string]any{})
			pol, _ := st["policy"].(map[string]any)
			if pol["hardened"] != true || pol["mode"] != "allowlist" || pol["hardened_allowlist"] != list {
				t.Errorf("get_status.policy = %v", pol)
			}
		})
	}
	for _, cmd := range [][]string{{"index", "--imessage", chatDB, "--hardened-allowlist", list}, {"helper", "--once", "--hardened-allowlist", list, "-h"}} {
		m, _, errb := testMain(t, nil)
		if err := m.Run(t.Context(), cmd); err != nil {
			t.Errorf("%v: %v\n%s", cmd, err, errb)
		}
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
