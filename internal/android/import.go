package android

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/model"
)

// Service names of Android messages (model.Message.Service).
const (
	ServiceSMS = "SMS"
	ServiceMMS = "MMS"
	ServiceRCS = "RCS"
)

// ImportOptions configure Import.
type ImportOptions struct {
	// Region is the default phone region for numbers written without a
	// country code (config.Config.Region); empty means
	// contacts.DefaultRegion. It must be the region the rest of Tidings
	// uses, so Android handles normalise exactly like iMessage handles.
	Region string
	// Owner lists the user's own numbers. Empty means detect them from the
	// export (a first, metadata-only pass; see DetectOwner).
	Owner []string
	// Reader bounds the reader (zero: defaults).
	Reader Options
	// Batch is how many messages are buffered before the conversations
	// they introduce and then the messages are delivered (default 4096).
	// Conversations are thus delivered before their first message, in
	// few calls, with bounded memory.
	Batch int
}

// Sink receives an import. Conversations is called with the conversations
// a batch introduces, before the batch's messages.
type Sink struct {
	Conversations func([]model.Conversation) error
	Message       func(model.Message) error
}

// Result describes an import.
type Result struct {
	Stats  Stats  `json:"stats"`
	Header Header `json:"header"`
	// Owner holds the owner's normalised numbers used to key group
	// threads; OwnerDetected is true when they came from the export.
	Owner         []string `json:"owner,omitempty"`
	OwnerDetected bool     `json:"owner_detected"`
	Conversations int      `json:"conversations"`
	Messages      int      `json:"messages"`
	// Contacts are the names the export carries (contact_name), one card
	// per number, for contacts.NewBook.
	Contacts []model.Contact `json:"-"`
}

// ReadFile imports the export at path (see Import).
func ReadFile(ctx context.Context, path string, opts ImportOptions, sink Sink) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("open android export: %w", err)
	}
	defer f.Close()
	res, err := Import(ctx, f, opts, sink)
	if err != nil {
		return res, fmt.Errorf("android export %s: %w", path, err)
	}
	return res, nil
}

// Import reads an export and delivers its conversations and messages to
// sink. Unless opts.Owner is set, it first reads the export once for the
// owner's numbers (metadata only, bodies and media skipped) and then seeks
// back. Every complete record is delivered even when the export turns out
// to be truncated; the error then wraps ErrTruncated. Malformed records
// are skipped and counted in Result.Stats.
func Import(ctx context.Context, src io.ReadSeeker, opts ImportOptions, sink Sink) (Result, error) {
	region := opts.Region
	if region == "" {
		region = contacts.DefaultRegion
	}
	if !contacts.ValidRegion(region) {
		return Result{}, fmt.Errorf("android import: unknown region %q", region)
	}
	var res Result
	owner := keySet(opts.Owner, region)
	if len(owner) == 0 {
		det, err := detectOwner(ctx, src, opts.Reader, region)
		if err != nil && !errors.Is(err, ErrTruncated) {
			return res, err
		}
		owner = keySet(det, region)
		res.OwnerDetected = len(owner) > 0
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return res, fmt.Errorf("rewind android export: %w", err)
		}
	}
	for k := range owner {
		res.Owner = append(res.Owner, k)
	}
	slices.Sort(res.Owner)

	c := newConverter(region, owner)
	batch := opts.Batch
	if batch <= 0 {
		batch = 4096
	}
	pending := make([]model.Message, 0, min(batch, 4096))
	var newConvs []model.Conversation
	flush := func() error {
		if len(newConvs) > 0 && sink.Conversations != nil {
			if err := sink.Conversations(newConvs); err != nil {
				return err
			}
		}
		newConvs = newConvs[:0]
		for _, m := range pending {
			if sink.Message != nil {
				if err := sink.Message(m); err != nil {
					return err
				}
			}
		}
		res.Messages += len(pending)
		clear(pending)
		pending = pending[:0]
		return nil
	}
	rd := NewReader(src, &opts.Reader)
	finish := func(err error) (Result, error) {
		res.Stats, res.Header, res.Contacts = rd.Stats(), rd.Header(), c.names.contacts()
		return res, err
	}
	var readErr error
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return finish(err)
			}
		}
		rec, err := rd.Next()
		if err != nil {
			if err != io.EOF {
				readErr = err
			}
			break
		}
		conv, msg, isNew := c.convert(rec)
		if isNew {
			newConvs = append(newConvs, conv)
			res.Conversations++
		}
		pending = append(pending, msg)
		if len(pending) >= batch {
			if err := flush(); err != nil {
				return finish(err)
			}
		}
	}
	if err := flush(); err != nil {
		return finish(err)
	}
	return finish(readErr)
}

