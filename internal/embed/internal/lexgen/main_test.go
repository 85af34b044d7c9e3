package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// miniWordNet writes a WordNet-format dictionary of a few synsets: enough
// to exercise the parsers, the matrix, the SVD and the writer.
func miniWordNet(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"data.noun": "  1 licence header line\n" +
			"00000001 03 n 02 debt 0 indebtedness 0 001 @ 00000003 n 0000 | the state of owing money; \"he paid his debt\"\n" +
			"00000002 03 n 01 money 0 001 @ 00000003 n 0000 | the most common medium of exchange\n" +
			"00000003 03 n 01 asset 0 000 | anything of material value or usefulness\n" +
			"00000004 03 n 02 tooth 0 teeth 0 001 @ 00000005 n 0000 | hard bonelike structure in the jaws\n" +
			"00000005 03 n 01 bone 0 000 | rigid connective tissue\n" +
			"00000006 03 n 01 dentist 0 001 @ 00000005 n 0000 | a person who treats teeth\n",
		"data.verb": "00000001 40 v 01 owe 0 001 + 00000001 n 0101 01 + 01 00 | be obliged to pay or repay money\n",
		"data.adj":  "",
		"data.adv":  "",
		"index.noun": "  1 licence header line\n" +
			"debt n 1 1 @ 1 1 00000001\nindebtedness n 1 1 @ 1 0 00000001\nmoney n 1 1 @ 1 1 00000002\n" +
			"asset n 1 0 1 0 00000003\ntooth n 1 1 @ 1 1 00000004\nbone n 1 0 1 0 00000005\ndentist n 1 1 @ 1 0 00000006\n",
		"index.verb":  "owe v 1 1 + 1 1 00000001\n",
		"index.adj":   "",
		"index.adv":   "",
		"noun.exc":    "teeth tooth\n",
		"verb.exc":    "owed owe\n",
		"adj.exc":     "",
		"adv.exc":     "",
		"cntlist.rev": "debt%1:21:00:: 1 12\nmoney%1:21:00:: 1 40\nowe%2:40:00:: 1 9\ntooth%1:08:00:: 1 7\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGenerateLexicon(t *testing.T) {
	dir := miniWordNet(t)
	out := filepath.Join(t.TempDir(), "lex.bin.gz")
	if err := run(dir, out, 2, 100, "svd"); err != nil {
		t.Fatal(err)
	}
	first := readLex(t, out)
	if err := run(dir, out, 2, 100, "svd"); err != nil {
		t.Fatal(err)
	}
	if second := readLex(t, out); !bytes.Equal(first, second) {
		t.Fatal("the generator is not deterministic")
	}
	r := bytes.NewReader(first)
	var hdr [11]byte
	io.ReadFull(r, hdr[:])
	if string(hdr[:4]) != "TDLX" || hdr[4] != 1 {
		t.Fatalf("header %q", hdr[:5])
	}
	dim, n := binary.LittleEndian.Uint16(hdr[5:]), binary.LittleEndian.Uint32(hdr[7:])
	if dim != 2 {
		t.Fatalf("dim %d, want 2", dim)
	}
	var words []string
	for i := 0; i < int(n); i++ {
		l, _ := r.ReadByte()
		w := make([]byte, l)
		io.ReadFull(r, w)
		words = append(words, string(w))
		r.Seek(5, io.SeekCurrent) // prior byte + scale
	}
	// Lemmas with evidence of use are kept, sorted; "indebtedness" has no
	// tag count and appears in no gloss, so it is left out (and aliased).
	if got := strings.Join(words, " "); got != "debt money owe tooth" {
		t.Fatalf("vocabulary %q", got)
	}
	r.Seek(int64(n)*int64(dim), io.SeekCurrent)
	var ne uint32
	binary.Read(r, binary.LittleEndian, &ne)
	table := map[string]string{}
	for i := 0; i < int(ne); i++ {
		l, _ := r.ReadByte()
		k := make([]byte, l)
		io.ReadFull(r, k)
		l, _ = r.ReadByte()
		v := make([]byte, l)
		io.ReadFull(r, v)
		table[string(k)] = string(v)
	}
	for k, want := range map[string]string{"teeth": "tooth", "owed": "owe", "indebtedness": "debt"} {
		if table[k] != want {
			t.Errorf("table[%q] = %q, want %q (table %v)", k, table[k], want, table)
		}
	}
}

func readLex(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
