package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzSeeds are small inputs aimed at the scanner's corners; the committed
// corpus (testdata/fuzz/FuzzReader) adds the fixtures. Regenerate it with
// go test -run TestFuzzSeeds -update.
var fuzzSeeds = map[string]string{
	"surrogates":   wrap(`<sms address="1" date="1795000000000" type="1" body="&#55357;&#56832;&#55357;x&#56832;&#xD83D;&#xDE00;"/>`),
	"doctype":      `<!DOCTYPE smses [<!ENTITY a "&b;&b;"><!ENTITY b "x"><!-- ] > ' " -->]><smses><sms address="1" date="1" type="1" body="&a;"/></smses>`,
	"nested":       wrap(strings.Repeat("<j>", 50) + strings.Repeat("</j>", 50)),
	"unclosed-mms": wrap(`<mms date="1795000000" msg_box="1" address="+1"><parts><part ct="text/plain" text="a"/><sms address="1" date="1795000000000" type="1" body="b"/>`),
	"base64-text":  wrap(`<mms date="1795000000" msg_box="2" address="+1"><parts><part ct="text/plain" chset="1015" data="/v8ASABp"/><part ct="image/png" data="TW&#10;Fu=="/></parts><addrs><addr address="+2" type="137"/></addrs></mms>`),
	"crlf":         "<smses>\r\n<sms address='1' date='1795000000000' type='2' body='a\r\nb\rc'/>\r\n</smses>",
	"entities":     wrap(`<sms address="&#x2B;1" date="&#49;795000000000" type="1" body="&amp;&lt;&gt;&quot;&apos;&nbsp;&#0;&#x110000;&;&#;&"/>`),
	"bom-cesu":     "\xef\xbb\xbf<smses><sms address=\"1\" date=\"1795000000000\" type=\"1\" body=\"\xed\xa0\xbd\xed\xb8\x80\xff\"/></smses>",
	"bad-root":     `<calls><call/></calls>`,
	"truncated":    `<smses><sms address="1" date="17950`,
	"garbage":      "<<<>>>&&&\"\"''<sms <mms </mms> </smses>",
}

// FuzzReader feeds arbitrary bytes to the reader and the importer. Nothing
// may panic or loop; every returned record must be well-formed (valid
// UTF-8 without control characters, a real date, a known box, offsets
// increasing) and convert to a message with an id in a conversation.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := &Options{MaxText: 4096, MaxRecordText: 8192, MaxParts: 8}
		r := NewReader(bytes.NewReader(data), opts)
		c := newConverter("US", map[string]bool{"+14155550100": true})
		var n int
		last := int64(-1)
		for {
			rec, err := r.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNotExport) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				if _, again := r.Next(); again != err && !(err == io.EOF && again == io.EOF) {
					t.Fatalf("error not sticky: %v then %v", err, again)
				}
				break
			}
			n++
			if n > len(data) {
				t.Fatalf("more records than bytes")
			}
			if rec.Offset() <= last || rec.Offset() >= int64(len(data)) {
				t.Fatalf("offset %d after %d (len %d)", rec.Offset(), last, len(data))
			}
			last = rec.Offset()
			checkRecord(t, rec, opts)
			conv, m, _ := c.convert(rec)
			if !strings.HasPrefix(conv.ID, "android:") || m.ID == "" || len(m.ConversationIDs) != 1 || m.ConversationIDs[0] != conv.ID {
				t.Fatalf("conversion: %+v %+v", conv, m)
			}
			if !utf8.ValidString(m.Text) {
				t.Fatalf("invalid UTF-8 text %q", m.Text)
			}
		}
		// Differential: a tiny buffer (every token straddles a refill)
		// must read exactly the same records.
		small := *opts
		small.bufSize = 8 + len(data)%57
		recsA, errA := collect(NewReader(bytes.NewReader(data), opts))
		recsB, errB := collect(NewReader(bytes.NewReader(data), &small))
		if fmt.Sprint(errA) != fmt.Sprint(errB) || len(recsA) != len(recsB) {
			t.Fatalf("buffer %d: %d records (%v), default buffer %d (%v)", small.bufSize, len(recsB), errB, len(recsA), errA)
		}
		for i := range recsA {
			if a, b := fmt.Sprintf("%+v", recsA[i]), fmt.Sprintf("%+v", recsB[i]); a != b {
				t.Fatalf("buffer %d, record %d:\n%s\n%s", small.bufSize, i, b, a)
			}
		}
		st := r.Stats()
		if st.SMS+st.MMS != n {
			t.Fatalf("stats count %d+%d, returned %d", st.SMS, st.MMS, n)
		}
		if st.Bytes > int64(len(data)) || st.Skipped < 0 {
			t.Fatalf("stats %+v", st)
		}
		if _, err := DetectOwner(context.Background(), bytes.NewReader(data), "US"); err != nil &&
			!errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNotExport) {
			t.Fatalf("DetectOwner: %v", err)
		}
	})
}

// collect reads r to the end: the records it returned and its first error
// other than io.EOF.
func collect(r *Reader) ([]Record, error) {
	var out []Record
	for {
		rec, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
		out = append(out, rec)
	}
}

func checkString(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%s: invalid UTF-8 %q", what, s)
	}
	for _, c := range s {
		if isControl(c) {
			t.Fatalf("%s: control character %U in %q", what, c, s)
		}
		if c >= 0xD800 && c <= 0xDFFF {
			t.Fatalf("%s: surrogate in %q", what, s)
		}
	}
}

func checkRecord(t *testing.T, rec Record, opts *Options) {
	t.Helper()
	switch r := rec.(type) {
	case *SMS:
		if r.Date.IsZero() || r.Type < TypeInbox || r.Type > TypeQueued || strings.TrimSpace(r.Address) == "" {
			t.Fatalf("bad sms %+v", r)
		}
		if len(r.Body) > opts.MaxText {
			t.Fatalf("body of %d bytes beyond MaxText", len(r.Body))
		}
		for _, s := range []string{r.Address, r.Body, r.Subject, r.ContactName, r.ServiceCenter} {
			checkString(t, "sms", s)
		}
	case *MMS:
		if r.Date.IsZero() || r.MsgBox < TypeInbox || r.MsgBox > TypeFailed || !r.hasAddress() {
			t.Fatalf("bad mms %+v", r)
		}
		if len(r.Parts) > opts.MaxParts || len(r.Addrs) > opts.MaxParts {
			t.Fatalf("%d parts, %d addrs beyond MaxParts", len(r.Parts), len(r.Addrs))
		}
		total := 0
		for _, p := range r.Parts {
			if p.Size < 0 {
				t.Fatalf("negative size")
			}
			total += len(p.Text)
			checkString(t, "part", p.Text)
			checkString(t, "part name", p.Name)
		}
		if total > opts.MaxRecordText {
			t.Fatalf("%d bytes of text beyond MaxRecordText", total)
		}
		for _, a := range r.Addrs {
			checkString(t, "addr", a.Address)
		}
		checkString(t, "mms", r.Address+r.Subject+r.ContactName)
	default:
		t.Fatalf("record of type %T", rec)
	}
}

// TestFuzzSeeds keeps the committed corpus in step with the fixtures and
// fuzzSeeds (-update rewrites it).
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzReader")
	seeds := map[string][]byte{}
	for k, v := range fuzzSeeds {
		seeds[k] = []byte(v)
	}
	for _, name := range []string{"full", "hostile", "truncated", "overlap-a"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		seeds["fixture-"+name] = b
	}
	for name, data := range seeds {
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(data)))
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("corpus file %s missing or stale (run go test -run TestFuzzSeeds -update)", path)
		}
	}
}
