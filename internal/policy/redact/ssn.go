package redact

// US social security numbers.
//
// Shapes: NNN-NN-NNNN, NNN/NN/NNNN, NNN.NN.NNNN and NNN NN NNNN (one
// separator kind per number, as Presidio requires), standing alone (not part
// of a longer digit sequence; a number before or after it separated by a
// space is another value unless the SSN itself is spaced, see ssnJoined); and nine contiguous digits only right after an
// SSN label ("SSN", "social security number", "SS#", "social"). Numbers that
// cannot be SSNs are rejected with Presidio's invalidation rules: area 000,
// 666 or 900–999, group 00, serial 0000, one repeated digit, and the known
// advertising numbers 123-45-6789, 987-65-432x, 078-05-1120 and 219-09-9999.

var ssnLabels = []string{"ssn", "ss", "social", "security", "ssn#", "sozialversicherungsnummer", "itin"}
var ssnFillers = []string{"number", "no", "num", "nr", "is", "my", "her", "his", "their", "your", "the", "was", "on", "file"}
var ssnNotLabels = []string{"part", "lot", "order", "ref", "ticket", "case", "invoice", "tracking", "model", "serial", "sku", "isbn", "phone", "tel", "fax", "call", "room", "claim"}

func findSSNs(d *doc, cs []cand) []cand {
	s, runs := d.s, d.runs
	for i := 0; i < len(runs); i++ {
		r := runs[i]
		n := r.e - r.s
		// Contiguous nine digits: labelled only.
		if n == 9 && standalone(s, r.s, r.e) && !joinedBefore(s, r.s) && !joinedAfter(s, r.e) {
			if ssnValid(s[r.s:r.e]) && labelledAs(d.lower(), r.s, ssnLabels, ssnFillers) {
				cs = append(cs, cand{r.s, r.e, ClassSSN, prioSSN})
			}
			continue
		}
		if n != 3 || i+2 >= len(runs) {
			continue
		}
		r2, r3 := runs[i+1], runs[i+2]
		if r2.s-r.e != 1 || r3.s-r2.e != 1 || r2.e-r2.s != 2 || r3.e-r3.s != 4 {
			continue
		}
		sep := s[r.e]
		if sep != '-' && sep != '/' && sep != '.' && sep != ' ' || s[r2.e] != sep {
			continue
		}
		if !standalone(s, r.s, r3.e) || ssnJoined(s, r.s, r3.e, sep) {
			continue
		}
		digits := s[r.s:r.e] + s[r2.s:r2.e] + s[r3.s:r3.e]
		if !ssnValid(digits) {
			continue
		}
		l := d.lower()
		if labelledAs(l, r.s, ssnNotLabels, ssnFillers) {
			continue
		}
		cs = append(cs, cand{r.s, r3.e, ClassSSN, prioSSN})
		i += 2
	}
	return cs
}

// standalone reports that [s, e) is not glued to letters, digits or an
// underscore on either side.
func standalone(t string, s, e int) bool {
	if s > 0 && (isAlnum(t[s-1]) || t[s-1] == '_') {
		return false
	}
	if e < len(t) && (isAlnum(t[e]) || t[e] == '_') {
		return false
	}
	return true
}

// joinedBefore reports a digit group right before s joined by one
// separator ("12-" in "12-345-…"), which makes the value part of a longer
// number.
func joinedBefore(t string, s int) bool {
	return s >= 2 && isDigit(t[s-2]) && isJoiner(t[s-1])
}

func joinedAfter(t string, e int) bool {
	return e+1 < len(t) && isJoiner(t[e]) && isDigit(t[e+1])
}

// ssnJoined reports that the grouped SSN shape [s, e) with separator sep
// continues a longer number: a digit group joined to it by sep itself, or
// by a joiner other than a space. A number before or after it separated by
// a space is a separate value ("ssn 1 536-22-1847", "room 12 536-22-1847":
// docs/redaction.md, "Group boundaries"); for an SSN spaced with spaces
// ("417 92 5038") a spaced number next to it stays part of it.
func ssnJoined(t string, s, e int, sep byte) bool {
	if joinedBefore(t, s) && (t[s-1] != ' ' || sep == ' ') {
		return true
	}
	return joinedAfter(t, e) && (t[e] != ' ' || sep == ' ')
}

func isJoiner(c byte) bool {
	return c == '-' || c == '.' || c == '/' || c == ' ' || c == ',' || c == ':'
}

// ssnValid applies Presidio's invalidation rules to nine digits.
func ssnValid(d string) bool {
	if len(d) != 9 {
		return false
	}
	same := true
	for i := 1; i < 9; i++ {
		if d[i] != d[0] {
			same = false
			break
		}
	}
	if same {
		return false
	}
	area, group, serial := d[:3], d[3:5], d[5:]
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
		return false
	}
	switch {
	case d == "123456789", d[:8] == "98765432", d == "078051120", d == "219099999":
		return false
	}
	return true
}
