package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/tidings-mcp/tidings/internal/index/fold"
)

// Term records (docs/index.md, "Full text"): for every searchable message,
// its length in terms and the frequency of each distinct term, so that
// BM25 is computed from memory and only the hits a page shows have their
// text read (for highlights and snippets). Terms are identified by a
// 32-bit FNV-1a hash; a query term whose hash another vocabulary term
// shares is scored from the text instead (termHashUnique), so a
// collision can never change a score.
//
// A record is
//
//	uvarint(length) then, per distinct term in ascending hash order,
//	hash (4 bytes, little endian) and uvarint(frequency).
//
// An empty record means "not known" (a message that is not searchable, or
// one stored before term records existed): the ranking reads its text, as
// it always did, so an index written by an older version answers the same.
//
// Records live in memory in chunks of chunkSize ids and are persisted in
// table docterms (one row per chunk) by the same persist call, in the
// same transaction, as docmeta: a crash can never leave them disagreeing
// with the rows (TestTermRecordsMatchARecount).

// termHash is the hash identifying a term in term records.
func termHash(t []byte) uint32 {
	h := uint32(2166136261)
	for _, c := range t {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

// termRecord tokenizes a message's indexed text (text and extra, as FTS5
// indexes them) into its distinct terms (in first-occurrence order, as
// distinctTerms), its length in terms and its term record.
func termRecord(text, extra string) (terms []string, n int, rec []byte) {
	type ent struct {
		h  uint32
		tf uint32
	}
	var arrE [32]ent
	ents := arrE[:0]
	// Short lists are scanned (most messages); a map once they grow, as
	// distinctTerms does.
	var idx map[string]int
	var arr [64]byte
	buf := arr[:0]
	for _, s := range [2]string{text, extra} {
		buf = fold.Tokenize(s, buf, func(t []byte, _, _ int) {
			n++
			if idx == nil {
				for i, o := range terms {
					if o == string(t) {
						ents[i].tf++
						return
					}
				}
			} else if i, ok := idx[string(t)]; ok {
				ents[i].tf++
				return
			}
			k := string(t)
			terms = append(terms, k)
			ents = append(ents, ent{termHash(t), 1})
			if idx != nil {
				idx[k] = len(ents) - 1
			} else if len(terms) == 32 {
				idx = make(map[string]int, 64)
				for i, o := range terms {
					idx[o] = i
				}
			}
		})
	}
	if n == 0 {
		return nil, 0, nil
	}
	slices.SortFunc(ents, func(a, b ent) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	rec = binary.AppendUvarint(make([]byte, 0, 2+len(ents)*5), uint64(n))
	for _, e := range ents {
		rec = binary.LittleEndian.AppendUint32(rec, e.h)
		rec = binary.AppendUvarint(rec, uint64(e.tf))
	}
	return terms, n, rec
}

// recordLen decodes a record's length in terms.
func recordLen(rec []byte) (int, []byte, bool) {
	n, k := binary.Uvarint(rec)
	if k <= 0 {
		return 0, nil, false
	}
	return int(n), rec[k:], true
}

// recordTF returns the frequency of the term with hash h in a record's
// entries (rec after recordLen), 0 when absent.
func recordTF(ents []byte, h uint32) (int, bool) {
	for len(ents) >= 5 {
		eh := binary.LittleEndian.Uint32(ents)
		tf, k := binary.Uvarint(ents[4:])
		if k <= 0 {
			return 0, false
		}
		if eh == h {
			return int(tf), true
		}
		if eh > h {
			return 0, true
		}
		ents = ents[4+k:]
	}
	return 0, len(ents) == 0
}

// termChunk holds the records of chunkSize consecutive ids: record i is
// data[off[i]:off[i+1]] for i < n, empty beyond.
type termChunk struct {
	off  []uint32
	data []byte
	n    int
}

func (c *termChunk) get(i int) []byte {
	if c == nil || i >= c.n {
		return nil
	}
	return c.data[c.off[i]:c.off[i+1]]
}

// termRec returns id's record (empty: not known). Callers hold mem.mu.
func (m *memState) termRec(id int64) []byte {
	c := int(id / chunkSize)
	if id < 0 || c >= len(m.trecs) {
		return nil
	}
	return m.trecs[c].get(int(id % chunkSize))
}

// setTermRecs replaces the records of the given ids (nil forgets one) and
// marks their chunks for persistence. Appends in id order (a sync's new
// messages) extend a chunk in place; anything else rebuilds each touched
// chunk once. Callers hold mem.mu (write).
func (m *memState) setTermRecs(upd map[int64][]byte) {
	if len(upd) == 0 {
		return
	}
	ids := make([]int64, 0, len(upd))
	for id := range upd {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for start := 0; start < len(ids); {
		c := int(ids[start] / chunkSize)
		end := start
		for end < len(ids) && int(ids[end]/chunkSize) == c {
			end++
		}
		for len(m.trecs) <= c {
			m.trecs = append(m.trecs, nil)
		}
		ch := m.trecs[c]
		if ch == nil {
			ch = &termChunk{off: make([]uint32, chunkSize+1)}
			m.trecs[c] = ch
		}
		if int(ids[start]%chunkSize) >= ch.n {
			for _, id := range ids[start:end] {
				i := int(id % chunkSize)
				for j := ch.n; j <= i; j++ {
					ch.off[j] = uint32(len(ch.data))
				}
				ch.data = append(ch.data, upd[id]...)
				ch.off[i+1] = uint32(len(ch.data))
				ch.n = i + 1
			}
		} else {
			recs := make([][]byte, chunkSize)
			for i := range ch.n {
				recs[i] = ch.get(i)
			}
			for _, id := range ids[start:end] {
				recs[id%chunkSize] = upd[id]
			}
			*ch = termChunk{off: make([]uint32, chunkSize+1)}
			for i, r := range recs {
				ch.off[i] = uint32(len(ch.data))
				ch.data = append(ch.data, r...)
				ch.off[i+1] = uint32(len(ch.data))
			}
			ch.n = chunkSize
		}
		m.tdirty[c] = true
		start = end
	}
}

// encodeTermChunk is a chunk's docterms row: per id, uvarint(len) and the
// record.
func (m *memState) encodeTermChunk(c int) []byte {
	var b []byte
	ch := m.trecs[c]
	for i := range chunkSize {
		r := ch.get(i)
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

func (m *memState) decodeTermChunk(c int, b []byte) error {
	ch := &termChunk{off: make([]uint32, chunkSize+1), data: make([]byte, 0, len(b))}
	for i := range chunkSize {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return fmt.Errorf("docterms chunk %d: malformed at id %d", c, i)
		}
		ch.off[i] = uint32(len(ch.data))
		ch.data = append(ch.data, b[k:k+int(l)]...)
		ch.off[i+1] = uint32(len(ch.data))
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return fmt.Errorf("docterms chunk %d: %d trailing bytes", c, len(b))
	}
	ch.n = chunkSize
	for len(m.trecs) <= c {
		m.trecs = append(m.trecs, nil)
	}
	m.trecs[c] = ch
	return nil
}

// persistTermRecs writes the dirty record chunks with version gen; it runs
// inside persistDocmeta's transaction.
func (m *memState) persistTermRecs(ctx context.Context, tx *sql.Tx, gen int64) error {
	if len(m.tdirty) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, "INSERT INTO docterms(chunk, ver, data) VALUES(?, ?, ?) ON CONFLICT(chunk) DO UPDATE SET ver = excluded.ver, data = excluded.data")
	if err != nil {
		return fmt.Errorf("write docterms: %w", err)
	}
	defer st.Close()
	for c := range m.tdirty {
		if _, err := st.ExecContext(ctx, c, gen, m.encodeTermChunk(c)); err != nil {
			return fmt.Errorf("write docterms chunk %d: %w", c, err)
		}
	}
	clear(m.tdirty)
	return nil
}

// loadTermRecs reads the record chunks newer than since. Callers hold
// mem.mu (write).
func (m *memState) loadTermRecs(ctx context.Context, q queryer, since int64) error {
	err := eachRow(q.QueryContext(ctx, "SELECT chunk, data FROM docterms WHERE ver > ? ORDER BY chunk", since))(func(r *sql.Rows) error {
		var c int
		var b []byte
		if err := r.Scan(&c, &b); err != nil {
			return err
		}
		return m.decodeTermChunk(c, b)
	})
	if err != nil {
		return fmt.Errorf("load docterms: %w", err)
	}
	return nil
}

// termHashUnique reports whether no other vocabulary term shares term's
// hash, so a record's entry for that hash is term's. It needs the sorted
// views (prepare builds them before every query). Callers hold mem.mu.
func (v *vocab) termHashUnique(term string) bool {
	if !v.built {
		return false
	}
	h := termHash([]byte(term))
	i := sort.Search(len(v.hashes), func(i int) bool { return v.hashes[i] >= h })
	same := 0
	for ; i < len(v.hashes) && v.hashes[i] == h; i++ {
		same++
	}
	j := sort.SearchStrings(v.sorted, term)
	if j < len(v.sorted) && v.sorted[j] == term {
		same-- // the term itself
	}
	for _, t := range v.pending {
		if t != term && termHash([]byte(t)) == h {
			same++
		}
	}
	return same == 0
}
