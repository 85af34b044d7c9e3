package typedstream

import (
	"strconv"
	"unicode/utf8"
)

// Attribute keys Messages stores in attributedBody dictionaries.
const (
	KeyPart             = "__kIMMessagePartAttributeName"
	KeyFileTransferGUID = "__kIMFileTransferGUIDAttributeName"
	KeyFilename         = "__kIMFilenameAttributeName"
	KeyInlineWidth      = "__kIMInlineMediaWidthAttributeName"
	KeyInlineHeight     = "__kIMInlineMediaHeightAttributeName"
	KeyWritingDirection = "__kIMBaseWritingDirectionAttributeName"
	KeyMention          = "__kIMMentionConfirmedMention"
	KeyLink             = "__kIMLinkAttributeName"
	KeyLinkIsRichLink   = "__kIMLinkIsRichLinkAttributeName"
	KeyDataDetected     = "__kIMDataDetectedAttributeName"
	KeyOneTimeCode      = "__kIMOneTimeCodeAttributeName"
	KeyPhoneNumber      = "__kIMPhoneNumberAttributeName"
	KeyAddress          = "__kIMAddressAttributeName"
	KeyMoney            = "__kIMMoneyAttributeName"
	KeyCalendarEvent    = "__kIMCalendarEventAttributeName"
	KeyBold             = "__kIMTextBoldAttributeName"
	KeyItalic           = "__kIMTextItalicAttributeName"
	KeyUnderline        = "__kIMTextUnderlineAttributeName"
	KeyStrikethrough    = "__kIMTextStrikethroughAttributeName"
	KeyTextEffect       = "__kIMTextEffectAttributeName"
	KeyTranscription    = "IMAudioTranscription"
)

// Run is one attribute run of an attributed body. Runs tile the text in
// order: the first starts at 0, each starts where the previous ended, and
// the last ends at the end of the text.
//
// Runs that share one stored attribute dictionary share its Attrs map and
// its Detected and Styles slices; treat them as read-only.
type Run struct {
	// Location and Length are the run's range in UTF-16 code units, as
	// stored (Length) and accumulated (Location).
	Location, Length int
	// Start and End are byte offsets of the run in the UTF-8 text.
	Start, End int
	// Part is the message part index (__kIMMessagePartAttributeName), -1
	// when the run has none.
	Part int
	// AttachmentGUID is the attachment's guid (__kIMFileTransferGUIDAttributeName).
	AttachmentGUID string
	// Filename is __kIMFilenameAttributeName.
	Filename string
	// Mention is the mentioned handle (__kIMMentionConfirmedMention).
	Mention string
	// Link is the link URL (__kIMLinkAttributeName), resolved to a string.
	Link string
	// OneTimeCode is true when Apple marked the run as a one-time code.
	OneTimeCode bool
	// Detected lists data detectors on the run, in this order when present:
	// "phone", "address", "money", "calendar", "data".
	Detected []string
	// Styles lists text styles, in this order when present: "bold",
	// "italic", "underline", "strikethrough", "effect:<name>" (big, small,
	// shake, nod, explode, ripple, bloom, jitter, or the number when the
	// effect is unknown).
	Styles []string
	// Transcription is an audio message's transcript (IMAudioTranscription).
	Transcription string
	// Attrs holds every attribute of the run, decoded, by key.
	Attrs map[string]Value
}

// effectNames maps __kIMTextEffectAttributeName numbers to names (as
// imessage-exporter documents them).
var effectNames = map[int64]string{
	4: "ripple", 5: "big", 6: "bloom", 8: "nod", 9: "shake", 10: "jitter", 11: "small", 12: "explode",
}

// effectIDs is the inverse of effectNames.
var effectIDs = func() map[string]int64 {
	m := make(map[string]int64, len(effectNames))
	for k, v := range effectNames {
		m[v] = k
	}
	return m
}()

