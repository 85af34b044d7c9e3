package index

// keyTable maps 64-bit keys to message ids with open addressing: 12 bytes
// per slot, a third of what a Go map of the same content holds. The bulk
// load uses it to recognise messages it has already stored (before the
// guid index exists). Key 0 is reserved for empty slots.
type keyTable struct {
	keys []uint64
	vals []uint32
	n    int
}

func newKeyTable() *keyTable {
	return &keyTable{keys: make([]uint64, 1024), vals: make([]uint32, 1024)}
}

func (t *keyTable) slot(k uint64) int {
	mask := len(t.keys) - 1
	i := int((k * 0x9E3779B97F4A7C15) >> 20 & uint64(mask))
	for t.keys[i] != 0 && t.keys[i] != k {
		i = (i + 1) & mask
	}
	return i
}

func fixKey(k uint64) uint64 {
	if k == 0 {
		return 1
	}
	return k
}

func (t *keyTable) get(k uint64) (int64, bool) {
	i := t.slot(fixKey(k))
	if t.keys[i] == 0 {
		return 0, false
	}
	return int64(t.vals[i]), true
}

func (t *keyTable) put(k uint64, id int64) {
	if (t.n+1)*4 > len(t.keys)*3 {
		t.grow()
	}
	k = fixKey(k)
	i := t.slot(k)
	if t.keys[i] == 0 {
		t.n++
	}
	t.keys[i], t.vals[i] = k, uint32(id)
}

// del removes k (backward-shift deletion keeps probe chains intact).
func (t *keyTable) del(k uint64) {
	k = fixKey(k)
	mask := len(t.keys) - 1
	i := t.slot(k)
	if t.keys[i] == 0 {
		return
	}
	t.n--
	for {
		t.keys[i] = 0
		j := i
		for {
			j = (j + 1) & mask
			if t.keys[j] == 0 {
				return
			}
			home := int((t.keys[j] * 0x9E3779B97F4A7C15) >> 20 & uint64(mask))
			// Move j back to i if its home is not in (i, j].
			if (j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j)) {
				t.keys[i], t.vals[i] = t.keys[j], t.vals[j]
				i = j
				break
			}
		}
	}
}

func (t *keyTable) grow() {
	old, oldv := t.keys, t.vals
	t.keys = make([]uint64, len(old)*2)
	t.vals = make([]uint32, len(old)*2)
	for i, k := range old {
		if k != 0 {
			j := t.slot(k)
			t.keys[j], t.vals[j] = k, oldv[i]
		}
	}
}
