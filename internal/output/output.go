// Package output is the one boundary that turns anything from outside into
// tool, bridge or CLI output (GUARD-01). Handlers never sanitize, redact or
// wrap ad hoc; they pass values through here.
//
// Three kinds of string leave Tidings:
//
//   - Bodies: message text, edit history, audio transcriptions. [Boundary.Body]
//     redacts them (secrets, one-time codes) and then sanitizes them with
//     sanitize.Sanitize (multi-line). Wrapping in
//     <untrusted_external_content> is a separate, explicit step,
//     [Wrapped], because the bridge protocol returns plain text fields
//     while MCP text output wraps.
//   - Names: everything else a third party can write or choose — contact
//     and sender names, organisations, group titles, handles, attachment
//     filenames, custom tapback text, MIME types, link URLs, mentions,
//     triage reasons built from them. [Name] is the one treatment for all
//     of them: redacted (every class), sanitized to one line, and & < >
//     escaped exactly as sanitize.Wrap escapes inside the untrusted element,
//     so no name can ever carry a literal wrapper tag or a card number, in
//     structured and text output alike (docs/security.md, "Names").
//     [Filename] also drops any directory part. A message subject is a
//     body that MCP wraps ([Boundary.Line]).
//   - Identifiers: message and conversation guids, attachment guids, reply
//     and reaction targets. They pass through byte-exact, because a model
//     hands them back to look things up; they come from the source
//     database, not from a sender's keyboard.
//
// [Boundary.Message], [Boundary.Conversation] and [Boundary.Contact] apply
// these rules to every string of the model types; a coverage test walks
// every string field of those types and fails when a new one is not
// classified. An attachment's disk path never leaves: Message clears it.
//
// Order matters and is fixed: redact → sanitize. If sanitizing changed the
// text (an invisible character split a card number, say), redaction runs
// once more on the clean text, so hiding a secret behind a zero-width space
// does not get it past the redactor.
package output

