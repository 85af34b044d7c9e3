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

type offsetError string

func (e offsetError) Error() string { return string(e) }

// setOffsets converts the runs' UTF-16 ranges into byte offsets and checks
// that they tile the text exactly.
func setOffsets(text string, runs []Run) error {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
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

// runTemplate maps an attribute dictionary to a Run's fields.
func (d *decoder) runTemplate(v Value) (Run, error) {
	r := Run{Part: -1}
	if v == nil {
		return r, nil
	}
	dict, ok := v.(Dictionary)
	if !ok {
		return r, d.bad(ckAttributedString, "attributes are not an NSDictionary")
	}
	r.Attrs = make(map[string]Value, dict.Len())
	var detected [5]bool
	var bold, italic, underline, strike bool
	effect := ""
	for i, kv := range dict.Keys {
		k, ok := kv.(String)
		if !ok {
			return r, d.bad(ckAttributedString, "attribute key is not an NSString")
		}
		val := dict.Values[i]
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
			detected[0] = true
		case KeyAddress:
			detected[1] = true
		case KeyMoney:
			detected[2] = true
		case KeyCalendarEvent:
			detected[3] = true
		case KeyDataDetected:
			detected[4] = true
		case KeyBold:
			bold = truthy(val)
		case KeyItalic:
			italic = truthy(val)
		case KeyUnderline:
			underline = truthy(val)
		case KeyStrikethrough:
			strike = truthy(val)
		case KeyTextEffect:
			if n, ok := val.(Number); ok {
				id, _ := n.Int64()
				if name, ok := effectNames[id]; ok {
					effect = "effect:" + name
				} else {
					effect = "effect:" + strconv.FormatInt(id, 10)
				}
			} else if s, ok := val.(String); ok {
				effect = "effect:" + string(s)
			}
		}
	}
	mask := 0
	for i, on := range detected {
		if on {
			mask |= 1 << i
		}
	}
	r.Detected = detectedSets[mask]
	mask = 0
	for i, on := range [...]bool{bold, italic, underline, strike} {
		if on {
			mask |= 1 << i
		}
	}
	r.Styles = styleSets[mask]
	if effect != "" {
		r.Styles = append(append(make([]string, 0, len(r.Styles)+1), r.Styles...), effect)
	}
	return r, nil
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
func AttributedBody(blob []byte) (text string, runs []Run, err error) {
	d := getDecoder(blob, false)
	defer putDecoder(d)
	if err := d.decode(); err != nil {
		return "", nil, err
	}
	if len(d.groups) != 1 || d.groups[0].end-d.groups[0].start != 1 {
		return "", nil, &SyntaxError{Offset: len(blob), Msg: "attributedBody holds more than one top-level value"}
	}
	as, ok := d.vals[d.groups[0].start].(*AttributedString)
	if !ok {
		return "", nil, &SyntaxError{Offset: len(blob), Msg: "top-level value is not an NSAttributedString"}
	}
	return as.Text, as.Runs, nil
}
