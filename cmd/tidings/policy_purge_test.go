package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// indexHolds reports which of words the index files (database and WAL)
// still hold, in any case: a purge zeroes what it frees (secure_delete)
// and merges the full-text index, so nothing of a purged thread is left.
func indexHolds(t *testing.T, home string, words ...string) []string {
	t.Helper()
	var held []string
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(filepath.Join(home, "index.db"+suffix))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		low := strings.ToLower(string(b))
		for _, w := range words {
			if strings.Contains(low, strings.ToLower(w)) {
				held = append(held, w+" in index.db"+suffix)
			}
		}
	}
	return held
}

// TestPolicyBlockPurgesAtOnce: `tidings policy block` purges the home's
// index before it returns — while another process (here the test's own
// open index, as a running server would) holds it — and a CLI read
// purges first when the policy files were edited by hand. Then, and
// before, a search for a word found only in the blocked thread prints
// exactly what a search for a word no message has prints: the same
// fields, the same "no message contains" note, the same coverage
// (docs/security.md, "Red-team tests").
func TestPolicyBlockPurgesAtOnce(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true, Blocked: []string{}})
	const absent = "xyzzyneverseen"
	sameAsAbsent := func(t *testing.T, word string) {
		t.Helper()
		for _, mode := range []string{"hybrid", "fulltext", "substring", "semantic"} {
			for _, extra := range [][]string{{"--json"}, nil} {
				args := append([]string{"search", word, "--mode", mode}, extra...)
				got, errOut, err := runQuery(t, env, args...)
				if err != nil {
					t.Fatalf("tidings %v: %v\n%s", args, err, errOut)
				}
				args[1] = absent
				want, errOut, err := runQuery(t, env, args...)
				if err != nil {
					t.Fatalf("tidings %v: %v\n%s", args, err, errOut)
				}
				got = regexp.MustCompile(`(?i)`+regexp.QuoteMeta(word)).ReplaceAllString(got, "<word>")
				want = strings.ReplaceAll(want, absent, "<word>")
				if got != want {
					t.Errorf("tidings search %s %v:\n%s\nwant, as for an absent word:\n%s", word, args[2:], got, want)
				}
			}
		}
	}
	blockedWords := []string{"quokkablockedword", "QZXSENTINELBODY"}
	if out, _, _ := runQuery(t, env, "search", "quokkablockedword", "--mode", "substring"); !strings.Contains(out, "quokkablockedword") {
		t.Fatalf("the thread is not readable before the block:\n%s", out)
	}
	out, errOut, err := runQuery(t, env, "policy", "block", servicetest.BlockedPhone)
	if err != nil {
		t.Fatalf("policy block: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "purged") {
		t.Errorf("policy block does not say it purged the index:\n%s", out)
	}
	if held := indexHolds(t, env.Home, blockedWords...); len(held) > 0 {
		t.Errorf("right after policy block the index still holds %v", held)
	}
	sameAsAbsent(t, "quokkablockedword")

	// A hand edit of the policy files: the next read purges first.
	if held := indexHolds(t, env.Home, "Lyon"); len(held) == 0 {
		t.Fatal("the fixture's Lyon is not in the index to begin with")
	}
	servicetest.WritePolicy(t, env.Home, policy.ModeBlocklist, []string{servicetest.BlockedPhone, servicetest.FrenchPhone}, nil)
	sameAsAbsent(t, "Lyon")
	if held := indexHolds(t, env.Home, "Lyon"); len(held) > 0 {
		t.Errorf("after a read under the edited policy the index still holds %v", held)
	}
}
