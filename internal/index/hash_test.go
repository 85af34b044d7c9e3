package index

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

// TestHasherIsFNV1a pins hasher and guidKey to FNV-1a over the encoding
// they always used (8-byte little-endian integers, length-prefixed
// strings): stored content hashes and bulk keys depend on the exact value.
func TestHasherIsFNV1a(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for k := 0; k < 200; k++ {
		ref := fnv.New64a()
		var b [8]byte
		h := newHasher()
		for f := 0; f < 1+r.IntN(12); f++ {
			if r.IntN(2) == 0 {
				v := int64(r.Uint64())
				binary.LittleEndian.PutUint64(b[:], uint64(v))
				ref.Write(b[:])
				h.int(v)
			} else {
				s := make([]byte, r.IntN(40))
				for i := range s {
					s[i] = byte(r.IntN(256))
				}
				binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
				ref.Write(b[:])
				ref.Write(s)
				h.str(string(s))
			}
		}
		if got, want := h.sum(), ref.Sum64(); got != want {
			t.Fatalf("case %d: hasher %x, FNV-1a %x", k, got, want)
		}
		src := int64(r.IntN(10))
		guid := "p:0/GUID-" + string(rune('A'+r.IntN(26)))
		ref = fnv.New64a()
		binary.LittleEndian.PutUint64(b[:], uint64(src))
		ref.Write(b[:])
		ref.Write([]byte(guid))
		if got, want := guidKey(src, guid), ref.Sum64(); got != want {
			t.Fatalf("guidKey(%d, %q) = %x, want %x", src, guid, got, want)
		}
	}
}
