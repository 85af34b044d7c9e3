package android

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// readAll reads every record of an export given as a string.
func readAll(t *testing.T, doc string, opts *Options) ([]Record, Stats, error) {
	t.Helper()
	r := NewReader(strings.NewReader(doc), opts)
	recs, err := collect(r)
	return recs, r.Stats(), err
}

func wrap(body string) string {
	return `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>` + "\n<smses count=\"1\">\n" + body + "\n</smses>\n"
}

func smsBody(t *testing.T, attrBody string) string {
	t.Helper()
	recs, _, err := readAll(t, wrap(`<sms address="+14155550123" date="1795000000000" type="1" body="`+attrBody+`" />`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("got %d records, want 1", len(recs))
	}
	return recs[0].(*SMS).Body
}

func TestValueDecoding(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello", "hello"},
		{"predefined entities", "&lt;&gt;&amp;&quot;&apos;", `<>&"'`},
		{"decimal and hex refs", "&#65;&#x42;&#X43;", "ABC"},
		{"newline ref", "a&#10;b", "a\nb"},
		{"surrogate pair decimal", "&#55357;&#56832;", "😀"},
		{"surrogate pair hex", "&#xD83D;&#xDE00;", "😀"},
		{"astral ref", "&#128512;", "😀"},
		{"two pairs in a row", "&#55357;&#56832;&#55356;&#57093;", "😀🌅"},
		{"lone high then text", "&#55357;x", "\uFFFDx"},
		{"lone high at end", "x&#55357;", "x\uFFFD"},
		{"lone low", "&#56832;", "\uFFFD"},
		{"reversed pair", "&#56832;&#55357;", "\uFFFD\uFFFD"},
		{"high high low", "&#55357;&#55357;&#56832;", "\uFFFD😀"},
		{"high then entity", "&#55357;&amp;", "\uFFFD&"},
		{"out of range", "&#x110000;", "\uFFFD"},
		{"nul dropped", "a&#0;b", "ab"},
		{"C0 dropped", "a&#1;&#7;&#27;b", "ab"},
		{"DEL and C1 dropped", "a&#127;&#x80;&#x9F;b", "ab"},
		{"tab LF CR kept", "&#9;&#10;&#13;", "\t\n\r"},
		{"unknown entity literal", "&nbsp;&copy;", "&nbsp;&copy;"},
		{"bare ampersand", "Tom & Jerry", "Tom & Jerry"},
		{"unterminated ref", "a &#65 b", "a &#65 b"},
		{"empty refs", "&#;&#x;", "&#;&#x;"},
		{"double escaped", "&amp;#55357;", "&#55357;"},
		{"literal CRLF", "a\r\nb\rc", "a\nb\nc"},
		{"raw UTF-8", "Café 東京 👍🏽", "Café 東京 👍🏽"},
		{"raw invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"CESU-8 pair", "\xed\xa0\xbd\xed\xb8\x80", "😀"},
		{"raw control", "a\x01\x1bb", "ab"},
		{"null marker", "null", ""},
		{"NULL is text", "NULL", "NULL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := smsBody(t, tt.in); got != tt.want {
				t.Errorf("body %q: got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestEncodingXMLLosesSurrogates pins the reason this package does not use
// encoding/xml: it decodes each half of a surrogate pair to U+FFFD, so the
// emoji is gone before any post-processing could recombine it.
func TestEncodingXMLLosesSurrogates(t *testing.T) {
	var v struct {
		Body string `xml:"body,attr"`
	}
	if err := xml.Unmarshal([]byte(`<sms body="&#55357;&#56832;"/>`), &v); err != nil {
		t.Skipf("encoding/xml rejects the reference: %v", err)
	}
	if v.Body == "😀" {
		t.Fatalf("encoding/xml now decodes surrogate pairs; the custom scanner's main reason is gone")
	}
	if got := smsBody(t, "&#55357;&#56832;"); got != "😀" {
		t.Fatalf("Reader: got %q", got)
	}
}

// TestDatesReadInSecondsOrMilliseconds: a record's date is read whether the
// export wrote it in milliseconds or in seconds (SMS and MMS alike), keeping
// the milliseconds and ignoring spaces around the number.
func TestDatesReadInSecondsOrMilliseconds(t *testing.T) {
	ms := time.Date(2026, 11, 18, 11, 6, 40, 0, time.UTC) // literal date: parsed from the fixture
	tests := []struct {
		name, doc string
		want      time.Time
	}{
		{"sms ms", `<sms address="1" date="1795000000000" type="1" body="x"/>`, ms},
		{"sms seconds", `<sms address="1" date="1795000000" type="1" body="x"/>`, ms},
		{"mms seconds", `<mms date="1795000000" msg_box="1" address="+14155550123"/>`, ms},
		{"mms ms", `<mms date="1795000000000" msg_box="2" address="+14155550123"/>`, ms},
		{"ms with millis", `<sms address="1" date="1795000000123" type="1" body="x"/>`, ms.Add(123 * time.Millisecond)},
		{"spaces", `<sms address="1" date=" 1795000000000 " type="1" body="x"/>`, ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, _, err := readAll(t, wrap(tt.doc), nil)
			if err != nil || len(recs) != 1 {
				t.Fatalf("got %d records, err %v", len(recs), err)
			}
			var got time.Time
			switch r := recs[0].(type) {
			case *SMS:
				got = r.Date
			case *MMS:
				got = r.Date
			}
			if !got.Equal(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSkippedRecords(t *testing.T) {
	valid := `<sms address="+14155550123" date="1795000000000" type="1" body="ok"/>`
	tests := []struct {
		name, doc, reason string
	}{
		{"unquoted value", `<sms address=+1 date="1795000000000" type="1"/>`, ReasonMalformed},
		{"attribute without value", `<sms address="1" date type="1"/>`, ReasonMalformed},
		{"stray lt in tag", `<sms address="1" <date="1795000000000" type="1"/>`, ReasonMalformed},
		{"slash without gt", `<sms address="1" date="1795000000000" type="1" / >`, ReasonMalformed},
		{"name too long", `<sms ` + strings.Repeat("a", 300) + `="1" address="1" date="1795000000000" type="1"/>`, ReasonMalformed},
		{"bad date", `<sms address="1" date="soon" type="1"/>`, ReasonBadDate},
		{"zero date", `<sms address="1" date="0" type="1"/>`, ReasonBadDate},
		{"absurd date", `<sms address="1" date="99999999999999999" type="1"/>`, ReasonBadDate},
		{"null date", `<sms address="1" date="null" type="1"/>`, ReasonBadDate},
		{"no type", `<sms address="1" date="1795000000000"/>`, ReasonBadType},
		{"type 7", `<sms address="1" date="1795000000000" type="7"/>`, ReasonBadType},
		{"type text", `<sms address="1" date="1795000000000" type="inbox"/>`, ReasonBadType},
		{"empty address", `<sms address="  " date="1795000000000" type="1"/>`, ReasonNoAddress},
		{"oversized address", `<sms address="` + strings.Repeat("5", 5000) + `" date="1795000000000" type="1"/>`, ReasonLongAddress},
		{"mms unknown box", `<mms date="1795000000000" msg_box="9" address="+1"/>`, ReasonBadType},
		{"mms no address", `<mms date="1795000000000" msg_box="1"><addrs><addr address="insert-address-token" type="137"/></addrs></mms>`, ReasonNoAddress},
		{"mms unclosed", `<mms date="1795000000000" msg_box="1" address="+1"><parts>`, ReasonUnclosed},
		{"mms oversized addr", `<mms date="1795000000000" msg_box="1" address="+1"><addrs><addr address="` + strings.Repeat("x", 5000) + `"/></addrs></mms>`, ReasonLongAddress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, st, err := readAll(t, wrap(valid+"\n"+tt.doc+"\n"+valid), nil)
			if err != nil {
				t.Fatalf("error %v: a malformed record must never be fatal", err)
			}
			if len(recs) != 2 {
				t.Fatalf("got %d records, want the 2 valid ones around the bad one", len(recs))
			}
			if st.Skipped != 1 || st.Reasons[tt.reason] != 1 {
				t.Errorf("skipped %d, reasons %v; want 1 × %q", st.Skipped, st.Reasons, tt.reason)
			}
			if st.SMS != 2 {
				t.Errorf("SMS count %d, want 2", st.SMS)
			}
		})
	}
}

func TestMMSBoxFallback(t *testing.T) {
	recs, _, err := readAll(t, wrap(`<mms date="1795000000000" m_type="128" address="+1"/><mms date="1795000000000" msg_box="null" m_type="132" address="+1"/>`), nil)
	if err != nil || len(recs) != 2 {
		t.Fatalf("got %d records, err %v", len(recs), err)
	}
	if got := recs[0].(*MMS).MsgBox; got != TypeSent {
		t.Errorf("m_type 128: box %d, want sent", got)
	}
	if got := recs[1].(*MMS).MsgBox; got != TypeInbox {
		t.Errorf("m_type 132: box %d, want inbox", got)
	}
}

func TestRCSDetection(t *testing.T) {
	tests := []struct {
		attrs string
		want  bool
	}{
		{`tr_id="proto:CkIK"`, true},
		{`rcs_message_type="1"`, true},
		{`ct_t="application/vnd.gsma.rcs-ft-http+xml"`, true},
		{`ct_t="application/vnd.wap.multipart.related" tr_id="T1"`, false},
		{`tr_id="null"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.attrs, func(t *testing.T) {
			recs, st, err := readAll(t, wrap(`<mms date="1795000000000" msg_box="1" address="+1" `+tt.attrs+`/>`), nil)
			if err != nil || len(recs) != 1 {
				t.Fatalf("got %d records, err %v", len(recs), err)
			}
			if got := recs[0].(*MMS).RCS; got != tt.want {
				t.Errorf("RCS %v, want %v", got, tt.want)
			}
			if (st.RCS == 1) != tt.want {
				t.Errorf("Stats.RCS %d", st.RCS)
			}
		})
	}
}

func TestPartSizesAndText(t *testing.T) {
	doc := wrap(`<mms date="1795000000000" msg_box="1" address="+1"><parts>
<part seq="0" ct="image/jpeg" data="TWFu"/>
<part seq="1" ct="image/jpeg" data="TWE="/>
<part seq="2" ct="image/jpeg" data="TQ=="/>
<part seq="3" ct="image/jpeg" data="TW&#10;Fu&#x0D;&#10;TWFu"/>
<part seq="4" ct="image/jpeg" data=""/>
<part seq="5" data="TWFu" ct="text/plain" chset="106"/>
<part seq="6" ct="text/plain" chset="4" data="Q2Fm6Q=="/>
<part seq="7" ct="text/plain" chset="1014" data="SABpAA=="/>
<part seq="8" ct="text/plain" chset="106" text="null" data="aGk="/>
<part seq="9" ct="text/plain" chset="106" text="both" data="aWdub3JlZA=="/>
</parts></mms>`)
	recs, _, err := readAll(t, doc, nil)
	if err != nil || len(recs) != 1 {
		t.Fatalf("got %d records, err %v", len(recs), err)
	}
	parts := recs[0].(*MMS).Parts
	want := []struct {
		size int64
		text string
	}{{3, ""}, {2, ""}, {1, ""}, {6, ""}, {0, ""}, {3, ""}, {4, "Café"}, {4, "Hi"}, {2, "hi"}, {7, "both"}}
	if len(parts) != len(want) {
		t.Fatalf("got %d parts", len(parts))
	}
	for i, w := range want {
		if parts[i].Size != w.size || parts[i].Text != w.text {
			t.Errorf("part %d: size %d text %q, want %d %q", i, parts[i].Size, parts[i].Text, w.size, w.text)
		}
	}
	if parts[4].HasData {
		t.Errorf("empty data reported as data")
	}
}

// TestReaderLimitsBoundTextPartsAndAddresses: Options bound what one record
// can hold: MaxText cuts a body on a rune boundary, MaxRecordText bounds an
// MMS's text parts together, MaxParts keeps the first parts and addresses
// and counts the dropped ones; cut text is counted in Stats.Truncated.
func TestReaderLimitsBoundTextPartsAndAddresses(t *testing.T) {
	t.Run("MaxText cuts a body on a rune boundary", func(t *testing.T) {
		body := strings.Repeat("é", 100) // 200 bytes
		recs, st, err := readAll(t, wrap(`<sms address="1" date="1795000000000" type="1" body="`+body+`"/>`), &Options{MaxText: 51})
		if err != nil || len(recs) != 1 {
			t.Fatalf("got %d records, err %v", len(recs), err)
		}
		got := recs[0].(*SMS).Body
		if got != strings.Repeat("é", 25) || !utf8.ValidString(got) {
			t.Errorf("got %q", got)
		}
		if st.Truncated != 1 {
			t.Errorf("Truncated %d, want 1", st.Truncated)
		}
	})
	t.Run("MaxRecordText bounds an MMS's text parts", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`<mms date="1795000000000" msg_box="1" address="+1"><parts>`)
		for range 10 {
			b.WriteString(`<part ct="text/plain" text="` + strings.Repeat("x", 100) + `"/>`)
		}
		b.WriteString(`</parts></mms>`)
		recs, st, err := readAll(t, wrap(b.String()), &Options{MaxText: 100, MaxRecordText: 250})
		if err != nil || len(recs) != 1 {
			t.Fatalf("got %d records, err %v", len(recs), err)
		}
		total := 0
		for _, p := range recs[0].(*MMS).Parts {
			total += len(p.Text)
		}
		if total != 250 {
			t.Errorf("kept %d bytes of text, want 250", total)
		}
		if st.Truncated == 0 {
			t.Errorf("truncation not counted")
		}
	})
	t.Run("MaxParts", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`<mms date="1795000000000" msg_box="1" address="+1"><parts>`)
		for range 7 {
			b.WriteString(`<part ct="image/png" data="TWFu"/>`)
		}
		b.WriteString(`</parts><addrs>`)
		for range 6 {
			b.WriteString(`<addr address="+1" type="151"/>`)
		}
		b.WriteString(`</addrs></mms>`)
		recs, _, err := readAll(t, wrap(b.String()), &Options{MaxParts: 5})
		if err != nil || len(recs) != 1 {
			t.Fatalf("got %d records, err %v", len(recs), err)
		}
		m := recs[0].(*MMS)
		if len(m.Parts) != 5 || m.DroppedParts != 2 || len(m.Addrs) != 5 || m.DroppedAddrs != 1 {
			t.Errorf("parts %d dropped %d, addrs %d dropped %d", len(m.Parts), m.DroppedParts, len(m.Addrs), m.DroppedAddrs)
		}
	})
}

func TestNotAnExport(t *testing.T) {
	tests := []struct {
		name, doc string
		want      error
	}{
		{"call log", `<?xml version="1.0"?><calls count="1"><call number="1"/></calls>`, ErrNotExport},
		{"other root", `<html><body/></html>`, ErrNotExport},
		{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><smses/>`, ErrNotExport},
		{"utf-16 BOM", "\xff\xfe<\x00s\x00", ErrNotExport},
		{"malformed root", `<smses count=1>`, ErrNotExport},
		{"garbage", `hello world`, ErrTruncated},
		{"empty", ``, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, _, err := readAll(t, tt.doc, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if len(recs) != 0 {
				t.Errorf("got %d records", len(recs))
			}
		})
	}
}

func TestEmptyAndSelfClosingRoot(t *testing.T) {
	for _, doc := range []string{"\xef\xbb\xbf<smses/>", `<smses count="0"></smses>`, "<?xml version='1.0'?>\n<!-- c -->\n<smses count='0' />trailing junk"} {
		recs, st, err := readAll(t, doc, nil)
		if err != nil || len(recs) != 0 || st.Incomplete {
			t.Errorf("%q: %d records, err %v, stats %+v", doc, len(recs), err, st)
		}
	}
}

// TestTruncatedAtEveryByte cuts the full fixture at every offset: the
// reader must return a prefix of the complete records, then an error
// wrapping ErrTruncated (never a panic, never a silent short read).
func TestTruncatedAtEveryByte(t *testing.T) {
	full, err := os.ReadFile(filepath.Join("testdata", "full.xml"))
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := readAll(t, string(full), nil)
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndex(full, []byte("</smses>")) + len("</smses>")
	step := 1
	if testing.Short() {
		step = 7
	}
	for cut := 0; cut < len(full); cut += step {
		recs, st, err := readAll(t, string(full[:cut]), nil)
		if cut >= end {
			if err != nil || len(recs) != len(all) {
				t.Fatalf("cut %d after </smses>: %d records, err %v", cut, len(recs), err)
			}
			continue
		}
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut %d: err %v, want ErrTruncated", cut, err)
		}
		if !st.Incomplete {
			t.Fatalf("cut %d: Stats.Incomplete not set", cut)
		}
		for i, r := range recs {
			if r.Offset() != all[i].Offset() {
				t.Fatalf("cut %d: record %d at offset %d, want %d", cut, i, r.Offset(), all[i].Offset())
			}
		}
		if len(recs) > 0 && recs[len(recs)-1].Offset() >= int64(cut) {
			t.Fatalf("cut %d: returned a record that starts after the cut", cut)
		}
	}
}

func TestTruncatedFixture(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "truncated.xml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewReader(f, nil)
	n := 0
	for {
		_, err := r.Next()
		if err == nil {
			n++
			continue
		}
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("err %v, want ErrTruncated", err)
		}
		if !strings.Contains(err.Error(), "byte") {
			t.Errorf("error %q does not say where the file ends", err)
		}
		if _, again := r.Next(); !errors.Is(again, ErrTruncated) {
			t.Errorf("second Next after truncation: %v", again)
		}
		break
	}
	st := r.Stats()
	if n != 3 || !st.Incomplete || st.Reasons[ReasonTruncated] != 1 {
		t.Errorf("records %d, stats %+v; want 3 records, incomplete, 1 truncated record", n, st)
	}
}

// streamReader produces head, then n copies of chunk, then tail, without
// ever holding more than one chunk: a generator for inputs far larger than
// the memory a test may use.
type streamReader struct {
	parts [][]byte
	reps  []int
	i     int
	off   int
}

func newStream(head string, chunk string, n int, tail string) *streamReader {
	return &streamReader{parts: [][]byte{[]byte(head), []byte(chunk), []byte(tail)}, reps: []int{1, n, 1}}
}

func (s *streamReader) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if s.i >= len(s.parts) {
			if total == 0 {
				return 0, io.EOF
			}
			return total, nil
		}
		if s.reps[s.i] == 0 {
			s.i++
			continue
		}
		n := copy(p, s.parts[s.i][s.off:])
		p, total, s.off = p[n:], total+n, s.off+n
		if s.off == len(s.parts[s.i]) {
			s.off = 0
			s.reps[s.i]--
		}
	}
	return total, nil
}

// allocDuring returns the bytes allocated while f ran.
func allocDuring(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHugePayloadsAreNotBuffered streams a 256 MiB base64 data attribute
// and a 64 MiB body: the reader must count the one and cut the other
// without allocating anything near their size.
func TestHugePayloadsAreNotBuffered(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 320 MiB")
	}
	chunk := strings.Repeat("QUJD", 16<<10) // 64 KiB of base64
	head := wrap(`<mms date="1795000000000" msg_box="1" address="+1"><parts><part ct="image/jpeg" name="big.jpg" data="`)
	head = head[:strings.Index(head, "\n</smses>")]
	var recs []Record
	var st Stats
	alloc := allocDuring(func() {
		r := NewReader(newStream(head, chunk, 4096, `"/></parts></mms></smses>`), nil)
		var err error
		if recs, err = collect(r); err != nil {
			t.Fatal(err)
		}
		st = r.Stats()
	})
	if len(recs) != 1 {
		t.Fatalf("got %d records", len(recs))
	}
	p := recs[0].(*MMS).Parts[0]
	if want := int64(4096) * (64 << 10) * 3 / 4; p.Size != want {
		t.Errorf("size %d, want %d", p.Size, want)
	}
	if alloc > 4<<20 {
		t.Errorf("allocated %d bytes reading a 256 MiB payload; it must not be buffered", alloc)
	}
	if st.Bytes < 256<<20 {
		t.Errorf("read only %d bytes", st.Bytes)
	}

	bodyChunk := strings.Repeat("word ", 13107) // ~64 KiB
	bhead := wrap(`<sms address="+1" date="1795000000000" type="1" body="`)
	bhead = bhead[:strings.Index(bhead, "\n</smses>")]
	alloc = allocDuring(func() {
		r := NewReader(newStream(bhead, bodyChunk, 1024, `"/></smses>`), &Options{MaxText: 1 << 20})
		rec, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if got := len(rec.(*SMS).Body); got != 1<<20 {
			t.Errorf("body kept %d bytes, want the 1 MiB limit", got)
		}
	})
	if alloc > 8<<20 {
		t.Errorf("allocated %d bytes reading a 64 MiB body with a 1 MiB limit", alloc)
	}
}

// TestDeepNesting streams a million nested unknown elements: skipped with a
// counter, not a stack.
func TestDeepNesting(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 50_000
	}
	head := wrap(`<sms address="+1" date="1795000000000" type="1" body="before"/>`)
	head = head[:strings.Index(head, "\n</smses>")]
	var got []Record
	alloc := allocDuring(func() {
		open := newStream(head, "<junk a='1'>", n, "")
		closeTags := newStream("", "</junk>", n, `<sms address="+1" date="1795000000001" type="1" body="after"/></smses>`)
		var err error
		if got, err = collect(NewReader(io.MultiReader(open, closeTags), nil)); err != nil {
			t.Fatal(err)
		}
	})
	if len(got) != 2 || got[1].(*SMS).Body != "after" {
		t.Fatalf("got %d records", len(got))
	}
	if alloc > 4<<20 {
		t.Errorf("allocated %d bytes for %d nested elements", alloc, n)
	}
}

// TestReadErrorIsFatal: an I/O error is reported as such, not as
// truncation.
func TestReadErrorIsFatal(t *testing.T) {
	boom := errors.New("disk on fire")
	r := NewReader(io.MultiReader(strings.NewReader(`<smses><sms address="1" date="1795000000000" type="1" body="x"/>`), errReader{boom}), nil)
	if _, err := r.Next(); err != nil {
		t.Fatalf("first record: %v", err)
	}
	_, err := r.Next()
	if !errors.Is(err, boom) || errors.Is(err, ErrTruncated) {
		t.Fatalf("err %v, want the read error", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestBufferBoundaries reads the fixtures with tiny buffers, so every
// token straddles a refill somewhere: the records must be identical to a
// read with the default buffer.
func TestBufferBoundaries(t *testing.T) {
	for _, name := range []string{"full", "hostile", "overlap-b", "truncated"} {
		doc, err := os.ReadFile(filepath.Join("testdata", name+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		want, wantSt, wantErr := readAll(t, string(doc), nil)
		for _, size := range []int{8, 9, 13, 31, 64, 100} {
			got, st, err := readAll(t, string(doc), &Options{bufSize: size})
			if (err == nil) != (wantErr == nil) || len(got) != len(want) {
				t.Fatalf("%s, buffer %d: %d records (err %v), want %d (err %v)", name, size, len(got), err, len(want), wantErr)
			}
			for i := range got {
				if fmt.Sprintf("%+v", got[i]) != fmt.Sprintf("%+v", want[i]) {
					t.Fatalf("%s, buffer %d, record %d:\n got %+v\nwant %+v", name, size, i, got[i], want[i])
				}
			}
			st.Bytes, wantSt.Bytes = 0, 0
			if fmt.Sprint(st) != fmt.Sprint(wantSt) {
				t.Errorf("%s, buffer %d: stats %+v, want %+v", name, size, st, wantSt)
			}
		}
	}
}
