package triage

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// features are what the classifier reads from one message body. They are
// computed once per message by analyze, which does no allocation beyond the
// normalised word string.
type features struct {
	words int
	// norm is the lower-cased body as " w1 w2 … " (single spaces, leading
	// and trailing space) so phrase tests are substring tests with word
	// boundaries.
	norm string

	question   bool // a real question (rhetorical tags excluded)
	openQ      bool // a question a tapback cannot answer (wh-word, "A or B")
	request    bool // an explicit ask: "can you", "let me know", "call me"
	proposal   bool // a suggestion that invites an answer: "let's", "we should"
	rsvp       bool // a head count: "who's in", "are we still on"
	collective bool // addressed to everyone: "anyone", "you guys", "who wants"
	everyone   bool // asks each member for their own answer: "everyone", "every family", "each of you"
	personal   bool // written in the first person ("I", "my", "we're") or with laughter: a person typing
	answerLead bool // opens with an answer word ("yes", "nope"): a reply to a question
	menu       bool // a keyword menu: "Reply C to confirm", "Text 1 for …" (a template)
	youRef     bool // says "you"/"u"/"your"
	closure    bool // nothing but an acknowledgement: "ok", "thanks!", "👍"
	cancel     bool // withdraws an ask: "nvm", "figured it out"
	deferral   bool // promises an answer later: "let me check"
	urgent     bool // "asap", "urgent", "emergency", "call me"
	social     bool // a wish that expects thanks: "happy birthday", "congrats"
	fraud      bool // an automated alert that asks for a response about the account
	wordyAsk   bool // a request a tapback cannot grant: "let me know", "call me"
	links      int
	autoScore  int     // evidence of an automated sender, see autoPhrases
	autoCats   autoCat // categories of that evidence
	strongAuto bool    // at least one strong automated phrase
	brand      bool    // starts with "Brand: " (a sender prefix)
}

// autoCat is a bit set of automated-message categories.
type autoCat uint8

const (
	catCode autoCat = 1 << iota
	catDelivery
	catBank
	catMarketing
	catReminder
	catNoReply
)

var catNames = []struct {
	c    autoCat
	name string
}{
	{catCode, "verification code"},
	{catDelivery, "delivery notice"},
	{catBank, "bank alert"},
	{catMarketing, "marketing"},
	{catReminder, "automated reminder"},
	{catNoReply, "no-reply sender"},
}

// String lists the categories, comma-separated.
func (c autoCat) String() string {
	var b strings.Builder
	for _, n := range catNames {
		if c&n.c != 0 {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n.name)
		}
	}
	return b.String()
}

type autoPhrase struct {
	p      string
	cat    autoCat
	strong bool
}

