// Package redact masks secrets and personal identifiers in message bodies
// before they leave Tidings.
//
// It runs on every body after the read policy (which is the reliable filter:
// blocked threads never reach it) and before sanitization and untrusted
// wrapping. Each class of secret has its own mask:
//
//	2fa      [REDACTED-2FA]      one-time codes, PINs, door and alarm codes
//	card     [REDACTED-CARD]     Luhn-valid card numbers, labelled CVV/CVC
//	ssn      [REDACTED-SSN]      US social security numbers
//	apikey   [REDACTED-APIKEY]   vendor API keys and tokens, private keys, JWTs
//	bank     [REDACTED-BANK]     labelled account numbers, ABA routing numbers
//	iban     [REDACTED-IBAN]     IBANs that pass the mod-97 check
//	address  [REDACTED-ADDRESS]  US-style street addresses and PO boxes
//	dob      [REDACTED-DOB]      dates labelled as a date of birth
//
// Rules are deliberately conservative about what they touch: a redactor that
// masks every number makes messages useless (times, prices, phone numbers,
// tracking numbers and order numbers all survive), so most rules need either
// a checksum (Luhn, mod 97, ABA 3-7-1), a label ("SSN", "routing", "DOB"), a
// vendor prefix, or a keyword next to the value. docs/redaction.md lists the
// rules, what is deliberately not masked, and the measured precision and
// recall on the labelled corpus in testdata/corpus.jsonl.
//
// All regular expressions are RE2 (package regexp), compiled once at package
// initialisation, and gated by cheap prefilters (digit counts, keyword
// substrings), so a typical message costs a few microseconds.
package redact

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Class names. They appear in findings, configuration and logs, so they are
// stable: never rename one.
const (
	Class2FA     = "2fa"
	ClassCard    = "card"
	ClassSSN     = "ssn"
	ClassAPIKey  = "apikey"
	ClassBank    = "bank"
	ClassIBAN    = "iban"
	ClassAddress = "address"
	ClassDOB     = "dob"
)

// classOrder lists every class from the highest merge priority to the
// lowest (see [Redactor.Redact] for how overlaps are resolved).
var classOrder = []string{ClassAPIKey, ClassCard, ClassIBAN, ClassSSN, ClassBank, Class2FA, ClassDOB, ClassAddress}

var masks = map[string]string{
	Class2FA:     "[REDACTED-2FA]",
	ClassCard:    "[REDACTED-CARD]",
	ClassSSN:     "[REDACTED-SSN]",
	ClassAPIKey:  "[REDACTED-APIKEY]",
	ClassBank:    "[REDACTED-BANK]",
	ClassIBAN:    "[REDACTED-IBAN]",
	ClassAddress: "[REDACTED-ADDRESS]",
	ClassDOB:     "[REDACTED-DOB]",
}

// Classes returns every class name, from the highest merge priority to the
// lowest.
func Classes() []string { return append([]string(nil), classOrder...) }

// Mask returns the replacement text for class ("[REDACTED-2FA]" for "2fa"),
// or "" for an unknown class.
func Mask(class string) string { return masks[class] }

// Config switches each class on or off. The zero value masks nothing; use
// [DefaultConfig], which masks every class, and turn classes off from there.
type Config struct {
	TwoFA   bool // one-time codes near keywords, bare codes (hints, sender and shape heuristics), PINs
	Card    bool // Luhn-valid card numbers in any common grouping, labelled CVV/CVC
	SSN     bool // US social security numbers (dash, slash, dot, space; labelled contiguous)
	APIKey  bool // vendor tokens, private key blocks, JWTs, keyword = value secrets
	Bank    bool // labelled account numbers and ABA routing numbers
	IBAN    bool // IBANs with a valid country length and mod-97 check
	Address bool // US-style street addresses and PO boxes
	DOB     bool // dates labelled as a date of birth
}

// DefaultConfig enables every class.
func DefaultConfig() Config {
	return Config{TwoFA: true, Card: true, SSN: true, APIKey: true, Bank: true, IBAN: true, Address: true, DOB: true}
}