// DetectOwner reads an export's metadata and returns the owner's numbers
// (normalised): the "from" address of MMS the phone sent, and the sole
// recipient of MMS it received, minus any address with more counter-
// evidence (it sent us MMS, or we sent MMS to it) than evidence. With no
// such evidence it falls back to the one address present in every received
// MMS, if there is exactly one. SMS carry no owner number.
func DetectOwner(ctx context.Context, src io.Reader, region string) ([]string, error) {
	if region == "" {
		region = contacts.DefaultRegion
	}
	return detectOwner(ctx, src, Options{}, region)
}

func detectOwner(ctx context.Context, src io.Reader, ropts Options, region string) ([]string, error) {
	ropts.MetaOnly = true
	rd := NewReader(src, &ropts)
	o := ownerScan{score: map[string]int{}, evidence: map[string]bool{}}
	keyOf := func(a string) string { return participantKey(a, region) }
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, err := rd.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return o.result(), err
		}
		if m, ok := rec.(*MMS); ok {
			o.add(m, keyOf)
		}
	}
}

// maxKeys bounds the per-address maps of metadata passes, so a hostile
// export with millions of distinct addresses cannot grow memory.
const maxKeys = 200000

type ownerScan struct {
	score    map[string]int
	evidence map[string]bool
	inter    map[string]bool // addresses in every received MMS so far
	started  bool
}

func (o *ownerScan) bump(k string, d int) {
	if k == "" {
		return
	}
	if _, ok := o.score[k]; !ok && len(o.score) >= maxKeys {
		return
	}
	o.score[k] += d
	if d > 0 {
		o.evidence[k] = true
	}
}

func (o *ownerScan) add(m *MMS, key func(string) string) {
	var from []string
	var to []string
	for _, a := range m.Addrs {
		k := key(a.Address)
		if k == "" {
			continue
		}
		switch a.Type {
		case AddrFrom:
			from = append(from, k)
		case AddrTo, AddrCC, AddrBCC:
			if !slices.Contains(to, k) {
				to = append(to, k)
			}
		}
	}
	if m.MsgBox == TypeInbox {
		for _, k := range from {
			o.bump(k, -1)
		}
		if len(to) == 1 {
			o.bump(to[0], +1)
		}
		if len(to) > 0 {
			if !o.started {
				o.started = true
				o.inter = map[string]bool{}
				for _, k := range to {
					o.inter[k] = true
				}
			} else {
				for k := range o.inter {
					if !slices.Contains(to, k) {
						delete(o.inter, k)
					}
				}
			}
		}
		return
	}
	for _, k := range from {
		o.bump(k, +1)
	}
	for _, k := range to {
		o.bump(k, -1)
	}
}