// autoPhrases are the marks of machine-written texts. A strong phrase alone
// makes a message automated; weak ones add up (see isAutomated).
var autoPhrases = []autoPhrase{
	// Codes.
	{" verification code ", catCode, true}, {" security code ", catCode, true}, {" login code ", catCode, true},
	{" sign in code ", catCode, true}, {" signin code ", catCode, true}, {" passcode ", catCode, true},
	{" one time code ", catCode, true}, {" one time passcode ", catCode, true}, {" one time password ", catCode, true},
	{" authentication code ", catCode, true}, {" your code is ", catCode, true}, {" is your code ", catCode, true},
	{" otp ", catCode, true}, {" 2fa ", catCode, false}, {" do not share ", catCode, false},
	{" don't share ", catCode, false}, {" never share ", catCode, false}, {" code ", catCode, false},
	// Deliveries.
	{" out for delivery ", catDelivery, true}, {" has been delivered ", catDelivery, true},
	{" was delivered ", catDelivery, true}, {" your order has ", catDelivery, true}, {" has shipped ", catDelivery, true},
	{" tracking number ", catDelivery, true}, {" track your ", catDelivery, true}, {" delivery window ", catDelivery, true},
	{" your package ", catDelivery, false}, {" your order ", catDelivery, false}, {" delivered ", catDelivery, false},
	{" delivery ", catDelivery, false}, {" track ", catDelivery, false}, {" shipment ", catDelivery, false},
	{" parcel ", catDelivery, false}, {" your driver ", catDelivery, false},
	// Banks and payments.
	{" card ending in ", catBank, true}, {" account ending in ", catBank, true}, {" acct ending ", catBank, true},
	{" fraud alert ", catBank, true}, {" available balance ", catBank, true}, {" low balance ", catBank, true},
	{" direct deposit ", catBank, true}, {" transaction ", catBank, false}, {" purchase ", catBank, false},
	{" balance ", catBank, false}, {" deposit ", catBank, false}, {" debit ", catBank, false}, {" credit card ", catBank, false},
	{" declined ", catBank, false}, {" withdrawal ", catBank, false},
	// Marketing.
	{" reply stop ", catMarketing, true}, {" text stop ", catMarketing, true}, {" stop to opt out ", catMarketing, true},
	{" stop to end ", catMarketing, true}, {" to opt out ", catMarketing, true}, {" opt out ", catMarketing, true},
	{" unsubscribe ", catMarketing, true}, {" msg data rates ", catMarketing, true}, {" msg and data rates ", catMarketing, true},
	{" data rates may apply ", catMarketing, true}, {" stop2end ", catMarketing, true}, {" stop2quit ", catMarketing, true},
	{" off ", catMarketing, false}, {" sale ", catMarketing, false}, {" promo ", catMarketing, false},
	{" offer ", catMarketing, false}, {" limited time ", catMarketing, false}, {" shop ", catMarketing, false},
	{" free shipping ", catMarketing, false}, {" exclusive ", catMarketing, false},
	// Reminders and service notices.
	{" reply c to confirm ", catReminder, true}, {" reply y to confirm ", catReminder, true},
	{" reply yes to confirm ", catReminder, true}, {" reply c ", catReminder, true}, {" reply y ", catReminder, true},
	{" reply yes or no ", catReminder, true}, {" reply yes ", catReminder, true}, {" reply 1 ", catReminder, true},
	{" to reschedule ", catReminder, false}, {" is ready for pickup ", catReminder, true},
	{" your prescription ", catReminder, true}, {" appointment ", catReminder, false}, {" reminder ", catReminder, false},
	{" your ride ", catReminder, true}, {" is arriving ", catReminder, false},
	// Opt-out and help footers carriers require of bulk senders, and
	// their confirmations.
	{" help for help ", catMarketing, true}, {" reply help ", catMarketing, true}, {" txt stop ", catMarketing, true},
	{" txt help ", catMarketing, true}, {" text help ", catMarketing, true}, {" opted out ", catMarketing, true},
	{" been unsubscribed ", catMarketing, true}, {" no further messages ", catMarketing, true},
	{" stop to cancel ", catMarketing, true}, {" stop to quit ", catMarketing, true},
	// Portals and account notices, in any domain (care, banking, utilities,
	// schools): "log in to view", "your statement", "payment posted".
	{" patient portal ", catNoReply, true}, {" log in to view ", catNoReply, true}, {" login to view ", catNoReply, true},
	{" sign in to view ", catNoReply, true}, {" log in to your ", catNoReply, false}, {" portal ", catNoReply, false},
	{" your account ", catBank, false}, {" posted to ", catBank, true}, {" has posted ", catBank, false},
	{" statement ", catBank, false}, {" autopay ", catBank, false}, {" payment ", catBank, false},
	{" is ready ", catReminder, false}, {" check in ", catReminder, false},
	{" confirmed ", catReminder, false}, {" scheduled ", catReminder, false}, {" care team ", catReminder, false},
	// No-reply.
	{" do not reply ", catNoReply, true}, {" this is an automated ", catNoReply, true}, {" noreply ", catNoReply, true},
	{" no reply ", catNoReply, false},
}

var whWords = map[string]bool{
	"what": true, "when": true, "where": true, "who": true, "why": true, "how": true, "which": true,
	"whats": true, "what's": true, "when's": true, "where's": true, "who's": true, "how's": true, "wat": true,
}

// rhetorical mark short question sentences that expect no answer
// ("right??", "seriously?"); exclaims do so in a question of any length.
var rhetorical = []string{
	" right ", " really ", " seriously ", " lol ", " lmao ", " haha ", " omg ", " no way ", " isn't it ",
	" am i right ", " ya know ", " you know ", " wtf ", " why not ", " huh ", " riiight ", " isn't that ", " how fun ",
}

var exclaims = []string{" can you believe ", " who knew ", " how cool is that ", " how crazy is that "}

// wordyAsks are requests a tapback cannot grant.
var wordyAsks = []string{
	" let me know ", " lmk ", " tell me ", " call me ", " text me ", " send me ", " thoughts ", " what do you think ",
	" give me a ring ", " call me back ",
}