func (c *Config) field(class string) *bool {
	switch class {
	case Class2FA:
		return &c.TwoFA
	case ClassCard:
		return &c.Card
	case ClassSSN:
		return &c.SSN
	case ClassAPIKey:
		return &c.APIKey
	case ClassBank:
		return &c.Bank
	case ClassIBAN:
		return &c.IBAN
	case ClassAddress:
		return &c.Address
	case ClassDOB:
		return &c.DOB
	}
	return nil
}

// Set turns one class on or off by its stable name, so configuration files
// can name classes; an unknown name is an error.
func (c *Config) Set(class string, on bool) error {
	f := c.field(class)
	if f == nil {
		return fmt.Errorf("redact: unknown class %q (known: %s)", class, strings.Join(classOrder, ", "))
	}
	*f = on
	return nil
}

// Enabled reports whether class is on.
func (c Config) Enabled(class string) bool {
	f := c.field(class)
	return f != nil && *f
}

// Hints carry what the caller knows about a message beyond its text.
type Hints struct {
	// OneTimeCodes are byte ranges [start, end) of Text that the platform
	// marked as one-time codes (Apple's __kIMOneTimeCodeAttributeName runs,
	// converted from UTF-16 units to byte offsets). They are masked as 2fa
	// whenever that class is on. Ranges out of bounds are clipped; empty or
	// inverted ranges are ignored; a range that splits a character is
	// widened to whole characters.
	OneTimeCodes [][2]int
	// SenderShortCode says the sender is an SMS short code or an
	// alphanumeric sender id (a business, not a person). It enables the
	// bare-code heuristic for a 4–8 digit code at the start of the message.
	SenderShortCode bool
}

