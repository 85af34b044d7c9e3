package redact

import "regexp"

// Card numbers.
//
// A candidate is a sequence of digit groups joined by single separators —
// space, dot, dash, slash, underscore or one line break — or one contiguous run, with
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
// card (a card followed by its CVV or expiry, a list number, phone number or
// PIN followed by a card) are searched at every group boundary (cardIn,
// docs/redaction.md, "Group boundaries"); a card with every digit spaced
// out counts only as a whole Luhn-valid stretch (spacedCards). Every other occurrence of a found
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
				if c, ok := cardIn(d, g, k); ok {
					cs = append(cs, c)
					for k < len(g) && g[k].s < c.end {
						k++
					}
					continue
				}
				k++
			}
			cs = spacedCards(d, g, cs)
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
func cardSep(c byte) bool {
	return c == ' ' || c == '.' || c == '-' || c == '/' || c == '\n' || c == '_'
}

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

// cardIn looks for a card number starting at group k of the digit-group
// sequence g. Every group boundary is a possible start (docs/redaction.md,
// "Group boundaries"): a list number, room number, phone number or PIN
// written before a card does not hide it. Only the sequence's first group
// is checked for glue to a word before it ("A3 4111…" is searched from
// "4111"); a later group follows its separator. A start inside the
// sequence keeps the label of the whole sequence when that label names an
// identifier ("Order 1 4111…"), but not a phone label: a phone number is
// the groups before the card, not the card. A window made of digit pairs
// only starts where the pairs start, so a long run of pairs is read once.
func cardIn(d *doc, g []span, k int) (cand, bool) {
	s := d.s
	start := g[k].s
	if k == 0 && start > 0 && (isAlnum(s[start-1]) || s[start-1] == '_' || s[start-1] == '+') {
		return cand{}, false
	}
	// A sequence that continues a decimal or a grouped amount is not a card.
	if start > 1 && (s[start-1] == '.' || s[start-1] == ',') && isDigit(s[start-2]) {
		return cand{}, false
	}
	pairStart := k == 0 || g[k-1].e-g[k-1].s != 2
	// A start in the middle of a chain of one separator kind reads the
	// number as printed cards are (see printedCard); the sequence start
	// and the points where the separator changes keep the wider grouping
	// rule.
	strict := k > 0 && !(k >= 2 && s[g[k].s-1] != s[g[k-1].s-1])
	if k > 0 && ibanHead(s, g[0].s) {
		return cand{}, false
	}
	// The longest window that passes is the card: a card's first 13–15
	// digits pass the checksum by chance about one time in ten, and
	// stopping there left its last group readable.
	var best cand
	found := false
	total, breaks := 0, 0
	for m := k; m < len(g); m++ {
		total += g[m].e - g[m].s
		if m > k && s[g[m].s-1] == '\n' {
			breaks++
		}
		if total > 19 || breaks > 1 {
			break
		}
		if total < 13 {
			continue
		}
		end := g[m].e
		if m == len(g)-1 && end < len(s) && (isAlnum(s[end]) || s[end] == '_') {
			continue
		}
		if !cardGroupsOK(g[k:m+1], pairStart) || strict && !printedCard(s, g, k, m) {
			continue
		}
		digits := digitsOf(s[start:end])
		if !issuerOK(digits) || !luhn(digits) {
			continue
		}
		if cardLabelled(d, g, k) {
			return cand{}, false
		}
		best, found = cand{start, end, ClassCard, prioCard}, true
	}
	return best, found
}

// cardLabelled reports a label that says the number starting at group k
// of g is not a card: right before it, or, for a later group, before the
// whole sequence (phone labels excepted, see cardIn).
func cardLabelled(d *doc, g []span, k int) bool {
	l := d.lower()
	if labelledAs(l, g[k].s, cardNotLabels, cardFillers) {
		return true
	}
	return k > 0 && labelledAs(l, g[0].s, cardIDLabels, cardFillers)
}

// cardIDLabels are the labels of cardNotLabels that name an identifier
// rather than a phone number.
var cardIDLabels = func() []string {
	var out []string
	for _, w := range cardNotLabels {
		if !oneOf(w, "phone", "tel", "fax", "mobile", "cell") {
			out = append(out, w)
		}
	}
	return out
}()