import (
	"strconv"
	"strings"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// Redactor masks secrets in a body. oneTimeCodes are byte ranges [start,
// end) of text that the platform marked as one-time codes; they are valid,
// sorted and non-overlapping. The redact package's *Redactor satisfies this
// interface with its RedactText method.
type Redactor interface {
	RedactText(text string, oneTimeCodes [][2]int) string
}

// CodeMask is what [CodeRangesOnly] writes over a platform-marked code.
const CodeMask = "[REDACTED-2FA]"

// CodeRangesOnly is the default Redactor: it masks only the ranges the
// platform itself marked as one-time codes and leaves the rest of the text
// alone. It exists so that a Boundary built without the full redactor still
// never shows a code Apple flagged; wiring passes the real redactor.
type CodeRangesOnly struct{}

// RedactText replaces each range with [CodeMask].
func (CodeRangesOnly) RedactText(text string, oneTimeCodes [][2]int) string {
	if len(oneTimeCodes) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, r := range oneTimeCodes {
		if r[0] < last || r[1] > len(text) || r[0] >= r[1] {
			continue // the Boundary never passes such ranges; be safe anyway
		}
		b.WriteString(text[last:r[0]])
		b.WriteString(CodeMask)
		last = r[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// Boundary converts values for output. The zero value is not usable; build
// one with [New]. It is safe for concurrent use when its Redactor is.
type Boundary struct {
	r Redactor
}

// New returns a Boundary that redacts bodies with r; a nil r means
// [CodeRangesOnly].
func New(r Redactor) *Boundary {
	if r == nil {
		r = CodeRangesOnly{}
	}
	return &Boundary{r: r}
}

// names redacts [Name]s with every class of the redact package on: a name
// is short and shown unwrapped, so it is never the place to relax a class.
var names = New(redact.Default())

// Name is the one output treatment of a short string a third party
// controls — a contact name or organisation, a group title, a sender, a
// handle, an attachment name, a custom tapback's text, a reason built from
// them, a MIME type, a link: redacted (every class), sanitized to one line
// (sanitize.Field), then &, <, > (and their look-alikes) escaped exactly as
// sanitize.Wrap escapes inside the untrusted-content element. The result
// holds no '<' at all, so it can never open, close or forge that element,
// and it reads the same way wrapped content does. Apply it exactly once:
// escaping is not idempotent (& becomes &amp;, then &amp;amp;). Inputs
// that take a name accept this escaped form back ([NameForms]).
func Name(s string) string { return sanitize.Escape(names.Line(s)) }

// Filename is [Name] of an attachment's name after dropping any directory
// part, so no directory (and no disk path) is ever shown.
func Filename(s string) string {
	s = sanitize.Field(s)
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	return Name(s)
}

// NameForms returns the ways a name parameter may be meant: s itself, then
// — when s holds a reference [Name] writes (&amp; &lt; &gt; &#…;) — the
// text it stands for, so a model that copies `A &amp; B` back from an
// answer still names `A & B`. The raw form comes first: a name that really
// contains "&amp;" keeps meaning itself.
func NameForms(s string) []string {
	if !strings.Contains(s, "&") {
		return []string{s}
	}
	u, err := sanitize.Unwrap(sanitize.OpenTag + s + sanitize.CloseTag)
	if err != nil || u == s {
		return []string{s}
	}
	return []string{s, u}
}

// Wrapped returns body inside the untrusted-content element, escaped so it
// cannot close or forge it (sanitize.Wrap). Pass it a value that already
// went through [Boundary.Body].
func Wrapped(body string) string { return sanitize.Wrap(body) }

// Body redacts and sanitizes message content. runs are the message's
// attribute runs (byte offsets into text); those marked OneTimeCode are
// passed to the redactor.
func (b *Boundary) Body(text string, runs []model.Run) string {
	return b.clean(text, OneTimeCodes(text, runs), sanitize.Sanitize)
}

// WrappedBody is Wrapped(Body(text, runs)).
func (b *Boundary) WrappedBody(text string, runs []model.Run) string {
	return sanitize.Wrap(b.Body(text, runs))
}

// Line redacts and sanitizes a one-line value that may carry a secret,
// such as a message subject.
func (b *Boundary) Line(s string) string { return b.clean(s, nil, sanitize.Field) }

func (b *Boundary) clean(text string, codes [][2]int, san func(string) string) string {
	r1 := b.r.RedactText(text, codes)
	s1 := san(r1)
	if s1 != r1 {
		// Sanitizing changed the text: secrets split by removed characters
		// are whole now, so look again. The second pass has no code ranges
		// (they referred to the raw text and are already masked).
		s1 = san(b.r.RedactText(s1, nil))
	}
	return stripObjectReplacement(s1)
}

// objectReplacement (U+FFFC) is where Messages kept an attachment inside
// a body ("\ufffcdinner tonight"). It stands for nothing a reader can use
// (the attachment is listed with the message), so it leaves no answer:
// bodies, lines and snippets all pass through clean.
const objectReplacement = "\ufffc"

func stripObjectReplacement(s string) string {
	if !strings.Contains(s, objectReplacement) {
		return s
	}
	return strings.TrimSpace(strings.ReplaceAll(s, objectReplacement, ""))
}

// OneTimeCodes returns the byte ranges of runs marked OneTimeCode
// ([model.OneTimeCodeRanges]).
func OneTimeCodes(text string, runs []model.Run) [][2]int { return model.OneTimeCodeRanges(text, runs) }

// Message returns a copy of m ready for output: bodies redacted and
// sanitized, fields sanitized, identifiers untouched, the attachment disk
// path cleared. Run offsets stay valid only when the text came through
// unchanged; otherwise they are set to -1 (the runs' other fields are
// still converted), because they refer to the raw text.
func (b *Boundary) Message(m model.Message) model.Message {
	out := m
	out.Text = b.Body(m.Text, m.Runs)
	out.Subject = b.Line(m.Subject)
	out.Sender = Name(m.Sender)
	out.Service = Name(m.Service)
	out.App = Name(m.App)
	out.Effect = Name(m.Effect)
	out.Detail = Name(m.Detail)
	if m.Runs != nil {
		keep := out.Text == m.Text
		out.Runs = make([]model.Run, len(m.Runs))
		for i, r := range m.Runs {
			r.Filename = Filename(r.Filename)
			r.Mention = Name(r.Mention)
			r.Link = Name(r.Link)
			r.Transcription = b.Body(r.Transcription, nil)
			r.Detected = fields(r.Detected)
			r.Styles = fields(r.Styles)
			if !keep {
				r.Start, r.End = -1, -1
			}
			out.Runs[i] = r
		}
	}
	if m.Edits != nil {
		out.Edits = make([]model.Edit, len(m.Edits))
		for i, e := range m.Edits {
			e.Text = b.Body(e.Text, nil)
			out.Edits[i] = e
		}
	}
	if m.Reaction != nil {
		r := *m.Reaction
		r.Emoji = Name(r.Emoji)
		out.Reaction = &r
	}
	if m.GroupEvent != nil {
		g := *m.GroupEvent
		g.Other = Name(g.Other)
		g.Title = Name(g.Title)
		out.GroupEvent = &g
	}
	if m.Attachments != nil {
		out.Attachments = make([]model.Attachment, len(m.Attachments))
		for i, a := range m.Attachments {
			out.Attachments[i] = Attachment(a)
		}
	}
	return out
}

// Attachment returns attachment metadata ready for output: the name and
// types sanitized, the disk path cleared.
func Attachment(a model.Attachment) model.Attachment {
	a.Filename = Filename(a.Filename)
	a.MimeType = Name(a.MimeType)
	a.UTI = Name(a.UTI)
	a.Path = ""
	return a
}

// Conversation returns a copy of c ready for output.
func (b *Boundary) Conversation(c model.Conversation) model.Conversation {
	out := c
	out.Identifier = Name(c.Identifier)
	out.DisplayName = Name(c.DisplayName)
	out.Service = Name(c.Service)
	out.Participants = fields(c.Participants)
	return out
}

// Contact returns a copy of c ready for output.
func (b *Boundary) Contact(c model.Contact) model.Contact {
	out := c
	out.First = Name(c.First)
	out.Last = Name(c.Last)
	out.Middle = Name(c.Middle)
	out.Nickname = Name(c.Nickname)
	out.Organization = Name(c.Organization)
	out.FullName = Name(c.FullName)
	out.Phones = fields(c.Phones)
	out.Emails = fields(c.Emails)
	return out
}

// fields applies Name to each element into a new slice (nil stays nil).
func fields(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = Name(s)
	}
	return out
}

// Count is n and its noun, singular for one: Count(1, "message") is
// "1 message", Count(3, "message") "3 messages". Every sentence the
// surfaces write about a count uses it.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