// Finding is one masked span. Start and End are byte offsets into the text
// given to Redact (after invalid UTF-8 was replaced, see [Redactor.Redact]).
type Finding struct {
	Class string `json:"class"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// Redactor masks the classes its Config enables. It holds no mutable state
// and is safe for concurrent use.
type Redactor struct {
	cfg Config
}

// New returns a Redactor for cfg. The rules themselves are compiled once per
// process, so New is cheap.
func New(cfg Config) *Redactor { return &Redactor{cfg: cfg} }

var defaultRedactor = New(DefaultConfig())

// Default returns a shared Redactor with [DefaultConfig].
func Default() *Redactor { return defaultRedactor }

// Config returns the configuration r was built with.
func (r *Redactor) Config() Config { return r.cfg }

// RedactText masks text with the platform's one-time-code byte ranges as the
// only hint. It has the shape output boundaries want:
// Redact(text string, oneTimeCodes [][2]int) string.
func (r *Redactor) RedactText(text string, oneTimeCodes [][2]int) string {
	out, _ := r.Redact(text, Hints{OneTimeCodes: oneTimeCodes})
	return out
}

// OneTimeCodeRanges returns the byte ranges of the runs Apple marked as
// one-time codes, ready for [Hints].OneTimeCodes.
func OneTimeCodeRanges(runs []model.Run) [][2]int {
	var out [][2]int
	for _, r := range runs {
		if r.OneTimeCode && r.End > r.Start {
			out = append(out, [2]int{r.Start, r.End})
		}
	}
	return out
}

// Redact returns text with every finding replaced by its class's mask, and
// the findings sorted by Start.
//
// Guarantees:
//   - The output is valid UTF-8. Invalid input bytes are first replaced by
//     U+FFFD (one per run, like strings.ToValidUTF8); findings and hint
//     ranges then refer to that repaired text, which equals the input for
//     every valid string.
//   - Findings never overlap. When rules disagree about a span, the spans
//     are merged into their union and the class with the highest priority
//     wins: apikey, card, iban, ssn, bank, 2fa, dob, address (a bank number
//     found only by proximity to a label ranks below 2fa).
//   - Nothing inside a mask is ever masked again: text that already
//     contains a mask, such as "[REDACTED-CARD]", keeps it as it is.
//   - Idempotent: Redact of the output finds nothing. Masking can change the
//     context of a nearby value, so the output is re-examined until it is
//     stable; findings of later rounds are mapped back to the input.
//   - It never panics, whatever the input or hints.
func (r *Redactor) Redact(text string, h Hints) (string, []Finding) {
	if !utf8.ValidString(text) {
		text, h.OneTimeCodes = repairUTF8(text, h.OneTimeCodes)
	}
	cands := r.detect(text, h.OneTimeCodes, h.SenderShortCode)
	fs := resolve(cands)
	if len(fs) == 0 {
		return text, nil
	}
	for {
		out, segs := render(text, fs)
		more := r.detect(out, nil, h.SenderShortCode)
		if len(more) == 0 {
			return out, fs
		}
		added := false
		for _, c := range more {
			s, e, ok := mapBack(segs, c.start, c.end)
			if !ok {
				continue
			}
			c.start, c.end = s, e
			cands = append(cands, c)
			added = true
		}
		next := resolve(cands)
		if !added || covered(next) <= covered(fs) {
			// Cannot happen (later rounds only add spans outside masks);
			// stop rather than loop if it ever does.
			return out, fs
		}
		fs = next
	}
}

// cand is a finding before overlap resolution.
type cand struct {
	start, end int
	class      string
	prio       int
}

// Merge priorities. Higher wins when spans overlap.
const (
	prioAddress   = 10
	prioDOB       = 20
	prioBankLoose = 25
	prio2FA       = 30
	prioBank      = 40
	prioSSN       = 50
	prioIBAN      = 60
	prioCard      = 70
	prioAPIKey    = 80
)

// detect runs every enabled rule over text and returns candidates in text's
// coordinates, minus any that touch a mask already present in text.
func (r *Redactor) detect(text string, otc [][2]int, shortCode bool) []cand {
	if text == "" {
		return nil
	}
	d, back := prepare(text)
	var cs []cand
	if r.cfg.TwoFA && len(otc) > 0 {
		cs = appendHintCands(cs, text, otc)
	}
	n := len(cs)
	cs = r.rules(d, shortCode, cs)
	if back != nil {
		for i := n; i < len(cs); i++ {
			cs[i].start, cs[i].end = back.span(cs[i].start, cs[i].end)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	if strings.Contains(text, "[REDACTED-") {
		prot := maskSpans(text)
		kept := cs[:0]
		for _, c := range cs {
			if !overlapsAny(c.start, c.end, prot) {
				kept = append(kept, c)
			}
		}
		cs = kept
	}
	return cs
}

// rules runs the enabled rules on a prepared document.
func (r *Redactor) rules(d *doc, shortCode bool, cs []cand) []cand {
	if r.cfg.APIKey && (d.maxRun >= 4 || strings.Contains(d.s, "-----")) {
		cs = findAPIKeys(d, cs)
	}
	if d.ndigits == 0 {
		return cs
	}
	if r.cfg.Card && d.ndigits >= 3 {
		cs = findCards(d, cs)
	}
	if r.cfg.IBAN && d.ndigits >= 6 {
		cs = findIBANs(d, cs)
	}
	if r.cfg.SSN && d.ndigits >= 9 {
		cs = findSSNs(d, cs)
	}
	if r.cfg.Bank && d.ndigits >= 6 {
		cs = findBank(d, cs)
	}
	if r.cfg.TwoFA {
		cs = findCodes(d, shortCode, cs)
	}
	if r.cfg.DOB && d.ndigits >= 1 {
		cs = findDOB(d, cs)
	}
	if r.cfg.Address {
		cs = findAddresses(d, cs)
	}
	return cs
}

// appendHintCands turns platform one-time-code ranges into candidates,
// clipped to text and widened to whole characters.
func appendHintCands(cs []cand, text string, otc [][2]int) []cand {
	for _, rg := range otc {
		s, e := rg[0], rg[1]
		if s < 0 {
			s = 0
		}
		if e > len(text) {
			e = len(text)
		}
		if s >= e {
			continue
		}
		for s > 0 && !utf8.RuneStart(text[s]) {
			s--
		}
		for e < len(text) && !utf8.RuneStart(text[e]) {
			e++
		}
		// Trim surrounding whitespace the platform may include.
		for s < e && (text[s] == ' ' || text[s] == '\n' || text[s] == '\t') {
			s++
		}
		for e > s && (text[e-1] == ' ' || text[e-1] == '\n' || text[e-1] == '\t') {
			e--
		}
		if s < e {
			cs = append(cs, cand{s, e, Class2FA, prio2FA})
		}
	}
	return cs
}

// resolve sorts candidates and merges overlapping ones into their union,
// keeping the class of the highest priority.
func resolve(cs []cand) []Finding {
	if len(cs) == 0 {
		return nil
	}
	sorted := make([]cand, len(cs))
	copy(sorted, cs)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].start != sorted[j].start {
			return sorted[i].start < sorted[j].start
		}
		return sorted[i].end > sorted[j].end
	})
	var out []Finding
	cur := sorted[0]
	for _, c := range sorted[1:] {
		if c.start < cur.end {
			if c.end > cur.end {
				cur.end = c.end
			}
			if c.prio > cur.prio {
				cur.prio, cur.class = c.prio, c.class
			}
			continue
		}
		out = append(out, Finding{Class: cur.class, Start: cur.start, End: cur.end})
		cur = c
	}
	return append(out, Finding{Class: cur.class, Start: cur.start, End: cur.end})
}

func covered(fs []Finding) int {
	n := 0
	for _, f := range fs {
		n += f.End - f.Start
	}
	return n
}

// seg maps a stretch of rendered output back to the input: output bytes
// [out, out+n) are input bytes [in, in+n) when !mask, or the mask of input
// [in, inEnd) when mask.
type seg struct {
	out, in, n, inEnd int
	mask              bool
}

// render replaces each finding with its mask.
func render(text string, fs []Finding) (string, []seg) {
	var b strings.Builder
	b.Grow(len(text) + 16*len(fs))
	segs := make([]seg, 0, 2*len(fs)+1)
	pos := 0
	for _, f := range fs {
		if f.Start > pos {
			segs = append(segs, seg{out: b.Len(), in: pos, n: f.Start - pos})
			b.WriteString(text[pos:f.Start])
		}
		m := masks[f.Class]
		segs = append(segs, seg{out: b.Len(), in: f.Start, n: len(m), inEnd: f.End, mask: true})
		b.WriteString(m)
		pos = f.End
	}
	if pos < len(text) {
		segs = append(segs, seg{out: b.Len(), in: pos, n: len(text) - pos})
		b.WriteString(text[pos:])
	}
	return b.String(), segs
}

// mapBack maps an output span that lies inside one unmasked segment back to
// input offsets.
func mapBack(segs []seg, s, e int) (int, int, bool) {
	for _, g := range segs {
		if g.mask || s < g.out || s >= g.out+g.n {
			continue
		}
		if e > g.out+g.n {
			return 0, 0, false
		}
		return g.in + (s - g.out), g.in + (e - g.out), true
	}
	return 0, 0, false
}

// maskSpans returns the spans of every mask already present in text.
func maskSpans(text string) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], "[REDACTED-")
		if j < 0 {
			break
		}
		j += i
		matched := false
		for _, c := range classOrder {
			m := masks[c]
			if strings.HasPrefix(text[j:], m) {
				out = append(out, [2]int{j, j + len(m)})
				i = j + len(m)
				matched = true
				break
			}
		}
		if !matched {
			i = j + 1
		}
	}
	return out
}

func overlapsAny(s, e int, spans [][2]int) bool {
	for _, p := range spans {
		if s < p[1] && p[0] < e {
			return true
		}
	}
	return false
}

// repairUTF8 replaces each run of invalid bytes with U+FFFD and moves the
// hint ranges along with the text.
func repairUTF8(text string, otc [][2]int) (string, [][2]int) {
	var b strings.Builder
	b.Grow(len(text) + 8)
	fwd := make([]int, len(text)+1)
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && w == 1 {
			start := b.Len()
			b.WriteString("\uFFFD")
			for i < len(text) {
				r, w = utf8.DecodeRuneInString(text[i:])
				if r != utf8.RuneError || w != 1 {
					break
				}
				fwd[i] = start
				i++
			}
			continue
		}
		for k := 0; k < w; k++ {
			fwd[i+k] = b.Len()
		}
		b.WriteString(text[i : i+w])
		i += w
	}
	fwd[len(text)] = b.Len()
	var moved [][2]int
	for _, rg := range otc {
		s, e := clamp(rg[0], 0, len(text)), clamp(rg[1], 0, len(text))
		moved = append(moved, [2]int{fwd[s], fwd[e]})
	}
	return b.String(), moved
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
