package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"

	"github.com/tidings-mcp/tidings/internal/model"
)

// chunkSize is the number of message ids per docmeta/veccodes chunk.
const chunkSize = 4096

// Per-message flags in docmeta.
const (
	fLive       = 1 << iota // the id holds a message (0: never used or deleted)
	fSearchable             // indexed in FTS and eligible for a vector
	fFromMe                 // sent by the owner
	fMulti                  // belongs to more conversations (mem.extra)
)

// docmetaRecordSize is the bytes per id in a docmeta chunk: time (8),
// conversation (4), sender handle (4), flags (1).
const docmetaRecordSize = 17

// memState is the in-memory part of the index: per-message columns used to
// filter candidates without touching SQLite, the term vocabulary, and small
// caches (conversations, handles). Writers update it under mu after their
// transaction commits; other processes' writes are picked up by refresh.
type memState struct {
	mu sync.RWMutex

	gen int64 // meta "gen" this state reflects

	// docmeta columns, indexed by message id.
	times   []int64
	convs   []uint32
	senders []uint32
	flags   []uint8
	extra   map[uint32][]uint32 // id → further conversations
	// chunkMax[c] is the largest time of any live id in chunks 0..c (a
	// prefix maximum) and chunkMin[c] the smallest in chunks c..end (a
	// suffix minimum); both bound the id range a time window can touch.
	chunkMax, chunkMin []int64
	envDirty           bool
	dirty              map[int]bool // chunks changed since the last persist

	// Term records (termrec.go) by chunk; tupd holds the records set or
	// forgotten (nil) since the last persist, applied by persistDocmeta;
	// tdirty the record chunks to write.
	trecs  []*termChunk
	tupd   map[int64][]byte
	tdirty map[int]bool

	docs     int64 // searchable messages
	totalLen int64 // total terms over searchable messages (for BM25's avgdl)
	maxID    int64

	voc *vocab

	convByID   map[uint32]*convInfo
	sourceKind map[int64]string
	handleStr  map[uint32]string
	handleKey  map[uint32]string // normalised
	handleByS  map[string]uint32
	// names maps a normalised handle key (and last-10 key) to a contact name.
	names map[string]string
	// labels caches conversation labels; nil after any change.
	labels map[uint32]string

	vec *vecState
}

// convInfo is a cached conversation.
type convInfo struct {
	id       uint32
	source   int64
	c        model.Conversation
	handles  []uint32
	msgCount int64
	lastTime int64
	allowed  bool
	// stale is set when lastTime may be too high (a newest message was
	// deleted); the read layer re-reads it from the table.
	stale bool
}

func newMemState() *memState {
	return &memState{
		extra:      map[uint32][]uint32{},
		dirty:      map[int]bool{},
		tupd:       map[int64][]byte{},
		tdirty:     map[int]bool{},
		voc:        newVocab(),
		convByID:   map[uint32]*convInfo{},
		sourceKind: map[int64]string{},
		handleStr:  map[uint32]string{},
		handleKey:  map[uint32]string{},
		handleByS:  map[string]uint32{},
		names:      map[string]string{},
	}
}

// grow makes room for ids up to id.
func (m *memState) grow(id int64) {
	need := int(id) + 1
	if need <= len(m.times) {
		return
	}
	n := need
	if c := cap(m.times); n < c {
		n = c
	}
	// Grow whole chunks at a time.
	n = (n + chunkSize - 1) / chunkSize * chunkSize
	if n > cap(m.times) {
		n2 := cap(m.times) * 5 / 4
		if n2 > n {
			n = (n2 + chunkSize - 1) / chunkSize * chunkSize
		}
		m.times = append(make([]int64, 0, n), m.times...)
		m.convs = append(make([]uint32, 0, n), m.convs...)
		m.senders = append(make([]uint32, 0, n), m.senders...)
		m.flags = append(make([]uint8, 0, n), m.flags...)
	}
	full := (need + chunkSize - 1) / chunkSize * chunkSize
	m.times = m.times[:full]
	m.convs = m.convs[:full]
	m.senders = m.senders[:full]
	m.flags = m.flags[:full]
}

// setDoc records one message's metadata and marks its chunk dirty.
func (m *memState) setDoc(id int64, t int64, conv, sender uint32, flags uint8) {
	m.grow(id)
	m.times[id], m.convs[id], m.senders[id], m.flags[id] = t, conv, sender, flags
	m.dirty[int(id/chunkSize)] = true
	m.envDirty = true
	if id > m.maxID {
		m.maxID = id
	}
}

// clearDoc forgets a deleted message.
func (m *memState) clearDoc(id int64) {
	if int(id) >= len(m.times) {
		return
	}
	m.times[id], m.convs[id], m.senders[id], m.flags[id] = 0, 0, 0, 0
	delete(m.extra, uint32(id))
	m.tupd[id] = nil
	m.dirty[int(id/chunkSize)] = true
	m.envDirty = true
}

func (m *memState) encodeChunk(c int) []byte {
	b := make([]byte, chunkSize*docmetaRecordSize)
	base := c * chunkSize
	o := 0
	for i := 0; i < chunkSize; i++ {
		binary.LittleEndian.PutUint64(b[o:], uint64(m.times[base+i]))
		o += 8
	}
	for i := 0; i < chunkSize; i++ {
		binary.LittleEndian.PutUint32(b[o:], m.convs[base+i])
		o += 4
	}
	for i := 0; i < chunkSize; i++ {
		binary.LittleEndian.PutUint32(b[o:], m.senders[base+i])
		o += 4
	}
	copy(b[o:], m.flags[base:base+chunkSize])
	return b
}

