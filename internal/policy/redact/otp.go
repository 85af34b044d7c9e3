package redact

import (
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// One-time codes, PINs and door codes (class 2fa).
//
// A code is a standalone 4–8 digit number, two groups of three or four
// digits joined by a dash ("381-207", "9132-8845"), or two groups of three
// or four joined by a space ("512 774"). Numbers glued to letters, parts of
// longer numbers (phone numbers, dates, times, prices) and 1–3 digit numbers
// are never codes. A spaced code — 4–8 digits written as groups of one or
// two joined by single spaces ("1 2 3 4 5 6", "48 29 13") — is a code only
// when a keyword binds it tightly ("your code is 1 2 3 4 5 6"): spaced
// digits are otherwise counts, phone numbers and lists.
//
// Keyword binding. A keyword is any word ending in "code" (code,
// passcode, Bestätigungscode, verificatiecode), "código", "codice", "kod",
// "код", or PIN, OTP, TAN, password, 2FA, 验证码, 認証コード, 인증번호 … A
// keyword is ignored when it names something that is not secret: zip/postal/
// area/country/promo/discount/dress/source/QR/error/status codes and their
// translations ("código postal", "code promo", "Rabattcode", "код скидки").
// A keyword binds:
//   - forward, tightly, to the first code after it when only punctuation or a
//     phrase ending in a linking word stands between ("code: 4821", "PIN is
//     4829", "Ihr Bestätigungscode lautet 749201", "OTP for … is 648201");
//     tight binding also accepts upper-case alphanumeric codes ("R7K2P",
//     "C4T-92K");
//   - forward, loosely, to the first number after it within 40 bytes of
//     plain words when that number is a code and not a year, an amount or
//     a measurement ("code 4821", "Verification code 440128 (valid …)");
//   - backward to a code followed by a linking word ("482913 is your code",
//     "129033 est votre code", "Use 334019 as your Facebook login code").
//
// Binding never crosses the end of a sentence.
//
// Bare codes. Without a keyword, a code is masked when the platform marked
// it (Hints.OneTimeCodes), when the message has the shape of a code message
// ("839201 to confirm", "Enter 412890 to verify", "Reply with 4410 to
// confirm"), or when the sender is a short code or alphanumeric id and the
// code opens the message, alone or after a brand label ("Rappi: 4412",
// "FB-51742", "<#> 802194").
//
// Every other occurrence of a found code in the same message (the code
// repeated in a login link) is masked too.

// kwStem is a keyword stem and the shape of the words it forms.
type kwStem struct {
	stem     string
	prefix   bool     // letters may precede the stem in the same word ("Bestätigungscode")
	suffixes []string // allowed word endings after the stem; nil means any up to 5 letters
}

// codeStems are searched in the ASCII-lower-cased text. Non-ASCII letters
// count as word letters, so "código" and "Bestätigungscode" are one word.
var codeStems = []kwStem{
	{"code", true, []string{"", "s"}},
	{"codigo", true, []string{"", "s"}},
	{"código", true, []string{"", "s"}},
	{"cÓdigo", true, []string{"", "s"}},
	{"codice", true, []string{""}},
	{"codici", true, []string{""}},
	{"kode", true, []string{"", "n"}},
	{"kod", true, nil}, // kod, kodu, kodunuz, koden, kodem …
	{"pin", false, []string{"", "s"}},
	{"otp", false, []string{"", "s"}},
	{"password", false, []string{""}},
	{"passwort", false, []string{""}},
	{"contraseña", false, []string{""}},
	{"senha", false, []string{""}},
	{"2fa", false, []string{""}},
	{"mfa", false, []string{""}},
	{"код", true, []string{"", "а", "у"}},
}

// cjkStems are matched anywhere: these scripts do not separate words.
var cjkStems = []string{"验证码", "驗證碼", "校验码", "コード", "인증번호", "인증 번호"}

// tanWords are the case-sensitive German banking transaction numbers.
var tanWords = []string{"TAN", "mTAN", "smsTAN", "pushTAN", "chipTAN", "SMS-TAN"}

// findKeywords returns the spans of code keywords in d, sorted and distinct.
func findKeywords(d *doc) []span {
	l := d.lower()
	var out []span
	for _, st := range codeStems {
		for i := 0; i < len(l); {
			j := strings.Index(l[i:], st.stem)
			if j < 0 {
				break
			}
			a := i + j
			b := a + len(st.stem)
			i = b
			ws := letterStart(l, a)
			if ws < a && !st.prefix {
				continue
			}
			if ws > 0 && isDigit(l[ws-1]) || ws < a && isDigit(l[a-1]) {
				continue
			}
			we := letterEnd(l, b)
			if we < len(l) && isDigit(l[we]) && st.stem != "2fa" {
				continue
			}
			tail := l[b:we]
			if st.suffixes == nil {
				if utf8.RuneCountInString(tail) > 5 {
					continue
				}
			} else if !oneOf(tail, st.suffixes...) {
				continue
			}
			if st.stem == "2fa" && ws > 0 && isDigit(l[ws-1]) {
				continue
			}
			out = append(out, span{ws, we})
		}
	}
	for _, st := range cjkStems {
		for i := 0; i < len(l); {
			j := strings.Index(l[i:], st)
			if j < 0 {
				break
			}
			out = append(out, span{i + j, i + j + len(st)})
			i += j + len(st)
		}
	}
	if strings.Contains(d.s, "TAN") {
		for i := 0; i < len(d.s); {
			j := strings.Index(d.s[i:], "TAN")
			if j < 0 {
				break
			}
			a, b := i+j, i+j+3
			i = b
			ws := a
			for ws > 0 && (isAlpha(d.s[ws-1]) || d.s[ws-1] == '-') {
				ws--
			}
			if (b == len(d.s) || !isAlnum(d.s[b])) && oneOf(d.s[ws:b], tanWords...) {
				out = append(out, span{ws, b})
			}
		}
	}
	if len(out) > 1 {
		sort.Slice(out, func(i, j int) bool { return out[i].s < out[j].s })
		k := 0
		for _, sp := range out {
			if k > 0 && sp.s < out[k-1].e {
				continue
			}
			out[k] = sp
			k++
		}
		out = out[:k]
	}
	return out
}

// codeNegPrefix are compound prefixes of "…code" words that are not secret.
var codeNegPrefix = []string{
	"zip", "post", "postal", "promo", "bar", "qr", "area", "dress", "source", "error", "status", "country",
	"discount", "rabatt", "gutschein", "aktions", "geo", "uni", "en", "de", "op", "trans", "short", "hex",
	"color", "colour", "tax", "ean", "sort", "swift", "bic", "vorwahl", "länder", "laender", "zeit", "post-",
	"re", "pre", "x", "qr-", "bar-", "promo-", "morse", "pseudo", "machine", "byte",
}

// codeNegBefore are words right before a keyword that make it not secret.
var codeNegBefore = []string{
	"zip", "postal", "post", "area", "promo", "promotional", "discount", "coupon", "voucher", "referral",
	"invite", "invitation", "dress", "source", "qr", "bar", "country", "error", "status", "tracking",
	"product", "item", "style", "color", "colour", "tax", "billing", "morse", "cheat", "sort", "swift", "bic",
	"reference", "ref", "airport", "iata", "station", "dial", "region", "icd", "cpt", "diagnosis",
	"bobby", "safety", "rolling", "drawing", "hair", "lapel", "enamel",
}

// codeNegAfter are words right after a keyword that make it not secret.
var codeNegAfter = []string{
	"postal", "postale", "promo", "promocional", "promozionale", "promotionnel", "descuento", "rabatt",
	"скидки", "réduction", "reduction", "rastreamento", "rastreo", "seguimiento", "barras", "área", "area",
	"país", "pais", "fiscale", "fiscal", "pocztowy", "of", "review", "reviews", "freeze", "red", "blue",
	"black", "base", "snippet", "snippets", "editor", "name", "names", "monkey", "monkeys", "school", "camp",
	"coverage", "quality", "style", "generation",
}

// linking are words that join a keyword phrase to its value ("code is").
var linking = []string{
	"is", "es", "est", "ist", "lautet", "é", "è", "was", "are", "to", "será", "sera", "er", "är", "on",
	"wynosi", "это", "będzie", "olarak", "là", "la", "son", "sono", "zijn", "be",
}

// linkingBack are words that join a code to the keyword after it ("4821 is your code").
var linkingBack = []string{"is", "est", "ist", "es", "é", "è", "as", "are", "was", "to", "er", "är", "sera", "será", "als", "como", "comme"}

var alnumCodeRe = regexp.MustCompile(`\b(?:[A-Z0-9]{3}-[A-Z0-9]{3}|[A-Z0-9]{4,8})\b`)

// Bare-code shapes: "839201 to confirm" and "Enter 412890 to verify".
var (
	shapeLinkAfter = []string{"to", "para", "pour", "um", "per", "zum"}
	shapeVerbs     = []string{"confirm", "verify", "validate", "complete", "activate", "finish", "continue", "proceed",
		"sign", "log", "login", "reset", "unlock", "approve", "authorize", "authorise", "confirmar", "verificar",
		"validar", "valider", "confirmer", "bestätigen", "verifizieren", "confermare", "verificare"}
	shapeVerbsBefore = []string{"enter", "use", "type", "input", "ingresa", "introduce", "usa", "saisissez", "entrez", "gib", "eingeben"}
	shapeLinkBefore  = []string{"to", "for", "as", "on", "in", "para", "pour", "um", "zum", "als"}
)

// codeShaped reports a code in one of the bare-code sentence shapes.
func codeShaped(s, l string, t token) bool {
	for i := t.s; i < t.e; i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	w1, e1 := wordAfterSpaces(l, t.e)
	if oneOf(w1, shapeLinkAfter...) {
		w2, _ := wordAfterSpaces(l, e1)
		for _, v := range shapeVerbs {
			if strings.HasPrefix(w2, v) {
				return true
			}
		}
	}
	p1, s1 := wordBeforeSpaces(l, t.s)
	if !oneOf(w1, shapeLinkBefore...) {
		return false
	}
	if oneOf(p1, shapeVerbsBefore...) {
		return true
	}
	p2, _ := wordBeforeSpaces(l, s1)
	return p1 == "with" && p2 == "reply" || p1 == "back" && p2 == "text"
}

// wordAfterSpaces returns the word that follows pos after one or more
// spaces (and nothing else), and its end.
func wordAfterSpaces(l string, pos int) (string, int) {
	i := pos
	for i < len(l) && l[i] == ' ' {
		i++
	}
	if i == pos {
		return "", pos
	}
	j := i
	for j < len(l) && wordByte(l[j]) {
		j++
	}
	return l[i:j], j
}

// wordBeforeSpaces returns the word that precedes pos with one or more
// spaces (and nothing else) between, and its start.
func wordBeforeSpaces(l string, pos int) (string, int) {
	i := pos
	for i > 0 && l[i-1] == ' ' {
		i--
	}
	if i == pos {
		return "", pos
	}
	j := i
	for j > 0 && wordByte(l[j-1]) {
		j--
	}
	return l[j:i], j
}

var brandPrefixRe = regexp.MustCompile(`^\s*(?:<#>\s*)?(?:\pL[\pL\pN&'’.]*(?:\s[\pL\pN&'’.]+){0,2}\s*[:\-–—]\s*)?$`)

// token is a number with a code's shape. A spaced token ("1 2 3 4 5 6")
// binds only tightly after a keyword.
type token struct {
	span
	spaced bool
}

// codeTokens lists the numbers of d that have a code's shape.
func codeTokens(d *doc) []token {
	s, runs := d.s, d.runs
	var out []token
	// spaced reports a digit group one space away (a phone number, a card,
	// a spaced account number): such groups are codes only as a pair.
	spacedBefore := func(p int) bool { return p >= 2 && s[p-1] == ' ' && isDigit(s[p-2]) }
	spacedAfter := func(p int) bool { return p+1 < len(s) && s[p] == ' ' && isDigit(s[p+1]) }
	joinedAfterNum := func(p int) bool {
		return p+1 < len(s) && strings.IndexByte("-./:, ", s[p]) >= 0 && isDigit(s[p+1])
	}
	for i := 0; i < len(runs); {
		// The compound number runs[i..j]: runs joined by one of - . / : ,
		j := i
		for j+1 < len(runs) && runs[j+1].s-runs[j].e == 1 && strings.IndexByte("-./:,", s[runs[j].e]) >= 0 {
			j++
		}
		first, last := runs[i], runs[j]
		if !standaloneCode(s, first.s, last.e) || spacedBefore(first.s) {
			i = j + 1
			continue
		}
		n := first.e - first.s
		switch {
		case j == i && !spacedAfter(first.e):
			if n >= 4 && n <= 8 {
				out = append(out, token{span: span{first.s, first.e}})
			}
		case j == i && n <= 2:
			// "1 2 3 4 5 6", "48 29 13": groups of one length joined by
			// single spaces, 4–8 digits, nothing else attached.
			k := i
			for k+1 < len(runs) && runs[k+1].s == runs[k].e+1 && s[runs[k].e] == ' ' && runs[k+1].e-runs[k+1].s == n {
				k++
			}
			last := runs[k]
			if total := n * (k - i + 1); k > i && total >= 4 && total <= 8 && !spacedAfter(last.e) &&
				!joinedAfterNum(last.e) && standaloneCode(s, first.s, last.e) {
				out = append(out, token{span: span{first.s, last.e}, spaced: true})
				i = k + 1
				continue
			}
		case j == i:
			// "512 774", "8812 4401": two equal groups of three or four
			// joined by one space, nothing else attached.
			if i+1 < len(runs) && (n == 3 || n == 4) {
				nx := runs[i+1]
				if nx.s == first.e+1 && nx.e-nx.s == n && !joinedAfterNum(nx.e) && standaloneCode(s, first.s, nx.e) {
					out = append(out, token{span: span{first.s, nx.e}})
					i += 2
					continue
				}
			}
		case j == i+1 && s[first.e] == '-' && !spacedAfter(last.e):
			a, b := n, last.e-last.s
			if (a == 3 && b == 3) || (a == 4 && b == 4) {
				out = append(out, token{span: span{first.s, last.e}})
			}
		}
		i = j + 1
	}
	return out
}

// standaloneCode: not glued to letters, digits, underscores or a decimal
// point on either side.
func standaloneCode(s string, a, b int) bool {
	if a > 0 {
		c := s[a-1]
		if isAlnum(c) || c == '_' {
			return false
		}
		if (c == '.' || c == ',') && a >= 2 && isDigit(s[a-2]) {
			return false
		}
	}
	if b < len(s) {
		c := s[b]
		if isAlnum(c) || c == '_' {
			return false
		}
	}
	return true
}

func findCodes(d *doc, shortCode bool, cs []cand) []cand {
	toks := codeTokens(d)
	s := d.s
	l := d.lower()
	n0 := len(cs)
	bound := make([]bool, len(toks))
	add := func(k int) {
		if !bound[k] {
			bound[k] = true
			cs = append(cs, cand{toks[k].s, toks[k].e, Class2FA, prio2FA})
		}
	}
	for _, m := range findKeywords(d) {
		ks, ke := m.s, m.e
		if negatedKeyword(s, l, ks, ke) {
			continue
		}
		if k, ok := bindForward(s, toks, ke); ok {
			add(k)
		} else if a, b, ok := bindAlnum(s, ke); ok {
			cs = append(cs, cand{a, b, Class2FA, prio2FA})
		}
		if k, ok := bindBackward(s, l, toks, ks); ok {
			add(k)
		}
	}
	for k, t := range toks {
		if codeShaped(s, l, t) {
			add(k)
		}
	}
	if shortCode {
		for k, t := range toks {
			if t.spaced || yearLike(s[t.s:t.e]) {
				continue
			}
			if brandPrefixRe.MatchString(s[:t.s]) && codeStandsAlone(l, t.e) {
				add(k)
			}
		}
	}
	if len(cs) > n0 {
		cs = propagateCodes(s, cs, n0)
	}
	return cs
}

// negatedKeyword reports a keyword that names something not secret.
func negatedKeyword(s, l string, ks, ke int) bool {
	w := strings.ToLower(s[ks:ke])
	for _, stem := range []string{"codes", "code", "códigos", "codigos", "código", "codigo", "codice", "codici", "koden", "kodu", "kode", "kod", "кода", "коду", "код"} {
		if strings.HasSuffix(w, stem) {
			if p := strings.TrimSuffix(w, stem); p != "" && oneOf(p, codeNegPrefix...) {
				return true
			}
			break
		}
	}
	if prev := prevWords(l, ks, 1, 24); len(prev) == 1 && oneOf(strings.ToLower(prev[0]), codeNegBefore...) {
		return true
	}
	next, ne := nextWord(l, ke, 24)
	if oneOf(next, "de", "di", "do", "da", "del", "des", "du") {
		next, _ = nextWord(l, ne, 24)
	}
	return next != "" && oneOf(strings.ToLower(next), codeNegAfter...)
}

// tightBetween reports text between a keyword and its value that binds them
// tightly: only separators, or a phrase of at most 64 bytes on one line
// that ends in ':' or a linking word.
func tightBetween(between string) bool {
	t := strings.Trim(between, " \t\n:：#=-–—\"'“”«»(")
	if t == "" {
		return true
	}
	if len(between) > 64 || strings.ContainsRune(between, '\n') || sentenceBreak(between) {
		return false
	}
	r := strings.TrimRight(between, " \t\"'“«#(")
	if strings.HasSuffix(r, ":") || strings.HasSuffix(r, "：") || strings.HasSuffix(r, "=") {
		return true
	}
	r = strings.TrimRight(r, " -–—")
	i := len(r)
	for i > 0 && wordByte(r[i-1]) {
		i--
	}
	return oneOf(strings.ToLower(r[i:]), linking...)
}

func bindForward(s string, toks []token, ke int) (int, bool) {
	for k, t := range toks {
		if t.s < ke {
			continue
		}
		between := s[ke:t.s]
		if len(between) > 64 || sentenceBreak(between) {
			return 0, false
		}
		if tightBetween(between) {
			return k, true
		}
		if t.spaced {
			// Not bound tightly: plain digits, as if it were no token.
			continue
		}
		if !hasDigit(between) && len(between) <= 40 && !strings.ContainsRune(between, '\n') && weakOK(s, t) {
			return k, true
		}
		if !hasDigit(between) {
			// The first number after the keyword is not a code: stop.
			return 0, false
		}
	}
	return 0, false
}

// bindAlnum finds an upper-case alphanumeric code tightly after a keyword.
func bindAlnum(s string, ke int) (int, int, bool) {
	end := ke + 64
	if end > len(s) {
		end = len(s)
	}
	m := alnumCodeRe.FindStringIndex(s[ke:end])
	if m == nil {
		return 0, 0, false
	}
	a, b := ke+m[0], ke+m[1]
	tok := s[a:b]
	digits, letters := 0, 0
	for i := 0; i < len(tok); i++ {
		switch {
		case isDigit(tok[i]):
			digits++
		case isAlpha(tok[i]):
			letters++
		}
	}
	// Alphanumeric codes need an explicit link ("code: R7K2P", "code is
	// R7K2P"); mere adjacency is how promotions read ("use code SAVE15").
	between := s[ke:a]
	if digits == 0 || letters == 0 || !tightBetween(between) || strings.Trim(between, " \t\n\"'“”") == "" {
		return 0, 0, false
	}
	if b < len(s) && (s[b] == '-' || s[b] == '.' && b+1 < len(s) && isAlnum(s[b+1])) {
		return 0, 0, false
	}
	return a, b, true
}

func bindBackward(s, l string, toks []token, ks int) (int, bool) {
	for k := len(toks) - 1; k >= 0; k-- {
		t := toks[k]
		if t.e > ks {
			continue
		}
		if t.spaced {
			// Spaced codes bind only forward; digits between a code and
			// its keyword end the search.
			return 0, false
		}
		between := s[t.e:ks]
		if len(between) > 40 || hasDigit(between) || strings.ContainsRune(between, '\n') || sentenceBreak(between) {
			return 0, false
		}
		bl := strings.TrimLeft(l[t.e:ks], " \t")
		if strings.HasPrefix(bl, "-") || strings.HasPrefix(bl, "–") || strings.HasPrefix(bl, "—") || strings.HasPrefix(bl, ":") {
			return k, true
		}
		w, _ := nextWord(l, t.e, 16)
		return k, oneOf(w, linkingBack...)
	}
	return 0, false
}

// weakOK rejects loosely bound numbers that look like something else: a
// year, an amount, a measurement, a time or a "#" reference.
func weakOK(s string, t token) bool {
	v := s[t.s:t.e]
	if yearLike(v) {
		return false
	}
	if t.s > 0 && s[t.s-1] == '#' || currencyBefore(s, t.s) {
		return false
	}
	rest := strings.TrimLeft(s[t.e:], " ")
	if rest != "" && (rest[0] == '%' || strings.HasPrefix(rest, "°") || strings.HasPrefix(rest, "€") || strings.HasPrefix(rest, "$")) {
		return false
	}
	w, _ := nextWord(lowerASCII(rest), 0, 12)
	return !oneOf(w, "min", "mins", "minute", "minutes", "hr", "hrs", "hour", "hours", "day", "days", "km", "mi", "miles",
		"lbs", "kg", "am", "pm", "usd", "eur", "dollars", "euros", "people", "points", "pts", "steps", "calories", "kcal", "mb", "gb", "ms")
}

// codeStandsAlone reports that what follows a code at the start of a
// message ends it as a unit: the end of the text, punctuation, or a linking
// word ("503917", "884210 - use this…", "664019 is your code"), rather than
// a phrase it labels ("8821 Bank alert: …").
func codeStandsAlone(l string, e int) bool {
	rest := strings.TrimLeft(l[e:], " \t")
	if rest == "" || strings.IndexByte(".,:;!?)-\n", rest[0]) >= 0 || strings.HasPrefix(rest, "–") || strings.HasPrefix(rest, "—") {
		return true
	}
	w, _ := nextWord(rest, 0, 12)
	return oneOf(w, linkingBack...)
}

func yearLike(v string) bool {
	return len(v) == 4 && (v[:2] == "19" || v[:2] == "20")
}

// propagateCodes masks every other standalone occurrence of the codes found
// in cs[from:], written with or without their separators.
func propagateCodes(s string, cs []cand, from int) []cand {
	var extra []cand
	for _, c := range cs[from:] {
		if c.class != Class2FA {
			continue
		}
		forms := []string{s[c.start:c.end]}
		if dg := digitsOf(forms[0]); dg != forms[0] {
			forms = append(forms, dg)
		}
		for _, f := range forms {
			if len(f) < 4 {
				continue
			}
			for i := 0; i < len(s); {
				j := strings.Index(s[i:], f)
				if j < 0 {
					break
				}
				a := i + j
				b := a + len(f)
				i = a + 1
				if a == c.start || !standalone(s, a, b) {
					continue
				}
				extra = append(extra, cand{a, b, Class2FA, prio2FA})
			}
		}
	}
	return append(cs, extra...)
}