// requestPhrases ask the reader to do or say something.
var requestPhrases = []string{
	" can you ", " could you ", " would you ", " will you ", " can u ", " could u ", " would u ", " will u ",
	" please ", " pls ", " plz ", " let me know ", " lmk ", " call me ", " text me ", " give me a call ",
	" ring me ", " send me ", " get back to me ", " remind me ", " don't forget ", " dont forget ", " make sure ",
	" need you to ", " i need you ", " do me a favor ", " do me a favour ", " when you get a chance ",
	" when you can ", " when you get a sec ", " when you have a sec ", " when you get a minute ", " hit me up ",
	" ping me ", " tell me ", " email me ", " can we ", " could we ", " shall we ", " any thoughts ",
	" what do you think ", " wdyt ", " thoughts ", " rsvp ", " can i ", " mind if ", " would you mind ",
	" r u ", " are you free ", " you free ", " u free ", " are you around ", " you around ", " u around ",
	" you up ", " call when ", " call back ", " let us know ", " get back to us ", " give me a ring ",
	" ring back ", " when you get this ", " call me back ",
}

// proposalPhrases suggest something to the reader.
var proposalPhrases = []string{" let's ", " lets ", " we should ", " how about ", " what about ", " up for ", " wanna "}

// rsvpPhrases ask for a head count or a confirmation of a plan: they stay
// open for the owner even after other group members answered.
var rsvpPhrases = []string{
	" who's in ", " who is in ", " whos in ", " who wants ", " who's coming ", " who is coming ", " whos coming ",
	" who can make it ", " who's down ", " who is down ", " whos down ", " anyone want ", " anyone wanna ",
	" anyone up for ", " are we still on ", " we still on ", " still on for ", " are you coming ", " you coming ",
	" are you in ", " you in ", " are you guys in ", " need numbers ", " need a head count ", " headcount ",
	" head count ", " rsvp ", " can you make it ", " can you come ", " will you be there ",
}

// collectivePhrases address every member of a group.
var collectivePhrases = []string{
	" anyone ", " anybody ", " everyone ", " everybody ", " every ", " each ", " you guys ", " y'all ", " yall ", " all of you ",
	" guys ", " team ", " folks ", " who wants ", " who's in ", " who is in ", " whos in ", " who's coming ",
	" who is coming ", " who can ", " who's down ", " who is down ", " you all ", " ya'll ", " people ",
}

// closureWords make up acknowledgements. A message of nothing but these
// (and emoji/punctuation) closes a conversation.
var closureWords = map[string]bool{
	"ok": true, "okay": true, "k": true, "kk": true, "okk": true, "okie": true, "cool": true, "great": true,
	"perfect": true, "nice": true, "awesome": true, "thanks": true, "thank": true, "you": true, "thx": true,
	"ty": true, "tysm": true, "tyvm": true, "lol": true, "haha": true, "hahaha": true, "hah": true, "lmao": true,
	"sounds": true, "good": true, "sgtm": true, "yes": true, "yep": true, "yeah": true, "yup": true, "ya": true,
	"sure": true, "np": true, "no": true, "worries": true, "problem": true, "got": true, "it": true, "see": true,
	"then": true, "soon": true, "later": true, "will": true, "do": true, "love": true, "night": true,
	"gn": true, "bye": true, "cya": true, "ttyl": true, "amazing": true, "sweet": true, "word": true, "bet": true,
	"done": true, "noted": true, "same": true, "agreed": true, "true": true, "for": true, "exactly": true,
	"alright": true, "all": true, "right": true, "welcome": true, "you're": true, "youre": true, "of": true,
	"course": true, "anytime": true, "glad": true, "hear": true, "that": true, "deal": true, "so": true,
	"much": true, "very": true, "too": true, "u": true, "ur": true, "a": true, "lot": true, "lots": true,
	"wonderful": true, "fantastic": true, "excellent": true, "fine": true, "works": true, "sound": true,
	"thnx": true, "thanx": true, "ha": true, "hehe": true, "oh": true, "ah": true, "aw": true, "aww": true,
	"awww": true, "yay": true, "woo": true, "wow": true, "omg": true, "def": true, "definitely": true,
	"absolutely": true, "totally": true, "hahah": true, "lolol": true, "rofl": true, "and": true, "have": true,
	"fun": true, "enjoy": true, "safe": true, "travels": true, "gotcha": true, "understood": true,
	"roger": true, "copy": true, "cheers": true, "ya'll": true, "x": true, "xo": true, "xoxo": true,
	"night!": true, "goodnight": true, "morning": true, "dear": true, "babe": true, "hun": true, "honey": true,
	"sweetie": true, "dude": true, "man": true, "bro": true, "girl": true, "ok!": true, "yess": true, "yesss": true,
	"nope": true, "nah": true, "ofc": true, "sounds good": true, "i": true, "we": true, "it's": true, "its": true,
	"is": true, "was": true, "me": true, "hahaa": true, "mhm": true, "mm": true, "hmm": true, "ahh": true,
	"ooh": true, "oooh": true, "lovely": true, "brilliant": true, "super": true, "merci": true, "gracias": true,
	"danke": true, "tomorrow": true, "tonight": true, "there": true, "bit": true, "in": true, "morning!": true,
}

