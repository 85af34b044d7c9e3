package mail

import (
	"fmt"
	"io"
	"mime"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// charsetEncoding finds a decoder for a MIME charset label (ISO-8859-x,
// Windows-125x, ISO-2022-JP, Shift_JIS, GB18030, KOI8-R, ...): the WHATWG
// label table first (it knows the aliases mail clients actually write,
// e.g. "latin1", "cp1252"), then the IANA registry.
func charsetEncoding(label string) (encoding.Encoding, error) {
	l := strings.ToLower(strings.Trim(strings.TrimSpace(label), `"'`))
	switch l {
	case "", "us-ascii", "ascii", "utf-8", "utf8":
		return unicode.UTF8, nil
	}
	if e, err := htmlindex.Get(l); err == nil && e != nil {
		return e, nil
	}
	if e, err := ianaindex.MIME.Encoding(l); err == nil && e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("unknown charset %q", limitLabel(label))
}

func limitLabel(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// charsetReader is a mime.WordDecoder / go-message CharsetReader.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	e, err := charsetEncoding(label)
	if err != nil {
		return nil, err
	}
	return e.NewDecoder().Reader(r), nil
}

// headerDecoder decodes RFC 2047 encoded words in any charset above.
func headerDecoder() *mime.WordDecoder {
	return &mime.WordDecoder{CharsetReader: charsetReader}
}

// decodeHeader decodes RFC 2047 words in s; on a malformed word the text
// is kept as written rather than lost.
func decodeHeader(s string) string {
	out, err := headerDecoder().DecodeHeader(s)
	if err != nil {
		return s
	}
	return out
}
