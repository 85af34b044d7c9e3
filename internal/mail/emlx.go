package mail

import (
	"errors"
	"fmt"
)

// Mail.app's .emlx framing (docs/tools.md, "Mail.app's local store"; the
// sources are cited in testdata/applemail/README.md): a first line holding
// the byte count of the RFC 822 message in ASCII decimal (Mail pads it with
// spaces, "622       \n"), then exactly that many bytes of message, then an
// XML property list with Mail's own metadata, which this reader ignores
// (flags come from the Envelope Index). A ".partial.emlx" has the same
// framing; its message lacks the attachments Mail keeps beside it.

// maxEMLXCountLine bounds the count line: twenty digits of an int64 and
// Mail's padding fit well inside it. A longer first line is not an .emlx.
const maxEMLXCountLine = 64

// ErrEMLXFraming means a file is not a well-framed .emlx: no count line,
// a count that is not a number, or a count larger than what the file holds
// (a truncated copy, or a lying length line).
var ErrEMLXFraming = errors.New("malformed .emlx file")

// emlxFrame reads the count line at the start of head (the first bytes of
// a file of size bytes) and returns where the message starts and how long
// it is. The count is never trusted beyond the file: a message that would
// end past size is refused, not read short or past the end.
func emlxFrame(head []byte, size int64) (off, n int64, err error) {
	if len(head) > maxEMLXCountLine {
		head = head[:maxEMLXCountLine]
	}
	i := 0
	for i < len(head) && (head[i] == ' ' || head[i] == '\t') {
		i++
	}
	start := i
	var count int64
	for i < len(head) && head[i] >= '0' && head[i] <= '9' {
		if i-start >= 18 { // beyond any file size: a lying length line
			return 0, 0, fmt.Errorf("%w: the byte count is too large", ErrEMLXFraming)
		}
		count = count*10 + int64(head[i]-'0')
		i++
	}
	if i == start {
		return 0, 0, fmt.Errorf("%w: the first line holds no byte count", ErrEMLXFraming)
	}
	for i < len(head) && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r') {
		i++
	}
	if i >= len(head) || head[i] != '\n' {
		return 0, 0, fmt.Errorf("%w: the byte count line does not end", ErrEMLXFraming)
	}
	off = int64(i + 1)
	if count > size-off {
		return 0, 0, fmt.Errorf("%w: the byte count (%d) exceeds the %d bytes the file holds after it", ErrEMLXFraming, count, size-off)
	}
	return off, count, nil
}

// ParseEMLX returns the RFC 822 message framed in an .emlx file's bytes
// (without the trailing property list).
func ParseEMLX(data []byte) ([]byte, error) {
	off, n, err := emlxFrame(data, int64(len(data)))
	if err != nil {
		return nil, err
	}
	return data[off : off+n], nil
}
