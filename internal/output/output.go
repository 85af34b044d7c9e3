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
//   - Fields: everything else a third party can write or choose — contact
//     and sender names, group titles, handles, attachment filenames, MIME
//     types, link URLs, mentions, emoji, subjects. [Field] sanitizes them as
//     one line (sanitize.Field); [Filename] also drops any directory part;
//     a message subject is redacted as well ([Boundary.Line]).
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
	"strings"

	"github.com/tidings-mcp/tidings/internal/model"
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

// Field sanitizes a one-line value from outside (a name, a title, a
// handle, a MIME type, a URL): invisible, bidi and tag characters removed,
// line breaks and tabs turned into spaces.
func Field(s string) string { return sanitize.Field(s) }

// Filename sanitizes an attachment's name and keeps only its last path
// element, so no directory (and no disk path) is ever shown.
func Filename(s string) string {
	s = sanitize.Field(s)
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	return s
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
	if s1 == r1 {
		return s1
	}
	// Sanitizing changed the text: secrets split by removed characters are
	// whole now, so look again. The second pass has no code ranges (they
	// referred to the raw text and are already masked).
	return san(b.r.RedactText(s1, nil))
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
	out.Sender = Field(m.Sender)
	out.Service = Field(m.Service)
	out.App = Field(m.App)
	out.Effect = Field(m.Effect)
	out.Detail = Field(m.Detail)
	if m.Runs != nil {
		keep := out.Text == m.Text
		out.Runs = make([]model.Run, len(m.Runs))
		for i, r := range m.Runs {
			r.Filename = Filename(r.Filename)
			r.Mention = Field(r.Mention)
			r.Link = Field(r.Link)
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
		r.Emoji = Field(r.Emoji)
		out.Reaction = &r
	}
	if m.GroupEvent != nil {
		g := *m.GroupEvent
		g.Other = Field(g.Other)
		g.Title = Field(g.Title)
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
	a.MimeType = Field(a.MimeType)
	a.UTI = Field(a.UTI)
	a.Path = ""
	return a
}

// Conversation returns a copy of c ready for output.
func (b *Boundary) Conversation(c model.Conversation) model.Conversation {
	out := c
	out.Identifier = Field(c.Identifier)
	out.DisplayName = Field(c.DisplayName)
	out.Service = Field(c.Service)
	out.Participants = fields(c.Participants)
	return out
}

// Contact returns a copy of c ready for output.
func (b *Boundary) Contact(c model.Contact) model.Contact {
	out := c
	out.First = Field(c.First)
	out.Last = Field(c.Last)
	out.Middle = Field(c.Middle)
	out.Nickname = Field(c.Nickname)
	out.Organization = Field(c.Organization)
	out.FullName = Field(c.FullName)
	out.Phones = fields(c.Phones)
	out.Emails = fields(c.Emails)
	return out
}

// fields sanitizes each element into a new slice (nil stays nil).
func fields(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = Field(s)
	}
	return out
}