// everyonePhrases ask each member of a group for their own answer, so
// another member's answer does not settle it for the owner ("anyone"
// asks for one answer from whoever has it).
var everyonePhrases = []string{
	" everyone ", " everybody ", " every ", " each ", " all of you ", " you all ", " y'all ", " yall ", " ya'll ",
}

// answerWords open a reply to a yes/no question.
var answerWords = map[string]bool{
	"yes": true, "yess": true, "yesss": true, "yeah": true, "yea": true, "yep": true, "yup": true, "no": true,
	"nope": true, "nah": true, "ya": true,
}

// firstPerson are words a person writes and a template rarely does.
var firstPerson = map[string]bool{
	"i": true, "i'm": true, "im": true, "i'll": true, "i've": true, "i'd": true, "me": true, "my": true,
	"we're": true, "lol": true, "haha": true, "lmao": true, "omg": true,
}

var cancelPhrases = []string{
	" nvm ", " never mind ", " nevermind ", " figured it out ", " forget it ", " no need ", " don't worry about it ",
	" dont worry about it ", " found it ", " sorted ", " all good now ", " ignore that ", " ignore my last ",
	" scratch that ", " disregard ",
}

var deferralPhrases = []string{
	" let me check ", " lemme check ", " i'll check ", " will check ", " get back to you ", " one sec ", " 1 sec ",
	" hold on ", " brb ", " i'll let you know ", " will let you know ", " i'll see ", " not sure yet ",
	" give me a min ", " give me a sec ", " in a meeting ", " can't talk ", " cant talk ", " call you later ",
	" call you back ", " will call you ", " i'll call you ", " let me think ", " lemme think ", " let me ask ",
	" i'll ask ", " will ask ", " i'll look ", " let me look ", " checking ",
}

var urgentPhrases = []string{
	" asap ", " urgent ", " urgently ", " emergency ", " call me ", " 911 ", " right now ", " immediately ",
	" are you ok ", " are you okay ", " r u ok ", " need to talk ", " need help ", " please call ", " call asap ",
	" hospital ", " accident ",
}

var socialPhrases = []string{
	" happy birthday ", " hbd ", " congrats ", " congratulations ", " so sorry for your loss ", " thinking of you ",
	" get well soon ", " happy anniversary ", " miss you ", " proud of you ",
}

// codeContext says what a bare code is for.
var codeContext = []string{
	" to sign in ", " to log in ", " to login ", " to verify ", " to confirm your ", " expires in ", " is your ",
	" use this code ", " to reset your password ", " to complete your ",
}

var fraudPhrases = []string{
	" fraud ", " did you attempt ", " did you make ", " suspicious ", " unusual activity ", " was this you ",
	" verify this ",
}

