package index

import (
	"slices"
	"sort"
	"testing"
)

func TestVocabLookups(t *testing.T) {
	v := newVocab()
	for _, w := range []string{"dentist", "dinner", "dinners", "orthodontist", "tin", "ant"} {
		v.add(w, 1)
	}
	collect := func(f func(string, func(string) bool), s string) []string {
		var out []string
		f(s, func(t string) bool { out = append(out, t); return true })
		sort.Strings(out)
		return out
	}
	check := func(name string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	// Before the sorted views exist, lookups scan (they never build them:
	// that needs the write lock).
	check("prefix din unsorted", collect(v.withPrefix, "din"), []string{"dinner", "dinners"})
	check("containing nt unsorted", collect(v.containing, "nt"), []string{"ant", "dentist", "orthodontist"})
	if v.built {
		t.Fatal("a lookup built the sorted views")
	}
	v.ensureSorted()
	check("prefix din", collect(v.withPrefix, "din"), []string{"dinner", "dinners"})
	check("suffix ist", collect(v.withSuffix, "ist"), []string{"dentist", "orthodontist"})
	check("containing nt", collect(v.containing, "nt"), []string{"ant", "dentist", "orthodontist"})
	// Changes after the sorted views were built.
	v.add("dentist", -1)
	v.add("accident", 1)
	check("containing dent after changes", collect(v.containing, "dent"), []string{"accident"})
	check("containing ont", collect(v.containing, "ont"), []string{"orthodontist"})
	check("suffix ant", collect(v.withSuffix, "ant"), []string{"ant"})
}