func (m *memState) decodeChunk(c int, b []byte) error {
	if len(b) != chunkSize*docmetaRecordSize {
		return fmt.Errorf("docmeta chunk %d: %d bytes, want %d", c, len(b), chunkSize*docmetaRecordSize)
	}
	base := c * chunkSize
	m.grow(int64(base + chunkSize - 1))
	o := 0
	for i := 0; i < chunkSize; i++ {
		m.times[base+i] = int64(binary.LittleEndian.Uint64(b[o:]))
		o += 8
	}
	for i := 0; i < chunkSize; i++ {
		m.convs[base+i] = binary.LittleEndian.Uint32(b[o:])
		o += 4
	}
	for i := 0; i < chunkSize; i++ {
		m.senders[base+i] = binary.LittleEndian.Uint32(b[o:])
		o += 4
	}
	copy(m.flags[base:base+chunkSize], b[o:])
	for i := chunkSize - 1; i >= 0; i-- {
		if m.flags[base+i]&fLive != 0 {
			if id := int64(base + i); id > m.maxID {
				m.maxID = id
			}
			break
		}
	}
	m.envDirty = true
	return nil
}

// envelope recomputes chunkMax/chunkMin if needed. Callers hold mu (write).
func (m *memState) envelope() {
	if !m.envDirty {
		return
	}
	nc := len(m.times) / chunkSize
	m.chunkMax = make([]int64, nc)
	m.chunkMin = make([]int64, nc)
	runMax := int64(-1 << 63)
	for c := 0; c < nc; c++ {
		for i := c * chunkSize; i < (c+1)*chunkSize; i++ {
			if m.flags[i]&fLive != 0 && m.times[i] > runMax {
				runMax = m.times[i]
			}
		}
		m.chunkMax[c] = runMax
	}
	runMin := int64(1<<63 - 1)
	for c := nc - 1; c >= 0; c-- {
		for i := c * chunkSize; i < (c+1)*chunkSize; i++ {
			if m.flags[i]&fLive != 0 && m.times[i] < runMin {
				runMin = m.times[i]
			}
		}
		m.chunkMin[c] = runMin
	}
	m.envDirty = false
}

// idRange returns the smallest range [lo, hi] of ids that can hold a
// message with since <= time <= until. Callers hold mu (write) because the
// envelope may be rebuilt.
func (m *memState) idRange(since, until int64) (lo, hi int64) {
	m.envelope()
	nc := len(m.chunkMax)
	if nc == 0 {
		return 1, 0
	}
	// First chunk whose prefix max reaches since; last chunk whose suffix
	// min is at most until. Both arrays are non-decreasing.
	c0 := sort.Search(nc, func(i int) bool { return m.chunkMax[i] >= since })
	c1 := sort.Search(nc, func(i int) bool { return m.chunkMin[i] > until }) - 1
	if c0 >= nc || c1 < 0 || c0 > c1 {
		return 1, 0
	}
	return int64(c0 * chunkSize), int64((c1+1)*chunkSize - 1)
}

// persistDocmeta writes the dirty chunks with version gen, and the term
// records changed since the last call (termrec.go) with them.
func (m *memState) persistDocmeta(ctx context.Context, tx *sql.Tx, gen int64) error {
	m.setTermRecs(m.tupd)
	clear(m.tupd)
	if err := m.persistTermRecs(ctx, tx, gen); err != nil {
		return err
	}
	if len(m.dirty) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, "INSERT INTO docmeta(chunk, ver, data) VALUES(?, ?, ?) ON CONFLICT(chunk) DO UPDATE SET ver = excluded.ver, data = excluded.data")
	if err != nil {
		return fmt.Errorf("write docmeta: %w", err)
	}
	defer st.Close()
	for c := range m.dirty {
		if _, err := st.ExecContext(ctx, c, gen, m.encodeChunk(c)); err != nil {
			return fmt.Errorf("write docmeta chunk %d: %w", c, err)
		}
	}
	clear(m.dirty)
	return nil
}

// live reports whether id is a stored message.
func (m *memState) live(id int64) bool {
	return id > 0 && int(id) < len(m.flags) && m.flags[id]&fLive != 0
}

// inConv reports whether message id belongs to one of convs.
func (m *memState) inConv(id int64, convs map[uint32]bool) bool {
	if convs[m.convs[id]] {
		return true
	}
	if m.flags[id]&fMulti != 0 {
		for _, c := range m.extra[uint32(id)] {
			if convs[c] {
				return true
			}
		}
	}
	return false
}

// maxTimeUpTo returns the newest time of any live id <= id: the prefix
// maximum of the chunks before id's chunk and a scan of its own chunk.
// Callers hold mu after the envelope is built.
func (m *memState) maxTimeUpTo(id int64) int64 {
	best := int64(-1 << 62)
	c := int(id / chunkSize)
	if c > 0 && c-1 < len(m.chunkMax) {
		best = m.chunkMax[c-1]
	}
	for i := int64(c * chunkSize); i <= id && i < int64(len(m.times)); i++ {
		if m.flags[i]&fLive != 0 && m.times[i] > best {
			best = m.times[i]
		}
	}
	return best
}
