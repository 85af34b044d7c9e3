package redact

import "regexp"

// Card numbers.
//
// A candidate is a sequence of digit groups joined by single separators —
// space, dot, dash, slash, or one line break — or one contiguous run, with
// 13–19 digits in all. Separators may be mixed ("4111-1111 1111.1111"), and
// prepare has already turned every Unicode dash and space into its ASCII
// form and collapsed doubled spaces between digits (docs/redaction.md,
// "Separators"); a number holds at most one line break, so a list of
// four-digit numbers one per line is not a card. Grouped numbers start with
// a group of 4–6 digits and continue with groups of 3–6 (4-4-4-4, 4-6-5,
// 4-6-4, 4-4-4-4-3), or are all digit pairs ("41 11 11 11 11 11 11 11").
// The number must start with an issuer prefix in use for payment cards (2,
// 3, 4, 5 or 6 with the narrower ranges below) and pass the Luhn checksum;
// numbers right after a label that names them as something else (order,
// tracking, IMEI, invoice, serial …) are left alone. Sequences longer than a
// card (a card followed by its CVV or expiry, a phone number followed by a
// card) are tried from their start, after each card found, and from every
// point where the separator changes. Every other occurrence of a found
// card's digits, in any grouping, is masked too, labelled or not: a card
// written once in full and once as an "order" is still a card.

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
		n0 := len(cs)
		seqs := cardSequences(d)
		for _, g := range seqs {
			for k := 0; k < len(g); {
				if c, ok := cardIn(d, g[k:]); ok {
					cs = append(cs, c)
					for k < len(g) && g[k].s < c.end {
						k++
					}
					continue
				}
				k = nextChainStart(s, g, k)
			}
		}
		if len(cs) > n0 {
			cs = propagateCards(s, seqs, cs, n0)
		}
	}
	if d.ndigits >= 3 && hasCVVLabel(d) {
		for _, m := range cvvRe.FindAllStringSubmatchIndex(s, -1) {
			cs = append(cs, cand{m[2], m[3], ClassCard, prioCard})
		}
	}
	return cs
}

// cardSep reports the separators that join the digit groups of a card.
func cardSep(c byte) bool { return c == ' ' || c == '.' || c == '-' || c == '/' || c == '\n' }

// cardSequences returns the maximal sequences of digit runs of d joined by
// one separator each.
func cardSequences(d *doc) [][]span {
	s, runs := d.s, d.runs
	var out [][]span
	for i := 0; i < len(runs); {
		j := i
		for j+1 < len(runs) && runs[j+1].s-runs[j].e == 1 && cardSep(s[runs[j].e]) {
			j++
		}
		out = append(out, runs[i:j+1])
		i = j + 1
	}
	return out
}

// nextChainStart returns the index of the first group after the stretch
// of g that starts at k and uses one separator kind.
func nextChainStart(s string, g []span, k int) int {
	j := k
	var sep byte
	for j+1 < len(g) {
		c := s[g[j].e]
		if sep != 0 && c != sep {
			break
		}
		sep = c
		j++
	}
	return j + 1
}

// propagateCards adds every occurrence, in any grouping within a sequence,
// of the card numbers in cs[from:].
func propagateCards(s string, seqs [][]span, cs []cand, from int) []cand {
	var cards []string
	for _, c := range cs[from:] {
		cards = append(cards, digitsOf(s[c.start:c.end]))
	}
	for _, g := range seqs {
		for k := range g {
			var b []byte
			for m := k; m < len(g) && len(b) < 19; m++ {
				b = append(b, s[g[m].s:g[m].e]...)
				if len(b) < 13 || !oneOf(string(b), cards...) {
					continue
				}
				cs = append(cs, cand{g[k].s, g[m].e, ClassCard, prioCard})
			}
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
	total, breaks := 0, 0
	for k := range g {
		total += g[k].e - g[k].s
		if k > 0 && s[g[k].s-1] == '\n' {
			breaks++
		}
		if total > 19 || breaks > 1 {
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
	pairs := true
	for _, r := range g {
		if r.e-r.s != 2 {
			pairs = false
			break
		}
	}
	if pairs {
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