func (o *ownerScan) result() []string {
	var out []string
	for k, s := range o.score {
		if s > 0 && o.evidence[k] {
			out = append(out, k)
		}
	}
	if len(out) == 0 && len(o.inter) == 1 {
		for k := range o.inter {
			if o.score[k] >= 0 {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

func keySet(addrs []string, region string) map[string]bool {
	out := map[string]bool{}
	for _, a := range addrs {
		if k := participantKey(a, region); k != "" {
			out[k] = true
		}
	}
	return out
}

// participantKey is the handle Tidings stores for an address: E.164 for a
// phone (contacts.Normalize with the region), lower-case e-mail, short code
// digits, alphanumeric sender id; an address Normalize cannot classify is
// kept trimmed. It is "" for no address (empty, "null", the
// insert-address-token placeholder).
func participantKey(raw, region string) string {
	raw = strings.TrimSpace(raw)
	if !usableAddress(raw) {
		return ""
	}
	key, kind := contacts.Normalize(raw, region)
	if kind == contacts.KindInvalid || key == "" {
		return raw
	}
	return key
}

// --- conversion --------------------------------------------------------------

type converter struct {
	region  string
	owner   map[string]bool
	seen    map[string]bool // conversation ids already delivered
	names   nameBook
	scratch []string
}

func newConverter(region string, owner map[string]bool) *converter {
	return &converter{region: region, owner: owner, seen: map[string]bool{}, names: nameBook{byKey: map[string]*nameCard{}}}
}

func (c *converter) key(a string) string { return participantKey(a, c.region) }

// convert maps one record. isNew is true the first time conv is seen.
func (c *converter) convert(rec Record) (conv model.Conversation, m model.Message, isNew bool) {
	switch r := rec.(type) {
	case *SMS:
		conv, m = c.sms(r)
	case *MMS:
		conv, m = c.mms(r)
	}
	if !c.seen[conv.ID] {
		c.seen[conv.ID] = true
		isNew = true
	}
	return conv, m, isNew
}

// Conversation builds the conversation of a participant set (normalised
// keys; the owner already removed).
func Conversation(participants []string) model.Conversation {
	ps := slices.Clone(participants)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	conv := model.Conversation{Source: model.SourceAndroid, ID: ConversationID(ps), Kind: model.KindDirect,
		Service: ServiceSMS, Participants: ps}
	if len(ps) == 1 {
		conv.Identifier = ps[0]
	} else {
		conv.Kind = model.KindGroup
		conv.Identifier = conv.ID
	}
	return conv
}

// ConversationID is "android:" and 16 hex digits of the SHA-256 of the
// sorted, normalised participant keys: the same people give the same id in
// every export.
func ConversationID(sortedKeys []string) string {
	h := sha256.New()
	for i, k := range sortedKeys {
		if i > 0 {
			h.Write([]byte{0x1f})
		}
		h.Write([]byte(k))
	}
	return "android:" + hex.EncodeToString(h.Sum(nil)[:8])
}

func boxDetail(box int) string {
	switch box {
	case TypeDraft:
		return "draft"
	case TypeOutbox:
		return "outbox"
	case TypeFailed:
		return "failed"
	case TypeQueued:
		return "queued"
	}
	return ""
}

func direction(box int) string {
	if box == TypeInbox {
		return "in"
	}
	return "out"
}

func (c *converter) sms(s *SMS) (model.Conversation, model.Message) {
	k := c.key(s.Address)
	conv := Conversation([]string{k})
	fromMe := s.Type != TypeInbox
	m := model.Message{
		Source: model.SourceAndroid, ID: SMSID(s), ConversationIDs: []string{conv.ID},
		FromMe: fromMe, Service: ServiceSMS, Kind: model.MsgText, Detail: boxDetail(s.Type),
		Time: s.Date, Text: s.Body, TextSource: "text", Subject: s.Subject,
		IsSent: s.Type == TypeSent, IsRead: s.Read && !fromMe,
	}
	if m.Text == "" {
		m.TextSource = "none"
	}
	if fromMe {
		m.IsDelivered = s.Type == TypeSent && s.HasStatus && s.Status == 0
	} else {
		m.Sender = k
	}
	// contact_name names the other party in both directions.
	c.names.add(k, strings.TrimSpace(s.Address), s.ContactName, s.Date)
	if s.Type == TypeFailed || (fromMe && s.HasStatus && s.Status == 64) {
		m.Error = 1
	}
	return conv, m
}

func (c *converter) mms(r *MMS) (model.Conversation, model.Message) {
	keys := c.scratch[:0]
	ownerSeen := ""
	addKey := func(a string) {
		k := c.key(a)
		switch {
		case k == "":
		case c.owner[k]:
			ownerSeen = k
		case !slices.Contains(keys, k):
			keys = append(keys, k)
		}
	}
	for _, a := range splitAddress(r.Address) {
		addKey(a)
	}
	sender := ""
	for _, a := range r.Addrs {
		addKey(a.Address)
		if a.Type == AddrFrom && sender == "" {
			sender = c.key(a.Address)
		}
	}
	if len(keys) == 0 && ownerSeen != "" {
		keys = append(keys, ownerSeen) // a note to self
	}
	c.scratch = keys
	conv := Conversation(keys)
	fromMe := r.MsgBox != TypeInbox
	service := ServiceMMS
	if r.RCS {
		service = ServiceRCS
	}
	id := MMSID(r)
	m := model.Message{
		Source: model.SourceAndroid, ID: id, ConversationIDs: []string{conv.ID},
		FromMe: fromMe, Service: service, Kind: model.MsgText, Detail: boxDetail(r.MsgBox),
		Time: r.Date, Subject: r.Subject, IsSent: r.MsgBox == TypeSent, IsRead: r.Read && !fromMe,
	}
	if r.MsgBox == TypeFailed {
		m.Error = 1
	}
	if r.MType == 130 {
		m.Detail = "not_downloaded" // a notification whose content was never fetched
	}
	if !fromMe {
		if sender == "" || c.owner[sender] {
			sender = ""
			if len(conv.Participants) == 1 {
				sender = conv.Participants[0]
			}
		}
		m.Sender = sender
	}
	var text strings.Builder
	lastText := false
	for i, p := range r.Parts {
		switch {
		case p.IsSMIL():
			continue
		case p.IsText():
			if lastText {
				text.WriteByte('\n')
			}
			text.WriteString(p.Text)
			lastText = true
		default:
			text.WriteRune('\uFFFC')
			lastText = false
			m.Attachments = append(m.Attachments, model.Attachment{
				ID: id + "/" + strconv.Itoa(i), Filename: partFilename(p), MimeType: p.ContentType,
				Size: p.Size, Outgoing: fromMe,
			})
		}
	}
	m.Text = text.String()
	m.TextSource = "text"
	if m.Text == "" {
		m.TextSource = "none"
	}
	c.mmsName(r)
	return conv, m
}

// maxParticipants bounds the addresses taken from one MMS "address"
// attribute (a 4 KiB value could list two thousand), keeping the
// per-record work linear.
const maxParticipants = 256

// splitAddress splits an MMS "address" attribute on "~", at most
// maxParticipants entries.
func splitAddress(s string) []string {
	parts := strings.SplitN(s, "~", maxParticipants+1)
	if len(parts) > maxParticipants {
		parts = parts[:maxParticipants]
	}
	return parts
}

// mmsName records the names an MMS's contact_name carries. For one other
// person it is that person's name. For a group the app writes the names of
// the "address" list comma-separated in the same order, so each address is
// paired with the name at its position; some people write only in groups,
// and this list is the export's one source of their name. The list is used
// only when it has exactly one entry per address (the owner's included or
// not): a name containing a comma would shift every later pair, so such a
// list names nobody rather than the wrong people. Entries that are not
// names ("(Unknown)", a raw number) are skipped by nameBook.add.
func (c *converter) mmsName(r *MMS) {
	raw := splitAddress(r.Address)
	var others []string // addresses other than the owner's, in order
	seen := map[string]bool{}
	for _, a := range raw {
		k := c.key(a)
		if k == "" || c.owner[k] || seen[k] {
			continue
		}
		seen[k] = true
		others = append(others, a)
	}
	if len(others) == 1 {
		c.names.add(c.key(others[0]), strings.TrimSpace(others[0]), r.ContactName, r.Date)
		return
	}
	names := strings.Split(r.ContactName, ",")
	var addrs []string
	switch len(names) {
	case len(raw):
		addrs = raw
	case len(others):
		addrs = others
	default:
		return
	}
	for i, a := range addrs {
		if k := c.key(a); k != "" && !c.owner[k] {
			c.names.add(k, strings.TrimSpace(a), names[i], r.Date)
		}
	}
}

// partFilename is a media part's display name: name, fn or cl, with any
// folder stripped (never a path).
func partFilename(p Part) string {
	for _, s := range []string{p.Name, p.Filename, p.ContentLoc} {
		s = strings.TrimSpace(s)
		if i := strings.LastIndexAny(s, `/\`); i >= 0 {
			s = s[i+1:]
		}
		if s != "" && s != "null" && s != "." && s != ".." {
			return s
		}
	}
	return ""
}

// SMSID is an SMS's stable message id: "android:sms:" and 24 hex digits of
// the SHA-256 of its direction (in/out), date in milliseconds, address as
// stored and body. Box changes (queued → sent), read flags and contact
// names do not change it; the same message in two exports has one id.
func SMSID(s *SMS) string {
	h := sha256.New()
	writeFields(h, "sms", direction(s.Type), strconv.FormatInt(s.Date.UnixMilli(), 10),
		strings.TrimSpace(s.Address), s.Body)
	return "android:sms:" + hex.EncodeToString(h.Sum(nil)[:12])
}

// MMSID is an MMS's stable message id: "android:mms:" and 24 hex digits of
// the SHA-256 of its direction, date in milliseconds, addresses as stored
// (the "address" attribute's, else the <addr> ones; sorted), subject, and
// every non-SMIL part's content type and text (text parts) or name (media;
// payload sizes are left out so an export without media gives the same
// ids).
func MMSID(r *MMS) string {
	var addrs []string
	for _, a := range strings.Split(r.Address, "~") {
		if usableAddress(a) {
			addrs = append(addrs, strings.TrimSpace(a))
		}
	}
	if len(addrs) == 0 {
		for _, a := range r.Addrs {
			if usableAddress(a.Address) {
				addrs = append(addrs, strings.TrimSpace(a.Address))
			}
		}
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	h := sha256.New()
	writeFields(h, "mms", direction(r.MsgBox), strconv.FormatInt(r.Date.UnixMilli(), 10),
		strings.Join(addrs, "\x1f"), r.Subject)
	for _, p := range r.Parts {
		if p.IsSMIL() {
			continue
		}
		content := p.Text
		if !p.IsText() {
			content = partFilename(p)
		}
		writeFields(h, p.ContentType, content)
		h.Write([]byte{0x1e})
	}
	return "android:mms:" + hex.EncodeToString(h.Sum(nil)[:12])
}

func writeFields(w io.Writer, fields ...string) {
	for _, f := range fields {
		io.WriteString(w, f)
		w.Write([]byte{0})
	}
}

// --- contact names -------------------------------------------------------------

// nameBook keeps, per normalised number, the newest contact name the export
// shows for it.
type nameBook struct {
	byKey map[string]*nameCard
}

type nameCard struct {
	raw  string
	name string
	when time.Time
}

// add records a contact name seen on a message to or from key.
func (b *nameBook) add(key, raw, name string, when time.Time) {
	name = strings.TrimSpace(name)
	if key == "" || !isName(name) {
		return
	}
	if cur, ok := b.byKey[key]; ok {
		if when.After(cur.when) {
			cur.raw, cur.name, cur.when = raw, name, when
		}
		return
	}
	if len(b.byKey) >= maxKeys {
		return
	}
	b.byKey[key] = &nameCard{raw: raw, name: name, when: when}
}

// isName reports whether a contact_name value names someone: not empty,
// not the app's "(Unknown)" or "null", and not a raw number (the app writes
// an unsaved member of a group as their number; a name has a letter).
func isName(name string) bool {
	if name == "" || name == "(Unknown)" || name == "null" {
		return false
	}
	return strings.IndexFunc(name, unicode.IsLetter) >= 0
}

// contacts returns one card per number, sorted by id. Modified is the date
// of the newest message showing the name, so a more recently edited
// address-book card wins the display name in contacts.NewBook.
func (b *nameBook) contacts() []model.Contact {
	out := make([]model.Contact, 0, len(b.byKey))
	for k, c := range b.byKey {
		card := model.Contact{Source: model.SourceAndroid, ID: "android:" + k, FullName: c.name, Modified: c.when}
		if strings.Contains(k, "@") {
			card.Emails = []string{c.raw}
		} else {
			card.Phones = []string{c.raw}
		}
		out = append(out, card)
	}
	slices.SortFunc(out, func(a, b model.Contact) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// ReadContacts returns the contact names an export carries (one card per
// number, Source "android") in a metadata-only pass, for building a
// contacts.Book without importing messages.
func ReadContacts(ctx context.Context, path, region string) ([]model.Contact, error) {
	if region == "" {
		region = contacts.DefaultRegion
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open android export: %w", err)
	}
	defer f.Close()
	rd := NewReader(f, &Options{MetaOnly: true})
	c := newConverter(region, nil)
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, err := rd.Next()
		if err != nil {
			out := c.names.contacts()
			if err == io.EOF {
				return out, nil
			}
			return out, fmt.Errorf("android export %s: %w", path, err)
		}
		switch r := rec.(type) {
		case *SMS:
			c.names.add(c.key(r.Address), strings.TrimSpace(r.Address), r.ContactName, r.Date)
		case *MMS:
			c.mmsName(r)
		}
	}
}
