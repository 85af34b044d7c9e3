//go:build unix

package bridge

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strconv"
)

// idRecordName is the persistent record of answered request ids, in
// control/. One line per answered request:
//
//	r <id> <ident> .
//
// written after the response is prepared and before it is published.
// ident is a hash of the request file's identity (device, inode, size,
// modification time), so after a crash the worker can tell "the request I
// was answering" (finish publishing, or just remove it) from "a new request
// that reuses an id" (refused). The trailing " ." marks a complete line; a
// line torn by a power loss is ignored. The file only grows (ids must stay
// unique for the folder's lifetime): about 40 bytes per request.
const idRecordName = "ids.log"

// idRecord is the in-memory view of ids.log. It is used under the worker
// lock; refresh picks up lines other workers appended.
type idRecord struct {
	f    *os.File
	off  int64
	ids  map[string]uint64
	tail []byte // an incomplete last line
	bad  int    // lines that did not parse
}

func openIDRecord(control *dir) (*idRecord, error) {
	f, err := control.openPrivate(idRecordName, oRDWR|oAPPEND)
	if err != nil {
		return nil, fmt.Errorf("open id record: %w", err)
	}
	r := &idRecord{f: f, ids: map[string]uint64{}}
	if err := r.refresh(); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *idRecord) close() error { return r.f.Close() }

// refresh reads lines appended since the last call.
func (r *idRecord) refresh() error {
	fi, err := statFile(r.f)
	if err != nil {
		return err
	}
	if fi.size < r.off { // truncated by someone: start over
		r.off, r.tail, r.ids = 0, nil, map[string]uint64{}
	}
	if fi.size == r.off {
		return nil
	}
	buf := make([]byte, fi.size-r.off)
	n, err := r.f.ReadAt(buf, r.off)
	if err != nil && err != io.EOF {
		return fmt.Errorf("read id record: %w", err)
	}
	buf = buf[:n]
	r.off += int64(n)
	data := append(r.tail, buf...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		r.tail = data
		return nil
	}
	r.tail = append([]byte(nil), data[last+1:]...)
	for _, line := range bytes.Split(data[:last], []byte{'\n'}) {
		r.parse(line)
	}
	return nil
}

func (r *idRecord) parse(line []byte) {
	f := bytes.Fields(line)
	if len(f) != 4 || string(f[0]) != "r" || string(f[3]) != "." || !ValidID(string(f[1])) {
		if len(line) > 0 {
			r.bad++
		}
		return
	}
	h, err := strconv.ParseUint(string(f[2]), 16, 64)
	if err != nil {
		r.bad++
		return
	}
	r.ids[string(f[1])] = h
}

// lookup returns the identity hash recorded for id.
func (r *idRecord) lookup(id string) (uint64, bool) {
	h, ok := r.ids[id]
	return h, ok
}

// add records id as answered for the request file with identity h.
func (r *idRecord) add(id string, h uint64) error {
	line := make([]byte, 0, len(id)+24)
	if len(r.tail) > 0 { // terminate a torn line so ours stands alone
		line = append(line, '\n')
		r.tail = nil
	}
	line = append(line, "r "...)
	line = append(line, id...)
	line = append(line, ' ')
	line = strconv.AppendUint(line, h, 16)
	line = append(line, " .\n"...)
	// off is not advanced: the next refresh reads this line back, which is
	// harmless, and keeps off aligned if another worker ever appended first.
	if _, err := r.f.Write(line); err != nil {
		return fmt.Errorf("write id record: %w", err)
	}
	r.ids[id] = h
	return nil
}

// identity hashes a request file's identity.
func identity(fi fileInfo) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d:%d:%d:%d", fi.dev, fi.ino, fi.size, fi.mtime.UnixNano())
	return h.Sum64()
}
