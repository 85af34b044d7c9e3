package service_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// searchFields is a search result as JSON fields, with the query words
// (an echo, not an answer) replaced by their position in the query.
func searchFields(t *testing.T, r service.SearchResult, words ...string) map[string]string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i, w := range words {
		s = strings.ReplaceAll(s, w, "<w"+string(rune('0'+i))+">")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// TestBlockedOnlyWordAnswersLikeAnAbsentWord pins that a search for a word
// found only in threads the read policy blocks answers exactly like a
// search for a word no message ever had — every field: hits, counts,
// coverage (candidates, searchable, the "no message contains" note),
// notes — both before the index is purged (a read-only index, as the CLI
// opens it, still holds the thread) and after. Otherwise the answer is an
// oracle that the word exists (docs/security.md, "Red-team tests").
func TestBlockedOnlyWordAnswersLikeAnAbsentWord(t *testing.T) {
	for _, noEmbed := range []bool{true, false} {
		t.Run(fmt.Sprintf("no embedder %v", noEmbed), func(t *testing.T) { blockedOnlyWordLikeAbsent(t, noEmbed) })
	}
}

func blockedOnlyWordLikeAbsent(t *testing.T, noEmbed bool) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: noEmbed, Blocked: []string{}})
	servicetest.WritePolicy(t, env.Home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
	store, err := policy.NewStore(env.Home, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gate := service.NewGate(store)
	ro, err := index.Open(ctx, filepath.Join(env.Home, "index.db"), index.Options{ReadOnly: true, Policy: gate, Now: func() time.Time { return servicetest.Now }, Location: servicetest.Zone})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	before, err := service.New(service.Options{Index: ro, Gate: gate, Now: func() time.Time { return servicetest.Now }, Location: servicetest.Zone})
	if err != nil {
		t.Fatal(err)
	}
	const blocked, absent = "quokkablockedword", "xyzzyneverseen"
	rows := []struct{ name, blocked, absent string }{
		{"the word", blocked, absent},
		{"a prefix", blocked + "*", absent + "*"},
		{"with a word others have", "book " + blocked, "book " + absent},
		{"a typo of it", "quokkablockedwrd", "xyzzyneverseem"},
		{"a phrase", `"` + blocked + `"`, `"` + absent + `"`},
	}
	for _, stage := range []struct {
		name string
		svc  *service.Service
	}{{"before the purge", before}, {"after the purge", env.Service}} {
		for _, row := range rows {
			for _, mode := range []string{"fulltext", "substring", "hybrid", "semantic"} {
				b, err := stage.svc.Search(ctx, service.SearchParams{Query: row.blocked, Mode: mode, Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				a, err := stage.svc.Search(ctx, service.SearchParams{Query: row.absent, Mode: mode, Limit: 50})
				if err != nil {
					t.Fatal(err)
				}
				bf := searchFields(t, b, strings.Fields(strings.Trim(row.blocked, `"*`))...)
				af := searchFields(t, a, strings.Fields(strings.Trim(row.absent, `"*`))...)
				for k := range af {
					if bf[k] != af[k] {
						t.Errorf("%s, %s, %s: %s = %s for a blocked word, %s for an absent one", stage.name, row.name, mode, k, bf[k], af[k])
					}
				}
				if len(bf) != len(af) {
					t.Errorf("%s, %s, %s: fields %v vs %v", stage.name, row.name, mode, bf, af)
				}
			}
		}
	}
}