// attributed interprets an NSAttributedString body: the string, then runs
// of ("iI" dictionary number, UTF-16 length), each new number followed by
// its attribute dictionary.
func (d *decoder) attributed(gs []rawGroup) (Value, error) {
	if len(gs) == 0 {
		return nil, d.bad(ckAttributedString, "missing string")
	}
	sv, ok := d.one(gs[0], "@")
	text, ok2 := interp(sv).(String)
	if !ok || !ok2 {
		return nil, d.bad(ckAttributedString, "first value is not an NSString")
	}
	// Mapping runs walks the text: charge it, so that many attributed
	// strings sharing one large NSString cannot cost quadratic work.
	if err := d.spend(len(text)); err != nil {
		return nil, err
	}
	as := &AttributedString{Text: string(text)}
	nruns := 0
	for _, g := range gs[1:] {
		if string(g.enc) == "iI" {
			nruns++
		}
	}
	if nruns > 0 {
		as.Runs = make([]Run, 0, nruns)
	}
	var buf [4]Run
	templates := buf[:0] // one per dictionary number, 1-based
	loc := 0
	for i := 1; i < len(gs); {
		g := gs[i]
		if string(g.enc) != "iI" || g.end-g.start != 2 {
			return nil, d.bad(ckAttributedString, "run is not an iI group")
		}
		num, _ := d.vals[g.start].(Int)
		length, _ := d.vals[g.start+1].(Uint)
		i++
		switch {
		case int(num) == len(templates)+1:
			if i >= len(gs) {
				return nil, d.bad(ckAttributedString, "new attribute number without a dictionary")
			}
			dv, ok := d.one(gs[i], "@")
			if !ok {
				return nil, d.bad(ckAttributedString, "new attribute number without a dictionary")
			}
			i++
			t, err := d.runTemplate(interp(dv))
			if err != nil {
				return nil, err
			}
			templates = append(templates, t)
		case num < 1 || int(num) > len(templates):
			return nil, d.bad(ckAttributedString, "attribute number "+strconv.FormatInt(int64(num), 10)+" out of sequence")
		}
		if uint64(length) > uint64(len(text))*2 {
			return nil, d.bad(ckAttributedString, "run longer than the text")
		}
		r := templates[num-1]
		r.Location, r.Length = loc, int(length)
		loc += int(length)
		as.Runs = append(as.Runs, r)
	}
	if err := setOffsets(as.Text, as.Runs); err != nil {
		return nil, d.bad(ckAttributedString, err.Error())
	}
	return as, nil
}

// isASCII reports whether s is all ASCII, eight bytes at a time.
func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

type offsetError string

func (e offsetError) Error() string { return string(e) }

// setOffsets converts the runs' UTF-16 ranges into byte offsets and checks
// that they tile the text exactly.
func setOffsets(text string, runs []Run) error {
	if isASCII(text) {
		end := 0
		for i := range runs {
			runs[i].Start, runs[i].End = runs[i].Location, runs[i].Location+runs[i].Length
			end = runs[i].End
		}
		if (len(runs) > 0 || len(text) > 0) && end != len(text) {
			return offsetError("run lengths add up to " + strconv.Itoa(end) + " UTF-16 units, text has " + strconv.Itoa(len(text)))
		}
		return nil
	}
	pos, units := 0, 0 // byte offset, UTF-16 offset
	for i := range runs {
		runs[i].Start = pos
		target := runs[i].Location + runs[i].Length
		for units < target && pos < len(text) {
			r, size := utf8.DecodeRuneInString(text[pos:])
			pos += size
			if r >= 0x10000 {
				units += 2
			} else {
				units++
			}
		}
		if units != target {
			if units > target {
				return offsetError("run boundary splits a surrogate pair")
			}
			return offsetError("run lengths exceed the text")
		}
		runs[i].End = pos
	}
	if pos != len(text) {
		return offsetError("run lengths do not cover the text")
	}
	return nil
}

// runTemplate maps an attribute dictionary (or nil) to a Run's fields.
func (d *decoder) runTemplate(v Value) (Run, error) {
	if v == nil {
		return Run{Part: -1}, nil
	}
	dict, ok := v.(Dictionary)
	if !ok {
		return Run{Part: -1}, d.bad(ckAttributedString, "attributes are not an NSDictionary")
	}
	return d.template(dict.Keys, dict.Values)
}

// template maps the entries of an attribute dictionary (keys[i] ↦ vals[i])
// to a Run's fields.
func (d *decoder) template(keys, vals []Value) (Run, error) {
	var b runBuilder
	b.start(len(keys))
	for i, k := range keys {
		if !b.add(k, vals[i]) {
			return Run{}, d.bad(ckAttributedString, "attribute key is not an NSString")
		}
	}
	return b.run(), nil
}

// runBuilder maps the entries of one attribute dictionary to a Run's fields,
// one entry at a time, so that the fast path needs no Dictionary. Both
// decoding paths build every run with it.
type runBuilder struct {
	r        Run
	detected uint8 // bit i: detectorNames[i]
	styles   uint8 // bits: bold, italic, underline, strikethrough
	effect   string
}

// start begins a run whose dictionary has n entries.
func (b *runBuilder) start(n int) {
	*b = runBuilder{r: Run{Part: -1, Attrs: make(map[string]Value, n)}}
}