// spacedCards finds a card written with every digit spaced out
// ("4 1 1 1 1 1 …"). Single digits are everyday content (counts, scores,
// spaced codes), so only a whole stretch of single-digit groups joined by
// one separator kind counts: 13–19 digits in all, a payment-card issuer
// prefix, Luhn-valid, not labelled as something else, and not glued to a
// word or a number before or after it.
func spacedCards(d *doc, g []span, cs []cand) []cand {
	s := d.s
	for k := 0; k < len(g); {
		if g[k].e-g[k].s != 1 {
			k++
			continue
		}
		m := k
		for m+1 < len(g) && g[m+1].e-g[m+1].s == 1 && s[g[m+1].s-1] == s[g[k].e] {
			m++
		}
		n := m - k + 1
		start, end := g[k].s, g[m].e
		ok := n >= 13 && n <= 19 && s[g[k].e] != '\n'
		if ok && start > 0 && (isAlnum(s[start-1]) || s[start-1] == '_' || s[start-1] == '+' ||
			cardSep(s[start-1]) && start > 1 && isDigit(s[start-2])) {
			ok = false
		}
		if ok && end < len(s) && (isAlnum(s[end]) || s[end] == '_' || cardSep(s[end]) && end+1 < len(s) && isDigit(s[end+1])) {
			ok = false
		}
		if ok {
			digits := digitsOf(s[start:end])
			ok = issuerOK(digits) && luhn(digits) && !labelledAs(d.lower(), start, cardNotLabels, cardFillers)
		}
		if ok {
			cs = append(cs, cand{start, end, ClassCard, prioCard})
		}
		k = m + 1
	}
	return cs
}

// printedCard reports that groups k..m of g, a window starting inside a
// chain of one separator kind, are a card as cards are printed — one
// contiguous run, 4-4-4-4, 4-4-4-4-3, 4-6-5 or 4-6-4, or digit pairs — and
// that what follows in the sequence can trail a card: nothing, one 3–4 digit
// group (a CVV), an expiry date ("12/28"), or groups written with another
// separator. A
// tracking or account number printed in fours ("9400 1111 0200 0880 1234
// 56") thus holds no card in its middle, and neither do two phone numbers
// in a row (3-3-4 groups).
func printedCard(s string, g []span, k, m int) bool {
	w := g[k : m+1]
	n := func(i int) int { return w[i].e - w[i].s }
	shape := len(w) == 1 || len(w) == 3 && n(0) == 4 && n(1) == 6 && (n(2) == 5 || n(2) == 4)
	if !shape && (len(w) == 4 || len(w) == 5) {
		shape = true
		for i := range w {
			want := 4
			if i == 4 {
				want = 3
			}
			if n(i) != want {
				shape = false
			}
		}
	}
	if !shape && n(0) == 2 {
		shape = true // digit pairs: cardGroupsOK has checked them
	}
	if !shape {
		return false
	}
	switch rest := g[m+1:]; {
	case len(rest) == 0:
		return true
	case len(rest) == 1 && rest[0].e-rest[0].s >= 3 && rest[0].e-rest[0].s <= 4:
		return true
	case len(rest) >= 2 && rest[0].e-rest[0].s == 2 && s[rest[1].s-1] == '/':
		return true // an expiry date, MM/YY or MM/YYYY
	default:
		return len(w) > 1 && s[rest[0].s-1] != s[w[0].e]
	}
}

// ibanHead reports two letters and two digits at a word start ending at
// the digits that start at pos's run ("DE89 3704 …"): the sequence is a
// printed IBAN, which the IBAN rule checks; its groups hold no card.
func ibanHead(s string, pos int) bool {
	return pos >= 2 && pos+2 <= len(s) && (pos+2 == len(s) || !isDigit(s[pos+2])) &&
		isAlpha(s[pos-1]) && isAlpha(s[pos-2]) && (pos == 2 || !isAlnum(s[pos-3]))
}

func cardGroupsOK(g []span, pairStart bool) bool {
	if len(g) == 1 {
		return true
	}
	pairs := pairStart
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