// analyze computes the features of one message body.
func analyze(text string) features {
	var f features
	if text == "" {
		return f
	}
	low := strings.ToLower(text)
	f.links = countLinks(low)
	f.brand = brandPrefix(text)

	// Words: apostrophes are kept inside words (curly ones folded), every
	// other non-letter/digit separates words; sentences are tracked to find
	// the questions.
	words := make([]string, 0, 16)
	sentStart := 0 // index in words of the current sentence's first word
	allClosure, emojiOnly := true, true
	bareQ := false // a "?" with no words before it
	wordStart, curly := -1, false
	flushWord := func(end int) {
		if wordStart < 0 {
			return
		}
		w := low[wordStart:end]
		wordStart = -1
		if curly {
			w = apostrophes.Replace(w)
			curly = false
		}
		w = strings.Trim(w, "'")
		if w == "" {
			return
		}
		words = append(words, w)
		if !closureWords[w] {
			allClosure = false
		}
		switch w {
		case "you", "u", "your", "ur", "you're", "youre", "ya":
			f.youRef = true
		}
	}
	endSentence := func(end int, q bool) {
		flushWord(end)
		sentence := words[sentStart:]
		sentStart = len(words)
		if len(sentence) == 0 {
			bareQ = bareQ || q
			return
		}
		if q || questionWithoutMark(sentence) {
			if !isRhetorical(sentence) {
				f.question = true
				w := sentence
				for len(w) > 1 && leadIns[w[0]] {
					w = w[1:]
				}
				if whWords[w[0]] || (len(w) > 1 && whWords[w[1]]) || slices.Contains(sentence, "or") {
					f.openQ = true
				}
			}
		}
	}
	skipURL := 0
	for i, r := range low {
		if i < skipURL {
			continue
		}
		if (r == 'h' || r == 'w') && wordStart < 0 {
			if n := urlLen(low[i:]); n > 0 {
				skipURL = i + n
				emojiOnly = false
				continue
			}
		}
		switch {
		case r == '\u2019' || r == '\u2018' || r == '\'':
			if wordStart >= 0 {
				curly = curly || r != '\''
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if wordStart < 0 {
				wordStart = i
			}
			emojiOnly = false
		case r == '?':
			endSentence(i, true)
		case r == '.' || r == '!' || r == '\n' || r == ';':
			endSentence(i, false)
		default:
			flushWord(i) // includes U+FFFC, the attachment placeholder
		}
	}
	endSentence(len(low), false)
	f.words = len(words)
	if bareQ && f.words == 0 {
		// "??" alone asks for clarification.
		f.question, f.openQ = true, true
	}
	var nb strings.Builder
	nb.Grow(len(low) + 2)
	nb.WriteByte(' ')
	for _, w := range words {
		nb.WriteString(w)
		nb.WriteByte(' ')
	}
	f.norm = nb.String()
	if f.words == 0 {
		allClosure = emojiOnly && strings.TrimSpace(strings.ReplaceAll(text, "\ufffc", "")) != ""
	}
	m := matchPhrases(words)
	f.request = m.has(setRequest)
	f.proposal = m.has(setProposal)
	f.rsvp = m.has(setRSVP)
	f.collective = m.has(setCollective)
	f.everyone = m.has(setEveryone)
	for _, w := range words {
		if firstPerson[w] {
			f.personal = true
			break
		}
	}
	f.answerLead = len(words) > 0 && answerWords[words[0]]
	f.cancel = m.has(setCancel)
	f.deferral = m.has(setDeferral)
	f.urgent = m.has(setUrgent)
	f.social = m.has(setSocial)
	f.wordyAsk = m.has(setWordyAsk)
	f.closure = allClosure && !f.question && !f.request && f.links == 0 && f.words <= 8
	f.autoCats, f.autoScore, f.strongAuto = m.autoCats, m.autoScore, m.strongAuto
	f.menu = keywordMenu(text)
	if f.menu && !f.strongAuto {
		f.autoCats |= catReminder
		f.autoScore += 2
		f.strongAuto = true
	}
	codeDigits := (f.autoCats&catCode != 0 || m.has(setCodeContext)) && hasCodeDigits(words)
	if !f.strongAuto && codeDigits && m.has(setCodeContext) {
		// "Use 604918 to sign in": a code and what it is for.
		f.autoCats |= catCode
		f.autoScore += 2
		f.strongAuto = true
	}
	if f.autoCats&catCode != 0 && !codeDigits && m.strongCats&catCode == 0 {
		// "code" without a code: a human talking about codes.
		f.autoCats &^= catCode
	}
	if f.autoCats&catMarketing != 0 && strings.Contains(low, "%") {
		f.autoScore++
	}
	if f.brand {
		f.autoScore++
	}
	f.fraud = (f.autoCats&catBank != 0 || f.brand) && m.has(setFraud)
	return f
}

// keywordMenu reports whether text offers keyword replies the way a
// template does: "Reply C to confirm", "Text 1 for refills", "reply YES or
// NO", "Reply X to cancel" — a reply verb, then a short all-capitals or
// all-digit keyword, then "to", "for", "or" or the end. People write
// "reply to me" or "text me", never a capitalised keyword.
func keywordMenu(text string) bool {
	fields := strings.Fields(text)
	for i := 0; i+1 < len(fields); i++ {
		switch strings.ToLower(strings.Trim(fields[i], ".,:;!()\"'")) {
		case "reply", "text", "txt", "respond", "send":
		default:
			continue
		}
		kw := strings.Trim(fields[i+1], ".,:;!()\"'")
		if kw == "" || len(kw) > 6 || kw == "I" || kw == "A" {
			continue
		}
		upper, digits := true, true
		for _, r := range kw {
			if !unicode.IsUpper(r) {
				upper = false
			}
			if !unicode.IsDigit(r) {
				digits = false
			}
		}
		if !upper && !digits {
			continue
		}
		if i+2 == len(fields) || strings.ContainsAny(fields[i+1], ".,;!") {
			return true
		}
		switch strings.ToLower(strings.Trim(fields[i+2], ".,:;!()")) {
		case "to", "for", "or", "if", "and":
			return true
		}
	}
	return false
}

// questionWithoutMark reports whether a sentence reads as a question
// though it lacks "?": "are we still on for thursday", "what time works".
func questionWithoutMark(w []string) bool {
	for len(w) > 0 && leadIns[w[0]] {
		w = w[1:]
	}
	if len(w) == 2 && w[0] == "how" {
		switch w[1] {
		case "much", "many", "long", "far", "come":
			return true // "maybe! how much"
		}
	}
	if len(w) < 3 {
		return false
	}
	switch w[0] {
	case "are", "do", "did", "can", "could", "would", "will", "should", "r", "wanna":
		switch w[1] {
		case "you", "u", "we", "ya", "i":
			return true
		}
	case "what", "when", "where", "which", "how":
		switch w[1] {
		case "time", "are", "is", "do", "did", "should", "would", "r", "day", "works":
			return true
		}
	}
	return false
}

// leadIns open a sentence without changing its mood ("hey where did you
// leave the key").
var leadIns = map[string]bool{
	"hey": true, "hi": true, "hello": true, "so": true, "ok": true, "okay": true, "oh": true, "btw": true,
	"also": true, "and": true, "but": true, "um": true, "hmm": true, "quick": true, "question": true, "yo": true,
	"wait": true, "sorry": true, "actually": true, "maybe": true, "possibly": true, "perhaps": true,
}

func isRhetorical(sentence []string) bool {
	m := matchPhrases(sentence)
	if len(sentence) > 5 {
		// Long questions are rarely rhetorical tags; only the fixed
		// phrases that stand for exclamations are.
		return m.has(setExclaim)
	}
	return m.has(setRhetorical) || m.has(setExclaim)
}

// urlLen returns the length of a URL starting at s ("http://", "https://",
// "www."), or 0.
func urlLen(s string) int {
	if !(strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "www.")) {
		return 0
	}
	for i, r := range s {
		if unicode.IsSpace(r) {
			return i
		}
	}
	return len(s)
}