// add records one entry; it reports false when the key is not an NSString.
func (b *runBuilder) add(kv, val Value) bool {
	k, ok := kv.(String)
	if !ok {
		return false
	}
	r := &b.r
	r.Attrs[string(k)] = val
	switch k {
	case KeyPart:
		if n, ok := val.(Number); ok {
			if p, ok := n.Int64(); ok && p >= 0 && p <= 1<<31 {
				r.Part = int(p)
			}
		}
	case KeyFileTransferGUID:
		r.AttachmentGUID = stringOf(val)
	case KeyFilename:
		r.Filename = stringOf(val)
	case KeyMention:
		r.Mention = stringOf(val)
	case KeyLink:
		r.Link = stringOf(val)
	case KeyTranscription:
		r.Transcription = stringOf(val)
	case KeyOneTimeCode:
		r.OneTimeCode = val != nil
	case KeyPhoneNumber:
		b.detected |= 1 << 0
	case KeyAddress:
		b.detected |= 1 << 1
	case KeyMoney:
		b.detected |= 1 << 2
	case KeyCalendarEvent:
		b.detected |= 1 << 3
	case KeyDataDetected:
		b.detected |= 1 << 4
	case KeyBold:
		b.style(0, truthy(val))
	case KeyItalic:
		b.style(1, truthy(val))
	case KeyUnderline:
		b.style(2, truthy(val))
	case KeyStrikethrough:
		b.style(3, truthy(val))
	case KeyTextEffect:
		if n, ok := val.(Number); ok {
			id, _ := n.Int64()
			if name, ok := effectStyles[id]; ok {
				b.effect = name
			} else {
				b.effect = "effect:" + strconv.FormatInt(id, 10)
			}
		} else if s, ok := val.(String); ok {
			b.effect = "effect:" + string(s)
		}
	}
	return true
}

func (b *runBuilder) style(bit uint, on bool) {
	if on {
		b.styles |= 1 << bit
	} else {
		b.styles &^= 1 << bit
	}
}

// run returns the finished run.
func (b *runBuilder) run() Run {
	r := b.r
	r.Detected = detectedSets[b.detected]
	r.Styles = styleSets[b.styles]
	if b.effect != "" {
		if sets, ok := effectSets[b.effect]; ok {
			r.Styles = sets[b.styles]
		} else {
			r.Styles = append(append(make([]string, 0, len(r.Styles)+1), r.Styles...), b.effect)
		}
	}
	return r
}

// subsets returns, for every bit mask over names, the names whose bits are
// set (nil for none). Runs share these read-only slices.
func subsets(names ...string) [][]string {
	out := make([][]string, 1<<len(names))
	for m := 1; m < len(out); m++ {
		for i, n := range names {
			if m&(1<<i) != 0 {
				out[m] = append(out[m], n)
			}
		}
		out[m] = out[m][:len(out[m]):len(out[m])]
	}
	return out
}

var (
	detectedSets = subsets("phone", "address", "money", "calendar", "data")
	styleSets    = subsets("bold", "italic", "underline", "strikethrough")
	// effectStyles maps the known effect numbers to their style names, and
	// effectSets each such name to the style lists that end with it, so that
	// the usual effects cost no allocation.
	effectStyles = func() map[int64]string {
		m := make(map[int64]string, len(effectNames))
		for id, name := range effectNames {
			m[id] = "effect:" + name
		}
		return m
	}()
	effectSets = func() map[string][][]string {
		m := make(map[string][][]string, len(effectStyles))
		for _, name := range effectStyles {
			sets := make([][]string, len(styleSets))
			for i, base := range styleSets {
				sets[i] = append(append(make([]string, 0, len(base)+1), base...), name)
			}
			m[name] = sets
		}
		return m
	}()
)

// stringOf returns the text of a String, the resolved string of a *URL, or "".
func stringOf(v Value) string {
	switch x := v.(type) {
	case String:
		return string(x)
	case *URL:
		return x.String()
	}
	return ""
}

// truthy reports whether a style attribute is set (a non-zero number).
func truthy(v Value) bool {
	switch x := v.(type) {
	case Number:
		return x.Float64() != 0
	case nil:
		return false
	}
	return true
}

// AttributedBody decodes an iMessage attributedBody blob: a typedstream whose
// only value is an NSAttributedString or NSMutableAttributedString. It
// returns the text and its runs (see Run). Any malformed, truncated or
// trailing data, invalid UTF-8 text, or runs whose UTF-16 lengths do not add
// up to the text's is an error, and then text and runs are empty: a caller
// should fall back to the message's text column, never to a guess.
//
// Bodies in the shape Messages writes take a fast path (fast.go); anything
// else, including every malformed blob, is decoded by the generic reader,
// which also produces every error.
func AttributedBody(blob []byte) (text string, runs []Run, err error) {
	d := getDecoder(blob, false)
	defer putDecoder(d)
	if text, runs, ok := d.fastBody(); ok {
		return text, runs, nil
	}
	d.reset()
	return d.attributedBody()
}

// attributedBody decodes d.b with the generic reader.
func (d *decoder) attributedBody() (string, []Run, error) {
	if err := d.decode(); err != nil {
		return "", nil, err
	}
	if len(d.groups) != 1 || d.groups[0].end-d.groups[0].start != 1 {
		return "", nil, &SyntaxError{Offset: len(d.b), Msg: "attributedBody holds more than one top-level value"}
	}
	as, ok := d.vals[d.groups[0].start].(*AttributedString)
	if !ok {
		return "", nil, &SyntaxError{Offset: len(d.b), Msg: "top-level value is not an NSAttributedString"}
	}
	return as.Text, as.Runs, nil
}
