package send

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// NonceTTL is how long a preview's nonce stays valid (the protocol's
// send_nonce_ttl_seconds).
const NonceTTL = 60 * time.Second

const (
	nonceIDBytes  = 16
	nonceIDLen    = 2 * nonceIDBytes             // hex
	nonceTagLen   = 43                           // base64url (no padding) of 32 bytes
	nonceTokenLen = nonceIDLen + 1 + nonceTagLen // "<id>.<tag>"
	usedPrefix    = ".used-"
)

// payload is what a nonce is bound to. Raw is the recipient as written, so
// a send must repeat it exactly; Address, Service and Text are the
// validated values; ImageSHA256 is the hex digest of the previewed image, or
// empty.
type payload struct {
	Raw, Address, Service, Text, ImageSHA256 string
}

// nonceRecord is the file kept under nonces/ for an unused nonce. It holds
// the tag, never the message.
type nonceRecord struct {
	V       int    `json:"v"`
	ID      string `json:"id"`
	Issued  int64  `json:"issued_unix_nano"`
	Expires int64  `json:"expires_unix_nano"`
	Tag     string `json:"tag"`
}

// nonceStore mints and consumes nonces: HMAC-SHA256 tags over (id, issue
// and expiry time, payload) with the per-install key, one 0600 file per
// unused nonce in a 0700 folder.
type nonceStore struct {
	dir string
	key []byte
}

// tag computes the nonce tag. Every field is length-prefixed so no two
// different payloads share an encoding.
func (s *nonceStore) tag(id string, issued, expires int64, p payload) string {
	m := hmac.New(sha256.New, s.key)
	writeField(m, "tidings send nonce v1")
	writeField(m, id)
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(issued))
	binary.BigEndian.PutUint64(b[8:], uint64(expires))
	m.Write(b[:])
	for _, f := range []string{p.Raw, p.Address, p.Service, p.Text, p.ImageSHA256} {
		writeField(m, f)
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

// mint creates a nonce for p valid from now for NonceTTL and stores its
// record. It returns the token the caller hands back ("<id>.<tag>").
func (s *nonceStore) mint(now time.Time, p payload) (token string, rec nonceRecord, err error) {
	var raw [nonceIDBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nonceRecord{}, fmt.Errorf("mint nonce: %w", err)
	}
	id := hex.EncodeToString(raw[:])
	rec = nonceRecord{V: 1, ID: id, Issued: now.UnixNano(), Expires: now.Add(NonceTTL).UnixNano()}
	rec.Tag = s.tag(id, rec.Issued, rec.Expires, p)
	data, err := json.Marshal(rec)
	if err != nil {
		return "", nonceRecord{}, err
	}
	if err := writePrivateFile(filepath.Join(s.dir, id), data); err != nil {
		return "", nonceRecord{}, fmt.Errorf("store nonce: %w", err)
	}
	return id + "." + rec.Tag, rec, nil
}

// parseToken splits a token into its id and tag, or reports it malformed.
func parseToken(token string) (id, tag string, ok bool) {
	if len(token) != nonceTokenLen || token[nonceIDLen] != '.' {
		return "", "", false
	}
	id, tag = token[:nonceIDLen], token[nonceIDLen+1:]
	if _, err := hex.DecodeString(id); err != nil || strings.ToLower(id) != id {
		return "", "", false
	}
	if _, err := base64.RawURLEncoding.DecodeString(tag); err != nil {
		return "", "", false
	}
	return id, tag, true
}

// consume uses up the nonce named by token: its file is atomically renamed
// away (so exactly one of two concurrent attempts gets it), read and
// deleted, whatever happens next. It fails for a malformed, unknown, used
// or expired token, and for a token whose tag is not the stored one. The
// caller then checks the payload with [nonceStore.matches].
func (s *nonceStore) consume(token string, now time.Time) (nonceRecord, error) {
	if strings.TrimSpace(token) == "" {
		return nonceRecord{}, newErr(CodeMissingNonce, MsgMissingNonce)
	}
	id, tag, ok := parseToken(strings.TrimSpace(token))
	if !ok {
		return nonceRecord{}, newErr(CodeInvalidNonce, "send gate: malformed nonce; pass the send_nonce from send_preview unchanged")
	}
	var sfx [8]byte
	rand.Read(sfx[:])
	used := filepath.Join(s.dir, usedPrefix+id+"-"+hex.EncodeToString(sfx[:]))
	if err := os.Rename(filepath.Join(s.dir, id), used); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nonceRecord{}, newErr(CodeNonceReplay, "send gate: nonce already used or unknown (each preview allows one send attempt); call send_preview again")
		}
		return nonceRecord{}, newErr(CodeState, fmt.Sprintf("send gate: cannot use the nonce: %v", err))
	}
	data, err := readSmall(used, 4<<10)
	os.Remove(used)
	if err != nil {
		return nonceRecord{}, newErr(CodeState, fmt.Sprintf("send gate: cannot read the nonce: %v", err))
	}
	var rec nonceRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.V != 1 || rec.ID != id {
		return nonceRecord{}, newErr(CodeInvalidNonce, "send gate: the stored nonce is damaged; call send_preview again")
	}
	if now.UnixNano() >= rec.Expires {
		return nonceRecord{}, newErr(CodeNonceExpired, fmt.Sprintf("send gate: nonce expired (a preview is valid for %ds); call send_preview again", int(NonceTTL/time.Second)))
	}
	if !hmac.Equal([]byte(tag), []byte(rec.Tag)) {
		return nonceRecord{}, newErr(CodeInvalidNonce, "send gate: nonce does not match its preview; pass the send_nonce from send_preview unchanged")
	}
	return rec, nil
}

// matches reports whether p is the payload rec was minted for.
func (s *nonceStore) matches(rec nonceRecord, p payload) bool {
	return hmac.Equal([]byte(s.tag(rec.ID, rec.Issued, rec.Expires, p)), []byte(rec.Tag))
}

// reap deletes expired nonce files, damaged ones older than an hour, and
// ".used-" leftovers of a crashed attempt older than a minute. It is best
// effort: reaping never blocks a preview or a send.
func (s *nonceStore) reap(now time.Time) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(s.dir, name)
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if strings.HasPrefix(name, usedPrefix) {
			if time.Since(info.ModTime()) > time.Minute {
				os.Remove(path)
			}
			continue
		}
		if len(name) != nonceIDLen {
			continue
		}
		data, err := readSmall(path, 4<<10)
		var rec nonceRecord
		if err != nil || json.Unmarshal(data, &rec) != nil {
			if time.Since(info.ModTime()) > time.Hour {
				os.Remove(path)
			}
			continue
		}
		if now.UnixNano() >= rec.Expires {
			os.Remove(path)
		}
	}
}

// readSmall reads a regular, private file of at most limit bytes without
// following a symlink.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkPrivateFile(f); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}
