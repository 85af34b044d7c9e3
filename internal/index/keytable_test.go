package index

import (
	"math/rand/v2"
	"testing"
)

func TestKeyTableMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	kt := newKeyTable()
	ref := map[uint64]int64{}
	keys := []uint64{0, 1} // 0 and 1 share a slot key: both must work
	for i := 0; i < 200000; i++ {
		var k uint64
		if len(keys) > 0 && r.IntN(3) == 0 {
			k = keys[r.IntN(len(keys))]
		} else {
			k = r.Uint64() >> uint(r.IntN(60)) // many small keys too: collisions
			keys = append(keys, k)
		}
		switch r.IntN(4) {
		case 0:
			kt.del(k)
			delete(ref, fixKey(k))
		default:
			id := int64(r.Uint32())
			kt.put(k, id)
			ref[fixKey(k)] = id
		}
	}
	if kt.n != len(ref) {
		t.Fatalf("%d entries, map has %d", kt.n, len(ref))
	}
	for _, k := range keys {
		got, ok := kt.get(k)
		want, wok := ref[fixKey(k)]
		if ok != wok || got != want {
			t.Fatalf("key %d: got %d,%v want %d,%v", k, got, ok, want, wok)
		}
	}
}