func countLinks(low string) int {
	return strings.Count(low, "http://") + strings.Count(low, "https://") +
		strings.Count(low, "www.") - strings.Count(low, "://www.")
}

// brandPrefix reports whether text starts with a sender tag such as
// "FreshBowl: " or "Bright Smile Dental: " (one to three capitalised words
// and a colon), the way businesses sign their texts.
func brandPrefix(text string) bool {
	i := strings.IndexByte(text, ':')
	if i <= 1 || i > 32 || i+1 >= len(text) || text[i+1] != ' ' {
		return false
	}
	head := text[:i]
	r, _ := utf8.DecodeRuneInString(head)
	if !unicode.IsUpper(r) {
		return false
	}
	words := strings.Fields(head)
	if len(words) > 3 {
		return false
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if !unicode.IsUpper(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	// "Re: …", "Note: …", "PS: …" are people's habits, not brands.
	switch strings.ToLower(head) {
	case "re", "note", "ps", "p.s", "fyi", "btw", "update", "edit", "q", "a", "ok", "lol", "also", "reminder":
		return false
	}
	return true
}

// hasCodeDigits reports whether the words hold a token of 4–8 digits,
// the shape of a one-time code.
func hasCodeDigits(words []string) bool {
	for _, w := range words {
		if len(w) < 4 || len(w) > 8 {
			continue
		}
		digits := true
		for i := 0; i < len(w); i++ {
			if w[i] < '0' || w[i] > '9' {
				digits = false
				break
			}
		}
		if digits {
			return true
		}
	}
	return false
}
