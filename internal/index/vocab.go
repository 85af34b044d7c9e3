package index

import (
	"slices"
	"sort"
	"strings"
)

// vocab is the term vocabulary of the FTS index with document frequencies,
// kept in memory. It answers what FTS5 cannot answer cheaply: exact df for
// BM25 and for planning (which terms are rare), and term lookups by prefix,
// suffix and infix (stemming, substring search, typo tolerance).
//
// The sorted views are rebuilt lazily; terms added since are kept in a small
// pending list that lookups scan as well.
type vocab struct {
	df map[string]int32

	sorted  []string // all terms at the last rebuild, sorted
	rsorted []string // reversed terms, sorted (suffix lookups)
	blob    string   // "\x00t1\x00t2…\x00" over sorted (infix lookups)
	offs    []int32  // start of each sorted term in blob
	hashes  []uint32 // termHash of each sorted term, sorted (termHashUnique)
	pending []string // terms added since the rebuild
	built   bool
}

func newVocab() *vocab { return &vocab{df: map[string]int32{}} }

// add changes a term's df by d (d may be negative).
func (v *vocab) add(term string, d int32) {
	old, ok := v.df[term]
	n := old + d
	if n <= 0 {
		delete(v.df, term)
		return
	}
	v.df[term] = n
	if !ok && v.built {
		v.pending = append(v.pending, term)
		if len(v.pending) > 4096 {
			v.built = false
		}
	}
}

// ensureSorted rebuilds the sorted views when needed.
func (v *vocab) ensureSorted() {
	if v.built {
		return
	}
	v.sorted = v.sorted[:0]
	for t := range v.df {
		v.sorted = append(v.sorted, t)
	}
	sort.Strings(v.sorted)
	v.rsorted = make([]string, len(v.sorted))
	for i, t := range v.sorted {
		v.rsorted[i] = reverse(t)
	}
	sort.Strings(v.rsorted)
	var b strings.Builder
	v.offs = make([]int32, len(v.sorted))
	b.WriteByte(0)
	for i, t := range v.sorted {
		v.offs[i] = int32(b.Len())
		b.WriteString(t)
		b.WriteByte(0)
	}
	v.blob = b.String()
	v.hashes = make([]uint32, len(v.sorted))
	for i, t := range v.sorted {
		v.hashes[i] = termHash([]byte(t))
	}
	slices.Sort(v.hashes)
	v.pending = nil
	v.built = true
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// scanAll calls fn for every live term matching keep: the fallback while
// the sorted views are stale. Lookups run under the read lock and must not
// rebuild them (only prepare, under the write lock, does).
func (v *vocab) scanAll(keep func(string) bool, fn func(term string) bool) {
	for t := range v.df {
		if keep(t) && !fn(t) {
			return
		}
	}
}

// withPrefix calls fn for every live term starting with p.
func (v *vocab) withPrefix(p string, fn func(term string) bool) {
	if !v.built {
		v.scanAll(func(t string) bool { return strings.HasPrefix(t, p) }, fn)
		return
	}
	i := sort.SearchStrings(v.sorted, p)
	for ; i < len(v.sorted) && strings.HasPrefix(v.sorted[i], p); i++ {
		if _, ok := v.df[v.sorted[i]]; ok && !fn(v.sorted[i]) {
			return
		}
	}
	for _, t := range v.pending {
		if strings.HasPrefix(t, p) {
			if _, ok := v.df[t]; ok && !fn(t) {
				return
			}
		}
	}
}

// withSuffix calls fn for every live term ending with s.
func (v *vocab) withSuffix(s string, fn func(term string) bool) {
	if !v.built {
		v.scanAll(func(t string) bool { return strings.HasSuffix(t, s) }, fn)
		return
	}
	rs := reverse(s)
	i := sort.SearchStrings(v.rsorted, rs)
	for ; i < len(v.rsorted) && strings.HasPrefix(v.rsorted[i], rs); i++ {
		t := reverse(v.rsorted[i])
		if _, ok := v.df[t]; ok && !fn(t) {
			return
		}
	}
	for _, t := range v.pending {
		if strings.HasSuffix(t, s) {
			if _, ok := v.df[t]; ok && !fn(t) {
				return
			}
		}
	}
}

// containing calls fn for every live term containing s.
func (v *vocab) containing(s string, fn func(term string) bool) {
	if s == "" {
		return
	}
	if !v.built {
		v.scanAll(func(t string) bool { return strings.Contains(t, s) }, fn)
		return
	}
	blob := v.blob
	pos := 0
	for {
		k := strings.Index(blob[pos:], s)
		if k < 0 {
			break
		}
		at := pos + k
		// Find the term holding byte at: the last offset <= at.
		i := sort.Search(len(v.offs), func(i int) bool { return int(v.offs[i]) > at }) - 1
		t := v.sorted[i]
		if _, ok := v.df[t]; ok && !fn(t) {
			return
		}
		pos = int(v.offs[i]) + len(t) // skip to this term's end
	}
	for _, t := range v.pending {
		if strings.Contains(t, s) {
			if _, ok := v.df[t]; ok && !fn(t) {
				return
			}
		}
	}
}
