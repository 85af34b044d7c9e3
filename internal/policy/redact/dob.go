package redact

import (
	"regexp"
	"strings"
)

// Dates of birth.
//
// A date is masked only right after a birth label: "DOB", "D.O.B.", "date of
// birth", "birth date", "birthdate", "born (on)", "birthday is", "bday is",
// and "fecha de nacimiento", "Geburtsdatum", "geboren am", "date de
// naissance", "né(e) le", "data de nascimento", "data di nascita", "nacido
// el". Between label and date only punctuation and "is/was/on/the" may
// stand. Dates: 3/14/1952, 14.08.1989, 1990-02-28, 7/2/45, "June 3, 1978",
// "3 June 1978", "4th of July 1999", "Nov 21, 2001", and month-day without
// a year after "birthday is" ("March 5"). Ordinary dates stay: a
// birthday is only masked when labelled.

const monthRe = `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|januar|februar|märz|mai|juni|juli|oktober|dezember|janvier|février|mars|avril|juin|juillet|août|septembre|octobre|novembre|décembre)\.?`

const dayRe = `(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)?`

// dobLabelRe matches a label and the filler after it; the date must start
// where it ends.
var dobLabelRe = regexp.MustCompile(`(?i)(?:\bd\.?o\.?b\b\.?|\bdate\s+of\s+birth\b|\bbirth\s*date\b|\bborn\b(?:\s+on)?|\b(?:birthday|b-?day)(?:\s+(?:is|was)\b|['’]s\b)|\bbirthday\s*:|\bfecha\s+de\s+nacimiento\b|\bgeburtsdatum\b|\bgeboren\s+am\b|\bdate\s+de\s+naissance\b|\bnée?\s+le\b|\bdata\s+de\s+nascimento\b|\bdata\s+di\s+nascita\b|\bnacid[oa]\s+el\b)` +
	`[\s:=\-–]*(?:(?:is|was|on|the|el|am|le|ist|der|den|es|est|é|è|il|de)\s+)*`)

// dobDateRe matches the date itself, anchored at the end of the label.
var dobDateRe = regexp.MustCompile(`(?i)^(?:` +
	`\d{1,2}[/.\-]\d{1,2}[/.\-](?:\d{4}|\d{2})\b` +
	`|\d{4}[\-/.]\d{1,2}[\-/.]\d{1,2}\b` +
	`|` + monthRe + `\s+` + dayRe + `(?:,?\s+\d{4})?\b` +
	`|` + dayRe + `\s+(?:of\s+|de\s+)?` + monthRe + `(?:,?\s+(?:de\s+)?\d{4})?\b` +
	`)`)

// dobStems are the lower-case substrings of every label; each occurrence
// opens a small window in which dobLabelRe runs.
var dobStems = []string{"dob", "d.o.b", "birth", "born", "bday", "b-day", "nacimiento", "geburtsdatum", "geboren",
	"naissance", "né", "née", "nascimento", "nascita", "nacid"}

func findDOB(d *doc, cs []cand) []cand {
	l := d.lower()
	s := d.s
	last := -1 // end of the last window searched, to skip repeats
	for _, st := range dobStems {
		for i := 0; i < len(l); {
			j := strings.Index(l[i:], st)
			if j < 0 {
				break
			}
			occ := i + j
			i = occ + len(st)
			// The label starts at most ~20 bytes before its stem ("fecha de
			// nacimiento") and ends soon after it.
			a := occ - 24
			if a < 0 {
				a = 0
			}
			for a > 0 && wordByte(l[a-1]) {
				a--
			}
			b := occ + len(st) + 24
			if b > len(s) {
				b = len(s)
			}
			for _, m := range dobLabelRe.FindAllStringIndex(s[a:b], -1) {
				p := a + m[1]
				if p <= last {
					continue
				}
				e := p + 48
				if e > len(s) {
					e = len(s)
				}
				if dm := dobDateRe.FindStringIndex(s[p:e]); dm != nil {
					cs = append(cs, cand{p, p + dm[1], ClassDOB, prioDOB})
					last = p + dm[1]
				}
			}
		}
	}
	return cs
}
