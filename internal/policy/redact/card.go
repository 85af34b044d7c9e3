package redact

import "regexp"

// Card numbers.
//
// A candidate is a sequence of digit groups joined by single spaces, dots or
// dashes (one kind of separator per number), or one contiguous run, with
// 13–19 digits in all. Grouped numbers start with a group of 4–6 digits and
// continue with groups of 3–6 (4-4-4-4, 4-6-5, 4-6-4, 4-4-4-4-3). The
// number must start with an issuer prefix in use for payment cards (2, 3,
// 4, 5 or 6 with the narrower ranges below) and pass the Luhn checksum;
// numbers right after a label that names them as something else (order,
// tracking, IMEI, invoice, serial …) are left alone. Sequences longer than a
// card (a card followed by its CVV or expiry) are tried from their start.

// cardNotLabels are labels that say a Luhn-valid number is not a card.
var cardNotLabels = []string{
	"imei", "meid", "tracking", "track", "order", "orden", "bestellung", "commande", "confirmation", "conf",
	"ref", "reference", "invoice", "serial", "isbn", "sku", "part", "lot", "case", "ticket", "claim",
	"policy", "member", "membership", "awb", "waybill", "shipment", "booking", "reservation", "pnr", "id",
	"phone", "tel", "fax", "mobile", "cell",
}

var cardFillers = []string{"number", "no", "num", "nr", "is", "was", "my", "the", "your", "de", "es"}

// cvvRe finds a labelled card security code.
var cvvRe = regexp.MustCompile(`(?i)\b(?:cvv2?|cvc2?|csc|cvn)\b[\s:#=.-]{0,3}(?:(?:is|code)\s+)?(\d{3,4})\b`)

func findCards(d *doc, cs []cand) []cand {
	s := d.s
	if d.ndigits >= 13 {
		runs := d.runs
		for i := 0; i < len(runs); {
			// Grow the maximal sequence runs[i..j] joined by one separator kind.
			j := i
			var sep byte
			for j+1 < len(runs) {
				gap := runs[j+1].s - runs[j].e
				if gap != 1 {
					break
				}
				c := s[runs[j].e]
				if c != ' ' && c != '.' && c != '-' {
					break
				}
				if sep != 0 && c != sep {
					break
				}
				sep = c
				j++
			}
			if c, ok := cardIn(d, runs[i:j+1]); ok {
				cs = append(cs, c)
			}
			i = j + 1
		}
	}
	if d.ndigits >= 3 && hasCVVLabel(d) {
		for _, m := range cvvRe.FindAllStringSubmatchIndex(s, -1) {
			cs = append(cs, cand{m[2], m[3], ClassCard, prioCard})
		}
	}
	return cs
}

func hasCVVLabel(d *doc) bool {
	l := d.lower()
	return containsAny(l, "cvv", "cvc", "csc", "cvn")
}

// cardIn looks for a card number at the start of the digit-group sequence g.
func cardIn(d *doc, g []span) (cand, bool) {
	s := d.s
	start := g[0].s
	if start > 0 && (isAlnum(s[start-1]) || s[start-1] == '_' || s[start-1] == '+') {
		return cand{}, false
	}
	// A sequence that continues a decimal or a grouped amount is not a card.
	if start > 1 && (s[start-1] == '.' || s[start-1] == ',') && isDigit(s[start-2]) {
		return cand{}, false
	}
	total := 0
	for k := range g {
		total += g[k].e - g[k].s
		if total > 19 {
			break
		}
		if total < 13 {
			continue
		}
		end := g[k].e
		if end < len(s) && (isAlnum(s[end]) || s[end] == '_') {
			continue
		}
		if !cardGroupsOK(g[:k+1]) {
			continue
		}
		digits := digitsOf(s[start:end])
		if !issuerOK(digits) || !luhn(digits) {
			continue
		}
		if labelledAs(d.lower(), start, cardNotLabels, cardFillers) {
			return cand{}, false
		}
		return cand{start, end, ClassCard, prioCard}, true
	}
	return cand{}, false
}

func cardGroupsOK(g []span) bool {
	if len(g) == 1 {
		return true
	}
	for k, r := range g {
		n := r.e - r.s
		if k == 0 && (n < 4 || n > 6) {
			return false
		}
		if n < 3 || n > 6 {
			return false
		}
	}
	return true
}

// issuerOK checks the issuer identification prefix against ranges used by
// payment card networks: Visa 4; Mastercard 51–55 and 2221–2720; Maestro 50,
// 56–69; Amex 34, 37; Diners 30, 36, 38, 39; JCB 35; Discover and UnionPay 6.
func issuerOK(d string) bool {
	switch d[0] {
	case '4', '5', '6':
		return true
	case '3':
		switch d[1] {
		case '0', '4', '5', '6', '7', '8', '9':
			return true
		}
	case '2':
		p := int(d[0]-'0')*1000 + int(d[1]-'0')*100 + int(d[2]-'0')*10 + int(d[3]-'0')
		return p >= 2221 && p <= 2720
	}
	return false
}

// labelledAs reports whether the words right before pos (skipping filler
// words such as "number" or "is") start with one of labels.
func labelledAs(lower string, pos int, labels, fillers []string) bool {
	for _, w := range prevWords(lower, pos, 4, 40) {
		if oneOf(w, labels...) {
			return true
		}
		if !oneOf(w, fillers...) {
			return false
		}
	}
	return false
}
