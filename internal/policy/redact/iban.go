package redact

// IBANs (ISO 13616).
//
// A candidate starts at a word boundary with a country code and two check
// digits, continues with letters and digits, optionally in the printed
// groups of four separated by single spaces, and must have exactly the
// length registered for its country and pass the mod-97 check. Letters may
// be lower case (people type them that way); the check is case-blind.

// ibanLengths is the IBAN length per country (SWIFT IBAN registry).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func findIBANs(d *doc, cs []cand) []cand {
	s := d.s
	for i := 0; i+4 <= len(s); i++ {
		if !isAlpha(s[i]) || !isAlpha(s[i+1]) || !isDigit(s[i+2]) || !isDigit(s[i+3]) {
			continue
		}
		if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_') {
			continue
		}
		want, ok := ibanLengths[string([]byte{upper(s[i]), upper(s[i+1])})]
		if !ok {
			continue
		}
		end, compact, ok := ibanScan(s, i, want)
		if !ok || !ibanMod97(compact) {
			continue
		}
		cs = append(cs, cand{i, end, ClassIBAN, prioIBAN})
		i = end - 1
	}
	return cs
}

// ibanScan collects want letters and digits from s[i:], allowing a single
// space after every fourth character, and returns the end of the IBAN and
// its compact upper-case form.
func ibanScan(s string, i, want int) (int, []byte, bool) {
	var buf [34]byte
	n := 0
	j := i
	for j < len(s) && n < want {
		c := s[j]
		if isAlnum(c) {
			buf[n] = upper(c)
			n++
			j++
			continue
		}
		if c == ' ' && n%4 == 0 && n > 0 && j+1 < len(s) && isAlnum(s[j+1]) {
			j++
			continue
		}
		break
	}
	if n != want {
		return 0, nil, false
	}
	if j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
		return 0, nil, false
	}
	// The BBAN must hold at least one digit; letters-only tails are words.
	out := buf[:n]
	return j, out, hasDigit(string(out[4:]))
}

// ibanMod97 moves the first four characters to the end, maps letters to
// 10–35 and checks that the number is 1 modulo 97.
func ibanMod97(b []byte) bool {
	rem := 0
	step := func(c byte) bool {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			v := int(c-'A') + 10
			rem = (rem*100 + v) % 97
		default:
			return false
		}
		return true
	}
	for _, c := range b[4:] {
		if !step(c) {
			return false
		}
	}
	for _, c := range b[:4] {
		if !step(c) {
			return false
		}
	}
	return rem == 1
}
