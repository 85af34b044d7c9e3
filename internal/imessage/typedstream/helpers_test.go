package typedstream

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"unicode/utf8"
)

// fixtureDir returns <repo>/../shared/fixtures/typedstream/<sub>, skipping
// the test when the shared fixtures are absent.
func fixtureDir(t testing.TB, sub string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "fixtures", sub)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared fixtures absent (%s)", p)
	}
	return p
}

// fixtureFiles returns name → bytes for every non-JSON file in dir.
func fixtureFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) == ".json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func loadJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// normalize round-trips v through JSON so that numbers compare as float64.
func normalize(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// expectedAttr renders an interpreted attribute value the way the fixtures'
// expected.json does.
func expectedAttr(v Value) any {
	switch x := v.(type) {
	case String:
		return string(x)
	case Number:
		if x.IsFloat() {
			return x.Float
		}
		if x.IsUnsigned() {
			return x.Uint
		}
		return x.Int
	case Data:
		return map[string]any{"NSData_len": len(x)}
	case *URL:
		var parts []string
		for u := x; u != nil; u = u.Base {
			parts = append([]string{u.Relative}, parts...)
		}
		return map[string]any{"NSURL": parts}
	case Dictionary:
		m := map[string]any{}
		for i, k := range x.Keys {
			m[string(k.(String))] = expectedAttr(x.Values[i])
		}
		return map[string]any{"dict": m}
	}
	return map[string]any{"unexpected": v}
}

// expectedRaw renders a raw decoded value the way foundation/expected.json
// does.
func expectedRaw(v Value) any {
	switch x := v.(type) {
	case *Object:
		groups := []any{}
		for _, g := range x.Groups {
			groups = append(groups, expectedGroup(g))
		}
		return map[string]any{"class": x.Class.Name, "chain": x.Class.Chain(), "groups": groups}
	case Int:
		return int64(x)
	case Uint:
		return uint64(x)
	case Float:
		return float64(x)
	case Bytes:
		if utf8.Valid(x) {
			return map[string]any{"bytes_utf8": string(x)}
		}
		return map[string]any{"bytes_hex": hex.EncodeToString(x)}
	case CString:
		return map[string]any{"bytes_utf8": string(x)}
	case nil:
		return nil
	}
	return map[string]any{"unexpected": v}
}

func expectedGroup(g Group) any {
	vals := []any{}
	for _, v := range g.Values {
		vals = append(vals, expectedRaw(v))
	}
	return []any{g.Encoding, vals}
}

// checkRuns verifies the Run invariants every decoded body must satisfy.
func checkRuns(t testing.TB, text string, runs []Run) {
	t.Helper()
	pos, loc := 0, 0
	for i, r := range runs {
		if r.Start != pos || r.Location != loc || r.End < r.Start || r.End > len(text) || r.Length < 0 {
			t.Fatalf("run %d %+v does not continue at byte %d / unit %d", i, r, pos, loc)
		}
		if utf16Len(text[r.Start:r.End]) != r.Length {
			t.Fatalf("run %d: bytes [%d,%d) are %d UTF-16 units, Length %d", i, r.Start, r.End, utf16Len(text[r.Start:r.End]), r.Length)
		}
		pos, loc = r.End, loc+r.Length
	}
	if len(runs) > 0 && pos != len(text) {
		t.Fatalf("runs end at %d, text has %d bytes", pos, len(text))
	}
	if !utf8.ValidString(text) {
		t.Fatalf("text is not valid UTF-8")
	}
}
