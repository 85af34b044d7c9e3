package dossier

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/dates"
)

// Commitment kinds.
const (
	KindPromise = "promise" // someone said they will do something
	KindRequest = "request" // someone asked the other to do something
	KindDebt    = "debt"    // money owed or asked for
	KindPlan    = "plan"    // something both intend to do together
)

// Commitment statuses. A commitment is open until a later message settles
// it; Report marks an open one whose due date has gone by as StatusPast.
const (
	StatusOpen     = "open"
	StatusResolved = "resolved"
	StatusPast     = "past"
	StatusStale    = "stale" // open, no date, not mentioned for StaleAfter
)

// Resolutions say how a commitment was settled.
const (
	ResDone      = "done"      // the owner says it is done ("sent", "booked")
	ResPaid      = "paid"      // money was sent ("venmo'd you $40")
	ResReceived  = "received"  // the other side confirms receipt ("got it, thanks")
	ResDeclined  = "declined"  // the owner said no
	ResCancelled = "cancelled" // withdrawn ("never mind", "rain check")
)

// Commitment is something promised, asked, owed or planned. Sources cite
// the messages that made or accepted it, Mentions the reminders, and
// ResolvedBy the messages that settled it.
type Commitment struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Owner is who must act: "me", "them" or "both" (plans). By is who
	// said it first.
	Owner string `json:"owner"`
	By    string `json:"by"`
	// Text is the sentence it was read from; What the part that says what.
	Text       string    `json:"text"`
	What       string    `json:"what"`
	Due        *Due      `json:"due,omitempty"`
	Amount     *Amount   `json:"amount,omitempty"`
	Status     string    `json:"status"`
	Resolution string    `json:"resolution,omitempty"`
	Accepted   bool      `json:"accepted,omitempty"`
	Created    time.Time `json:"created"`
	// Updated is when it last came up (made, accepted, refined, reminded).
	Updated    time.Time `json:"updated"`
	Resolved   time.Time `json:"resolved,omitzero"`
	Sources    []string  `json:"sources"`
	Mentions   []string  `json:"mentions,omitempty"`
	ResolvedBy []string  `json:"resolved_by,omitempty"`
}

// Amount is a sum of money as written, with its value in cents.
type Amount struct {
	Text     string `json:"text"`
	Cents    int64  `json:"cents"`
	Currency string `json:"currency"`
}

// Windows within which later messages relate to a commitment.
const (
	acceptWindow  = 3 * 24 * time.Hour  // "will do" accepts a request this recent
	genericWindow = 3 * 24 * time.Hour  // a bare "done"/"sent" settles only recent ones
	relateWindow  = 90 * 24 * time.Hour // nothing older is settled by a message
	planMerge     = 14 * 24 * time.Hour
)

var (
	reAmount = dates.MustRx(`([$€£])\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?|\b(\d+)(?:\.(\d{1,2}))?\s?(dollars|bucks|usd|euros?|eur|pounds|quid)\b`, "$", "€", "£", "dollar", "buck", "usd", "euro", "eur", "pound", "quid")
	reFuture = dates.MustRx(`\b(will|i'll|ill|gonna|going to|can you|could you|can u|please|pls|let me|i can|i'd|when you)\b`, "will", "'ll", "ill", "gonna", "going to", "can you", "could you", "can u", "please", "pls", "let me", "i can", "i'd", "when you")
	rePaid   = dates.MustRx(`\b(sent|paid|venmo'?d|venmoed|zelle'?d|zelled|transferred|paypal'?d|e-?transferred)\b[^.?!]*\b(you|u|ya|it|the money|the cash)\b|\b(paid|pay) (you|u) back\b|\bwe'?re (square|even)\b|\bjust (venmo'?d|zelled|paid)\b`, "sent", "paid", "venmo", "zelle", "transferred", "paypal", "pay", "square", "even")
	reDone   = dates.MustRx(`^(done|sent|booked|ordered|bought|finished|fixed|submitted|handled|all set|all done|it's done)\b|\b(just|already) (sent|did|booked|ordered|bought|finished|submitted|emailed|dropped|picked|fixed|mailed)\b|\bi (sent|did|booked|ordered|bought|finished|submitted|emailed|fixed|mailed|picked (it|them|him|her) up|dropped (it|them) off)\b|\b(here you go|here it is|took care of it|taken care of|found it)\b|\bconfirmed\b`, "done", "sent", "booked", "ordered", "bought", "finished", "fixed", "submitted", "handled", "all set", "did", "emailed", "dropped", "picked", "mailed", "here you go", "here it is", "took care", "taken care", "found it", "confirmed")
	// rePastDone is a sentence opening with a past-tense verb ("reviewed it,
	// left comments"): done, but only for a commitment it shares words with.
	rePastDone = dates.MustRx(`^([a-z]{3,}ed)\b`, "ed")
	reRecv     = dates.MustRx(`\b(got it|got them|got the|received|thanks for (sending|the)|thank you for (sending|the)|got your)\b`, "got", "received", "thanks for", "thank you for")
	reDecline  = dates.MustRx(`\b(can'?t|cannot|won'?t be able to|unable to|not able to|no can do|i'?ll pass|not this time)\b`, "can't", "cant", "cannot", "won't", "wont", "unable", "not able", "no can do", "pass", "not this time")
	reNotDecl  = dates.MustRx(`\bcan'?t (wait|believe|stop|complain|remember|tell|decide|even)\b`, "can")
	reCancel   = dates.MustRx(`\b(nvm|never ?mind|no need|don'?t worry about it|forget it|cancel(?:led|ed)?|rain ?check|call it off|postpone|reschedule)\b`, "nvm", "never", "no need", "worry", "forget it", "cancel", "rain", "call it off", "postpone", "reschedule")
	reAccept   = dates.MustRx(`^(yes|yess+|yeah|yep|yup|sure|ok|okay|of course|absolutely|definitely|will do|on it|no problem|np|sounds good|deal|works for me|perfect|can do|for sure|you got it|i can)\b`, "yes", "yeah", "yep", "yup", "sure", "ok", "of course", "absolutely", "definitely", "will do", "on it", "no problem", "np", "sounds good", "deal", "works for me", "perfect", "can do", "for sure", "you got it", "i can")

	reOweThem  = dates.MustRx(`\b(you|u) (still )?owe me\b(.*)`, "owe")
	reOweMe    = dates.MustRx(`\bi (still )?owe (you|u)\b(.*)`, "owe")
	rePayBack  = dates.MustRx(`\b(i'?ll|i will|will|let me|i'?m gonna|im gonna|i'?m going to|i can) (pay|venmo|zelle|paypal|transfer|send|get) (you|u)\b(.*)`, "pay", "venmo", "zelle", "paypal", "transfer", "send", "get")
	reAskMoney = dates.MustRx(`\b(can|could|would) (you|u) (please |pls )?(venmo|zelle|pay|paypal|transfer|send|spot) me\b(.*)|\bpay me back\b(.*)`, " me")
	reRequest  = dates.MustRx(`\b(can|could|would|will) (you|u) (please |pls |maybe )?([a-z']+)(.*)`, "can you", "could you", "would you", "will you", "can u", "could u", "would u", "will u")
	rePlease   = dates.MustRx(`^(please|pls|plz) ([a-z']+)(.*)|\b(don'?t forget|dont forget|remember) (to )?(.*)|\bmake sure (you |to )(.*)|\bneed (you|u) to (.*)|\b(let me know|lmk)\b(.*)`, "please", "pls", "plz", "forget", "remember", "make sure", "need you", "need u", "let me know", "lmk")
	rePromise  = dates.MustRx(`\b(i'?ll|i will|i'?m going to|im going to|i'?m gonna|im gonna|i am going to|i can)\s+([a-z']+)(.*)`, "'ll", "i will", "going to", "gonna", "i can")
	reBareWill = dates.MustRx(`^(will|gonna)\s+([a-z']+)(.*)`, "will", "gonna")
	reLetMe    = dates.MustRx(`\blet me (send|check|get|find|ask|book|look|call|grab|pick|bring|email|text|sort|handle|pay|venmo|reserve|order|fix)\b(.*)`, "let me")
	reOnIt     = dates.MustRx(`^(on it|will do)\b(.*)`, "on it", "will do")
	rePlanLets = dates.MustRx(`\b(let'?s|we should|we could)\s+([a-z']+)(.*)`, "let's", "lets", "we should", "we could")
	reCanWe    = dates.MustRx(`\b(can|could|shall) we\s+([a-z']+)(.*)`, "can we", "could we", "shall we")
	reChance   = dates.MustRx(`\b(did|have|could|can) (you|u) (ever |already )?(get|got|had|have|find) (a )?(chance|time|around|a sec|a minute) to (.*)`, "chance", "time", "around", "a sec", "a minute")
	reNeedIt   = dates.MustRx(`\bneed (it|them|that|this|those|my [a-z']+)( back)? (by|before|this|tomorrow|tonight|on|for)\b`, "need")
	reImper    = dates.MustRx(`^(call|text|email|ring|send|bring|grab|remind|tell|ask|buy|pick up|drop off|give) (me|us|him|her|them|the|a|an|your|my|it|some)\b(.*)`, "call", "text", "email", "ring", "send", "bring", "grab", "remind", "tell", "ask", "buy", "pick up", "drop off", "give")
	reConfirm  = dates.MustRx(`\b(booked|reserved|reservation|confirmed|reminder of your|your appointment)\b`, "booked", "reserved", "reservation", "confirmed", "reminder of your", "your appointment")
	reInvite   = dates.MustRx(`\b(want to|wanna|would you like to|do you want to|down to|up for)\s+([a-z']+)(.*)`, "want to", "wanna", "would you like to", "do you want to", "down to", "up for")
	// reDefer is a deferral ("let me check", "hmm let me think about it",
	// "let me see what I can do"): it promises an answer, not a deed, so
	// the sentence makes no commitment (docs/dossier.md "Commitments").
	reDefer = dates.MustRx(`\blet me (check|look|think|see|ask|find out|get back)\b`, "let me")
	// reCourtesy follows "let me know": an offer or a courtesy ("if you
	// need anything", "if you want to borrow my ladder", "if you have any
	// questions") asks for nothing unless the other side wants it.
	reCourtesy = dates.MustRx(`^\s*(if|whether) (you|u) (want|need|have any|'d like|would like|wanna)\b|^\s*if (anything|there'?s anything|there is anything|you have questions|i can help|i can do anything)\b`, "if", "whether")
	// reIdiom is an "I'll …" that commits to nothing ("I'll take it to the
	// grave", "I'll hold you to that").
	reIdiom = dates.MustRx(`^(take|carry) (it|that|this|the secret|that secret|this secret|it all) to (my|the) grave|^hold you to (it|that)|^drink to that|^eat my (hat|words)|^cross that bridge|^believe it when|^never forget|^keep you posted|^be the judge`, "grave", "hold you", "drink", "eat my", "bridge", "believe", "never", "posted", "judge")
	// reCondition opens a hypothetical or conditional sentence.
	reCondition = dates.MustRx(`^(if|unless|in case|maybe if|even if|whenever|what if|suppose|supposing|hypothetically)\b`, "if", "unless", "in case", "whenever", "suppose", "hypothetically")
	// reSometime is a time that names none.
	reSometime = dates.MustRx(`\b(sometime|some time|at some point|one of these days|one day|someday|eventually)\b`, "some", "one", "eventually")
	// reOffer offers to do something for the other side ("want me to
	// save you some?").
	reOffer  = dates.MustRx(`\b(want|wanna|need|would you like|do you want) me to ([a-z']+)(.*)`, " me to")
	reSeeYou = dates.MustRx(`\bsee (you|u|ya) (on |at |this |next |tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday|then)`, "see you", "see u", "see ya")
)

// Verbs after "can you"/"I'll" that make no commitment.
var (
	notRequestVerb = map[string]bool{"believe": true, "imagine": true, "hear": true, "see": true, "rather": true, "like": true,
		"feel": true, "guess": true, "tell": false, "be": true, "not": true, "still": true, "ever": true, "stop": false, "please": true}
	notPromiseVerb = map[string]bool{"miss": true, "love": true, "never": true, "always": true, "see": true, "think": true,
		"try": true, "die": true, "pass": true, "bet": true, "admit": true, "say": true, "guess": true, "probably": true,
		"just": true, "be": false, "have": false, "still": true, "tell": false, "totally": true, "hate": true, "definitely": false,
		"keep": false, "leave": false, "believe": true, "imagine": true, "only": true, "also": false, "need": true, "want": true,
		"help": false, "do": false, "check": false, "let": false, "take": false, "find": false, "sleep": true, "survive": true,
		"live": true, "wait": false, "assume": true, "hear": true}
	planVerbs    = map[string]bool{"come": true, "make": true, "join": true, "meet": true}
	notPlanVerbs = map[string]bool{"see": true, "just": true, "be": true, "hope": true, "not": true, "say": true, "go": false,
		"all": true, "agree": true, "pray": true, "face": true, "goo": true}
	activities = []string{"appointment", "cleaning", "checkup", "haircut", "dinner", "lunch", "brunch", "breakfast", "coffee", "drinks", "drink", "movie", "hike", "game", "party",
		"call", "meeting", "trip", "visit", "concert", "show", "class", "walk", "run", "climb", "bouldering", "tacos", "pizza",
		"ramen", "beers", "beer", "date", "picnic", "swim", "workout", "yoga", "match",
		"climbing", "hiking", "skiing", "bowling", "camping", "biking", "swimming", "running", "shopping", "club",
		"karaoke", "trivia", "bbq", "barbecue", "sync", "standup", "practice", "rehearsal"}
)

// planRefine marks a sentence that only adds a date or a booking to an
// open plan ("thursday works! 7:30?", "booked it for 8").
const planRefine = "refine"

// cand is a commitment found in one sentence.
type cand struct {
	deferral bool
	offer    bool
	kind     string
	owner    string // "speaker", "addressee", "both"
	what     string
	sent     sentence
}

// event is something a sentence says about existing commitments.
type event string

const (
	evPaid     event = "paid"
	evDone     event = "done"
	evDoneWeak event = "done-weak" // needs shared words
	evReceived event = "received"
	evDeclined event = "declined"
	evCancel   event = "cancelled"
	evAccept   event = "accept"
)

// analyzeSentence finds at most one new commitment and the events of a
// sentence.
func analyzeSentence(s sentence) (c *cand, evs []event) {
	low := strings.TrimSpace(s.low)
	// Past-tense reports are read per clause: "sent my notes, let me know
	// if anything is unclear" reports a send although it also asks.
	paid, done, weak := false, false, false
	for _, cl := range strings.Split(low, ", ") {
		cl = strings.TrimSpace(cl)
		if reFuture.MatchString(cl) {
			continue
		}
		paid = paid || rePaid.MatchString(cl)
		if !s.quest {
			done = done || reDone.MatchString(cl)
			weak = weak || rePastDone.MatchString(cl)
		}
	}
	if paid {
		evs = append(evs, evPaid)
	}
	if done {
		evs = append(evs, evDone)
	} else if weak {
		evs = append(evs, evDoneWeak)
	}
	if reRecv.MatchString(low) && !s.quest {
		evs = append(evs, evReceived)
	}
	if reDecline.MatchString(low) && !reNotDecl.MatchString(low) && !s.quest {
		evs = append(evs, evDeclined)
	}
	if reCancel.MatchString(low) {
		evs = append(evs, evCancel)
	}
	if reAccept.MatchString(low) {
		evs = append(evs, evAccept)
	}
	mk := func(kind, owner, what string) *cand {
		return &cand{kind: kind, owner: owner, what: cleanWhat(what), sent: s}
	}
	if reCondition.MatchString(low) {
		// "if it rains I'll drive you", "unless work runs late": a
		// hypothetical or a condition commits to nothing yet.
		return nil, evs
	}
	if reDefer.MatchString(low) {
		// Only the deferring clause: "let me think about the timeline,
		// I'll propose dates" still promises the dates.
		var keep []string
		for _, cl := range strings.Split(low, ", ") {
			if !reDefer.MatchString(cl) {
				keep = append(keep, cl)
			}
		}
		if low = strings.Join(keep, ", "); strings.TrimSpace(low) == "" {
			return nil, evs
		}
	}
	hasAmount := reAmount.MatchString(low)
	switch {
	case reOweThem.MatchString(low):
		return mk(KindDebt, "addressee", "owe me"+reOweThem.FindStringSubmatch(low)[3]), evs
	case reOweMe.MatchString(low):
		return mk(KindDebt, "speaker", "owe you"+reOweMe.FindStringSubmatch(low)[3]), evs
	case reAskMoney.MatchString(low) && (hasAmount || strings.Contains(low, "back") || strings.Contains(low, "money")):
		m := reAskMoney.FindStringSubmatch(low)
		return mk(KindDebt, "addressee", m[4]+" me"+m[5]+m[6]), evs
	case rePayBack.MatchString(low):
		m := rePayBack.FindStringSubmatch(low)
		if hasAmount || strings.Contains(m[4], "back") || strings.Contains(m[4], "money") || m[2] != "send" && m[2] != "get" {
			return mk(KindDebt, "speaker", m[2]+" you"+m[4]), evs
		}
		return mk(KindPromise, "speaker", m[2]+" you"+m[4]), evs
	}
	if m := reOffer.FindStringSubmatch(low); m != nil && s.quest {
		c := mk(KindPromise, "speaker", m[2]+m[3])
		c.offer = true
		return c, evs
	}
	if m := reChance.FindStringSubmatch(low); m != nil {
		return mk(KindRequest, "addressee", m[7]), evs
	}
	if m := reCanWe.FindStringSubmatch(low); m != nil && !notPlanVerbs[m[2]] {
		return mk(KindPlan, "both", m[2]+m[3]), evs
	}
	if m := reRequest.FindStringSubmatch(low); m != nil && !notRequestVerb[m[4]] && !strings.HasPrefix(low, "thank") {
		if planVerbs[m[4]] {
			return mk(KindPlan, "both", m[4]+m[5]), evs
		}
		return mk(KindRequest, "addressee", m[4]+m[5]), evs
	}
	if m := rePlease.FindStringSubmatch(low); m != nil && (m[11] == "" || !reCourtesy.MatchString(m[12])) {
		what := strings.Join(slices.DeleteFunc([]string{m[2] + m[3], m[6], m[8], m[10], m[11] + m[12]}, func(s string) bool { return s == "" }), " ")
		return mk(KindRequest, "addressee", what), evs
	}
	for _, clause := range strings.Split(low, ", ") {
		if m := reImper.FindStringSubmatch(strings.TrimSpace(clause)); m != nil && !s.quest {
			return mk(KindRequest, "addressee", m[1]+" "+m[2]+m[3]), evs
		}
	}
	if reNeedIt.MatchString(low) {
		return mk(KindRequest, "addressee", low), evs
	}
	if m := reOnIt.FindStringSubmatch(low); m != nil {
		// "on it" alone only accepts (see commitments); with words after
		// it ("on it, you'll have them Thursday") it is a promise.
		if cleanWhat(m[2]) == "" {
			return nil, evs
		}
		return mk(KindPromise, "speaker", strings.TrimSpace(m[2])), evs
	}
	if m := rePromise.FindStringSubmatch(low); m != nil && !notPromiseVerb[m[2]] && !s.quest && (m[2] != "be" || beCommitment(m[3])) && !reIdiom.MatchString(m[2]+m[3]) && !askElsewhere(m[2], m[3]) {
		return mk(KindPromise, "speaker", m[2]+m[3]), evs
	}
	if m := reBareWill.FindStringSubmatch(low); m != nil && m[2] != "you" && m[2] != "u" && m[2] != "we" && !notPromiseVerb[m[2]] && !s.quest {
		return mk(KindPromise, "speaker", m[2]+m[3]), evs
	}
	if m := reLetMe.FindStringSubmatch(low); m != nil {
		c := mk(KindPromise, "speaker", m[1]+m[2])
		// "let me check" defers an answer; it accepts nothing.
		c.deferral = m[1] == "check" || m[1] == "look" || m[1] == "ask" || m[1] == "find"
		return c, evs
	}
	if m := rePlanLets.FindStringSubmatch(low); m != nil && !notPlanVerbs[m[2]] && !cheer(m[2], m[3]) {
		return mk(KindPlan, "both", m[2]+m[3]), evs
	}
	if m := reInvite.FindStringSubmatch(low); m != nil && s.quest {
		return mk(KindPlan, "both", m[2]+m[3]), evs
	}
	if hasActivity(low) && (s.quest || reSeeYou.MatchString(low) || reConfirm.MatchString(low)) {
		return mk(KindPlan, "both", low), evs
	}
	if reConfirm.MatchString(low) {
		// "booked Marufuku for Thursday at 8": confirms a plan in the
		// works; it makes none of its own.
		return &cand{kind: planRefine, owner: "both", what: cleanWhat(low), sent: s}, evs
	}
	if reSeeYou.MatchString(low) {
		return mk(KindPlan, "both", low), evs
	}
	return nil, evs
}

// beCommitment reports whether "I'll be …" commits to something ("be
// there at 7", "be back by 5") rather than describing a state ("be
// offline today").
func beCommitment(rest string) bool {
	for _, p := range []string{" there", " back", " on time", " ready", " home by", " at "} {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}

func hasActivity(low string) bool {
	for _, w := range tokens(low) {
		if slices.Contains(activities, w) {
			return true
		}
	}
	return false
}

// cleanWhat trims a clause for display.
func cleanWhat(s string) string {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), ",;:-–—"))
	s = strings.TrimRight(s, ".!?… ")
	return clip(s, 120)
}

// parseAmount reads the first sum of money of a sentence.
func parseAmount(low string) *Amount {
	m := reAmount.FindStringSubmatch(low)
	if m == nil {
		return nil
	}
	var whole, frac, cur string
	if m[1] != "" {
		whole, frac = strings.ReplaceAll(m[2], ",", ""), m[3]
		cur = map[string]string{"$": "USD", "€": "EUR", "£": "GBP"}[m[1]]
	} else {
		whole, frac = m[4], m[5]
		cur = map[string]string{"dollars": "USD", "bucks": "USD", "usd": "USD", "euro": "EUR", "euros": "EUR", "eur": "EUR", "pounds": "GBP", "quid": "GBP"}[m[6]]
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > 1e12 {
		return nil
	}
	cents := w * 100
	if frac != "" {
		f, _ := strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
		cents += f
	}
	return &Amount{Text: strings.TrimSpace(m[0]), Cents: cents, Currency: cur}
}

// commitments applies a direct message to the commitments: it settles
// open ones and records new ones. It reports whether the message made,
// accepted or settled one.
func (d *Dossier) commitments(m *Message, f textInfo, loc *time.Location) bool {
	speaker, other := "them", "me"
	if m.FromMe {
		speaker, other = "me", "them"
	}
	touched := false
	var cands []*cand
	var evs []event
	for _, s := range ownWords(m.Text, f) {
		c, e := analyzeSentence(s)
		if c != nil {
			cands = append(cands, c)
		}
		evs = append(evs, e...)
	}
	if strings.Contains(m.App, "PeerPayment") {
		evs = append(evs, evPaid)
	}
	amount := parseAmount(apostrophes.Replace(strings.ToLower(m.Text)))

	if d.answerInfo(m, f, speaker, loc) {
		touched = true
	}
	// "found it, I'll drop it off saturday": a step reported along with a
	// promise accepts the request the promise answers; it does not settle
	// it.
	var accepting *Commitment
	if len(cands) > 0 && cands[0].owner == "speaker" && !cands[0].deferral && cands[0].kind == KindPromise {
		accepting = d.acceptTarget(m, speaker, other)
	}
	// Settle first: "sent! venmo'd you $40" closes a debt, it opens none.
	settled := map[event]bool{}
	for _, e := range evs {
		if settled[e] {
			continue
		}
		if d.settle(e, speaker, other, m, f, amount, accepting) {
			settled[e], touched = true, true
		}
	}
	// A reply such as "yes! will bring it Thursday" accepts the request it
	// answers instead of making a new promise.
	accepted := false
	if settled[evAccept] || len(cands) > 0 && cands[0].owner == "speaker" && !cands[0].deferral && (cands[0].kind == KindPromise || cands[0].kind == KindDebt) {
		if c := d.acceptTarget(m, speaker, other); c != nil {
			c.Accepted = true
			c.Sources = appendUnique(c.Sources, m.ID)
			c.Updated = m.Time
			for _, cd := range cands {
				if due := parseDue(cd.sent.low, m.Time, loc); due != nil {
					c.Due = refined(c, due, loc)
					break
				}
			}
			accepted, touched = true, true
		}
	}
	if accepted {
		cands = slices.DeleteFunc(cands, func(c *cand) bool {
			return c.owner == "speaker" && (c.kind == KindPromise || c.kind == KindDebt)
		})
	}
	// One message makes at most one commitment of a kind and owner ("Did
	// you get a chance to look at the numbers? I need them before 3").
	cands = slices.CompactFunc(cands, func(a, b *cand) bool { return a.kind == b.kind && a.owner == b.owner })
	for i, cd := range cands {
		if cd.kind == planRefine {
			if d.refinePlan(m, parseDue(cd.sent.low, m.Time, loc), planMerge, loc) {
				touched = true
			}
			continue
		}
		if cd.kind == KindPromise && cd.owner == "speaker" && !cd.deferral {
			if r := d.restated(m, speaker, cd.what); r != nil {
				r.Mentions = appendUnique(r.Mentions, m.ID)
				r.Updated = m.Time
				touched = true
				continue
			}
		}
		owner := map[string]string{"speaker": speaker, "addressee": other, "both": "both"}[cd.owner]
		c := Commitment{
			ID: fmt.Sprintf("%s#%d", m.ID, i), Kind: cd.kind, Owner: owner, By: speaker,
			Text: clip(cd.sent.text, 200), What: cd.what, Due: parseDue(cd.sent.low, m.Time, loc),
			Amount: parseAmount(cd.sent.low), Status: StatusOpen, Created: m.Time, Updated: m.Time, Sources: []string{m.ID},
		}
		if c.Kind == KindPlan && c.Due == nil && (!strings.Contains(cd.sent.low, "let") || reSometime.MatchString(cd.sent.low)) {
			// An activity without a date is chat, not a plan; so is "we
			// should go to that pottery class sometime".
			continue
		}
		if d.merge(&c, loc) {
			touched = true
			continue
		}
		if cd.offer {
			if d.State.Offers == nil {
				d.State.Offers = map[string]bool{}
			}
			d.State.Offers[c.ID] = true
		}
		d.Commitments = append(d.Commitments, c)
		touched = true
	}
	if !touched && len(cands) == 0 && f.words <= 8 {
		// "thursday works! 7:30?": a short message that only names a date
		// refines the plan being made.
		for _, st := range f.sentences {
			if due := parseDue(st.low, m.Time, loc); due != nil {
				touched = d.refinePlan(m, due, acceptWindow, loc)
				break
			}
		}
	}
	if !touched && amount != nil {
		// "just a reminder about the $40": a mention of an open debt.
		for i := len(d.Commitments) - 1; i >= 0; i-- {
			if d.tooOld(i, m.Time) {
				break
			}
			c := &d.Commitments[i]
			if c.Status == StatusOpen && c.Amount != nil && c.Amount.Cents == amount.Cents {
				c.Mentions = appendUnique(c.Mentions, m.ID)
				c.Updated = m.Time
				touched = true
				break
			}
		}
	}
	if !touched && f.question && len(cands) == 0 {
		// "just checking, any thoughts on round 1 dates?": a question
		// about an open commitment of the other side is a nudge, a
		// mention of it.
		for i := len(d.Commitments) - 1; i >= 0; i-- {
			if d.tooOld(i, m.Time) {
				break
			}
			c := &d.Commitments[i]
			if c.Status == StatusOpen && c.Owner == other && m.Time.Sub(c.Updated) <= relateWindow && overlap(f.tokens, c.What) > 0 {
				c.Mentions = appendUnique(c.Mentions, m.ID)
				c.Updated = m.Time
				touched = true
				break
			}
		}
	}
	return touched
}

// nudged reports whether c's newest mention is among the last few
// messages.
func (d *Dossier) nudged(c *Commitment) bool {
	if len(c.Mentions) == 0 {
		return false
	}
	last := c.Mentions[len(c.Mentions)-1]
	return slices.ContainsFunc(d.State.Recent, func(r recentMessageInfo) bool { return r.ID == last })
}

// acceptTarget finds the open request or debt of the other side that a
// reply accepts: the message it replies to inline, or a recent one of the
// last few messages.
func (d *Dossier) acceptTarget(m *Message, speaker, other string) *Commitment {
	for i := len(d.Commitments) - 1; i >= 0; i-- {
		if d.tooOld(i, m.Time) {
			break
		}
		c := &d.Commitments[i]
		// One already accepted is not accepted again: a later "I'll find
		// a slot next week" is a new promise, "I'll send them by
		// thursday" a restatement (restated).
		if c.Status != StatusOpen || c.Accepted || c.By != other || (c.Owner != speaker && c.Owner != "both" && !d.State.Offers[c.ID]) {
			continue
		}
		if m.ReplyTo != "" && slices.Contains(c.Sources, m.ReplyTo) {
			return c
		}
		if m.Time.Sub(c.Updated) > relateWindow {
			continue
		}
		// Among the last few messages of the conversation, however old.
		for _, r := range d.State.Recent {
			if slices.Contains(c.Sources, r.ID) {
				return c
			}
		}
	}
	return nil
}

// infoKinds are what an information request asks for, with a test that a
// reply delivers it.
var (
	reStreet   = regexp.MustCompile(`\b\d+[a-z]? [a-z][a-z .']* (st|street|ave|avenue|rd|road|blvd|lane|ln|way|dr|drive|ct|court|pl|place)\b`)
	rePhoneNum = regexp.MustCompile(`\+?\d[\d\-. ()]{7,}\d`)
)

// answerInfo settles an open request for information (an address, dates,
// a number, a link) when the person asked replies with one within
// acceptWindow: "send me mom's address?" → "44 Elm St".
func (d *Dossier) answerInfo(m *Message, f textInfo, speaker string, loc *time.Location) bool {
	low := apostrophes.Replace(strings.ToLower(m.Text))
	for i := len(d.Commitments) - 1; i >= 0; i-- {
		if d.tooOld(i, m.Time) {
			break
		}
		c := &d.Commitments[i]
		if c.Status != StatusOpen || c.Kind != KindRequest || c.Owner != speaker || m.Time.Sub(c.Created) > acceptWindow {
			continue
		}
		w := " " + strings.ToLower(c.What) + " "
		var ok bool
		switch {
		case strings.Contains(w, "address"):
			ok = reStreet.MatchString(low) || strings.Contains(low, "@")
		case strings.Contains(w, " dates ") || strings.Contains(w, " date ") || strings.Contains(w, " time "):
			ok = parseDue(low, m.Time, loc) != nil
		case strings.Contains(w, " number "):
			ok = rePhoneNum.MatchString(low)
		case strings.Contains(w, " link "):
			ok = strings.Contains(low, "http")
		}
		if ok {
			c.Status, c.Resolution, c.Resolved = StatusResolved, ResDone, m.Time
			c.ResolvedBy = appendUnique(c.ResolvedBy, m.ID)
			return true
		}
	}
	return false
}

// refinePlan gives the newest open plan (made within window) a more
// precise date from a later message, and cites it. An evening plan
// ("dinner") reads "7:30" as p.m.
func (d *Dossier) refinePlan(m *Message, due *Due, window time.Duration, loc *time.Location) bool {
	for i := len(d.Commitments) - 1; i >= 0; i-- {
		if d.tooOld(i, m.Time) {
			break
		}
		c := &d.Commitments[i]
		if c.Kind != KindPlan || c.Status != StatusOpen {
			if window == acceptWindow {
				return false // a bare date only refines the newest commitment
			}
			continue
		}
		if m.Time.Sub(c.Created) > window {
			return false
		}
		if due != nil {
			due = refined(c, due, loc)
			if c.Due == nil || rank(due) >= rank(c.Due) || within(due, c.Due) {
				c.Due = due
			}
		}
		c.Sources = appendUnique(c.Sources, m.ID)
		c.Updated = m.Time
		return true
	}
	return false
}

// reinterpretOrdinal reads "the 20th" in the month of a plan's period
// ("in January", "Jan 19–22") rather than the current month.
func reinterpretOrdinal(n, period *Due, loc *time.Location) *Due {
	if n == nil || period == nil || (period.Precision != "month" && period.Precision != "days") {
		return n
	}
	day, ok := dates.OrdinalDay(n.Phrase)
	if !ok {
		return n
	}
	ps := period.Start.In(loc)
	t := time.Date(ps.Year(), ps.Month(), day, 0, 0, 0, 0, loc)
	if t.Before(period.Start) || !t.Before(period.End) {
		return n
	}
	out := *n
	out.Start, out.End, out.Precision = t, t.AddDate(0, 0, 1), "day"
	return &out
}

// within reports whether a falls inside b's period.
func within(a, b *Due) bool {
	return !a.Start.Before(b.Start) && !a.End.After(b.End)
}

// merge folds a new commitment into an open one it repeats: a plan for the
// same day, within the same period, or for the same activity; a debt of
// the same amount. It reports whether it did.
func (d *Dossier) merge(n *Commitment, loc *time.Location) bool {
	for i := len(d.Commitments) - 1; i >= 0; i-- {
		if d.tooOld(i, n.Created) {
			break
		}
		c := &d.Commitments[i]
		if c.Status != StatusOpen || c.Kind != n.Kind {
			continue
		}
		switch n.Kind {
		case KindPlan:
			if n.Created.Sub(c.Created) > planMerge {
				continue
			}
			due := reinterpretOrdinal(n.Due, c.Due, loc)
			same := c.Due != nil && due != nil && (sameDay(c.Due.Start, due.Start) || within(due, c.Due) && c.Due.Precision != "day" && c.Due.Precision != "time")
			if !same && sharedActivity(c.Text, n.Text) && (c.Due == nil || due == nil || c.Due.Precision == "week" || due.Precision == "week") {
				same = true
			}
			if !same {
				continue
			}
			c.Sources = appendUnique(c.Sources, n.Sources...)
			c.Updated = n.Created
			if due != nil && (c.Due == nil || rank(due) >= rank(c.Due)) {
				c.Due = due // the newer, at least as precise date wins
			}
			return true
		case KindDebt:
			if n.Amount != nil && c.Amount != nil && n.Amount.Cents == c.Amount.Cents && n.Owner == c.Owner {
				c.Mentions = appendUnique(c.Mentions, n.Sources...)
				c.Updated = n.Created
				return true
			}
		}
	}
	return false
}

func rank(d *Due) int {
	return map[string]int{"month": 0, "week": 1, "weekend": 2, "days": 2, "day": 3, "time": 4}[d.Precision]
}

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

func sharedActivity(a, b string) bool {
	ta, tb := tokens(strings.ToLower(a)), tokens(strings.ToLower(b))
	for _, w := range ta {
		if slices.Contains(activities, w) && slices.Contains(tb, w) {
			return true
		}
	}
	return false
}

// settle applies an event of the speaker to the open commitments. It
// reports whether one was settled (or, for evAccept, nothing: acceptance
// is handled by the caller and reported true when a target exists).
func (d *Dossier) settle(e event, speaker, other string, m *Message, f textInfo, amount *Amount, accepting *Commitment) bool {
	var ok func(c *Commitment) bool
	res := string(e)
	switch e {
	case evAccept:
		return d.acceptTarget(m, speaker, other) != nil
	case evPaid:
		ok = func(c *Commitment) bool { return c.Kind == KindDebt && c.Owner == speaker }
		res = ResPaid
	case evDone, evDoneWeak:
		ok = func(c *Commitment) bool {
			return (c.Kind == KindPromise || c.Kind == KindRequest) && c.Owner == speaker
		}
		res = ResDone
	case evReceived:
		ok = func(c *Commitment) bool { return c.Owner == other && c.Kind != KindPlan }
		res = ResReceived
	case evDeclined:
		ok = func(c *Commitment) bool {
			return (c.Kind == KindRequest || c.Kind == KindPlan) && c.By == other && (c.Owner == speaker || c.Owner == "both")
		}
		res = ResDeclined
	case evCancel:
		ok = func(c *Commitment) bool { return c.By == speaker || c.Kind == KindPlan }
		res = ResCancelled
	}
	best, bestScore := -1, 0
	for i := len(d.Commitments) - 1; i >= 0; i-- {
		if d.tooOld(i, m.Time) {
			break
		}
		c := &d.Commitments[i]
		if c.Status != StatusOpen || !ok(c) || slices.Contains(c.Sources, m.ID) || c == accepting && (e == evDone || e == evDoneWeak) {
			continue
		}
		age := m.Time.Sub(c.Created)
		if age > relateWindow {
			continue
		}
		score := 0
		if m.ReplyTo != "" && slices.Contains(c.Sources, m.ReplyTo) {
			score += 3
		}
		if amount != nil && c.Amount != nil && amount.Cents == c.Amount.Cents {
			score += 3
		}
		shared := overlap(f.tokens, c.What)
		if e == evDoneWeak && !pastVerbMatches(f, c.What) {
			continue // "swamped, I'll review it" reports nothing done
		}
		score += min(2, shared)
		// Recency counts from the last time the commitment came up (an
		// acceptance, a reminder), not only from when it was made.
		recent := m.Time.Sub(c.Updated) <= genericWindow
		if e == evPaid {
			recent = true // a payment settles a debt of any age
		}
		if score == 0 && !recent {
			continue // a bare "done" only settles something recent
		}
		if recent {
			score++
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		if e == evReceived || e == evPaid {
			// "got it, thank you!!" right after the payment: it confirms
			// the settlement.
			for i := len(d.Commitments) - 1; i >= 0; i-- {
				if d.tooOld(i, m.Time) {
					break
				}
				c := &d.Commitments[i]
				if c.Status == StatusResolved && c.Owner == other && m.Time.Sub(c.Resolved) <= 24*time.Hour {
					c.ResolvedBy = appendUnique(c.ResolvedBy, m.ID)
					return true
				}
			}
		}
		return false
	}
	c := &d.Commitments[best]
	c.Status, c.Resolution, c.Resolved = StatusResolved, res, m.Time
	c.ResolvedBy = appendUnique(c.ResolvedBy, m.ID)
	return true
}

// overlap counts content words shared by a message and a commitment's
// what-clause.
func overlap(msg []string, what string) int {
	n := 0
	seen := map[string]bool{}
	for _, w := range tokens(what) {
		if !contentWord(w, nil) {
			continue
		}
		w = stem(w)
		if seen[w] {
			continue
		}
		seen[w] = true
		for _, x := range msg {
			if stem(x) == w {
				n++
				break
			}
		}
	}
	return n
}

// pastVerbMatches reports whether a clause of the message opens with a
// past-tense verb and shares a word with the commitment's what-clause:
// "reviewed it" for "review my PR", "dropped the tent off" for "lend me
// your tent"; "swamped" alone shares nothing.
func pastVerbMatches(f textInfo, what string) bool {
	for _, st := range f.sentences {
		for _, cl := range strings.Split(st.low, ", ") {
			cl = strings.TrimSpace(cl)
			if rePastDone.MatchString(cl) && overlap(tokens(cl), what) > 0 {
				return true
			}
		}
	}
	return false
}

// maxLookback bounds how far back a message looks for the commitment it
// settles, accepts or repeats, so folding stays linear in long histories.
const maxLookback = 2 * relateWindow

// tooOld reports whether commitment i (and every older one, since they are
// kept in creation order) was made more than maxLookback before t.
func (d *Dossier) tooOld(i int, t time.Time) bool {
	return t.Sub(d.Commitments[i].Created) > maxLookback
}

// stem folds plurals and the common verb endings ("reviewed", "booking")
// for matching words between messages.
func stem(w string) string {
	w = singular(w)
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		return w[:len(w)-2]
	}
	return w
}

func appendUnique(s []string, vs ...string) []string {
	for _, v := range vs {
		if !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	return s
}

// goWhere are the words after "let's go" that make it a plan: a
// destination, an errand or a time ("let's go to the market", "let's go
// out saturday", "let's go tomorrow").
var goWhere = map[string]bool{"to": true, "for": true, "out": true, "get": true, "grab": true, "see": true, "back": true,
	"home": true, "somewhere": true, "there": true, "together": true, "on": true, "at": true, "this": true, "next": true,
	"today": true, "tonight": true, "tomorrow": true, "tmrw": true, "tmr": true, "after": true, "before": true,
	"monday": true, "tuesday": true, "wednesday": true, "thursday": true, "friday": true, "saturday": true, "sunday": true,
	"mon": true, "tue": true, "tues": true, "wed": true, "thu": true, "thurs": true, "fri": true, "sat": true, "sun": true,
	"early": true, "later": true, "now": true, "in": true, "by": true, "around": true}

// cheer reports whether "let's go …" is a cheer ("let's go Giants!!",
// "LETS GOOOO") rather than a plan: "go" stretched, or followed by
// something that is neither a place, an errand, an activity in -ing nor a
// time.
func cheer(verb, rest string) bool {
	if strings.HasPrefix(verb, "go") && strings.Trim(verb, "o") == "g" && verb != "go" {
		return true // "gooo"
	}
	if verb != "go" {
		return false
	}
	ws := tokens(rest)
	if len(ws) == 0 {
		return true
	}
	return !goWhere[ws[0]] && !(len(ws[0]) > 4 && strings.HasSuffix(ws[0], "ing"))
}

// reNotOwn is text the sender quotes or sets aside: a quotation in double
// quotes and an aside in parentheses ("never eating there again (I'll be
// back next week)").
var reNotOwn = regexp.MustCompile(`"[^"\n]*"|\x{201c}[^\x{201d}\n]*\x{201d}|\([^()\n]*\)`)

// ownWords are the sentences of a message that speak for its sender: none
// for a forwarded text ("Fwd: …") or lyrics (music notes), and the others
// without their quotations and asides. Only they make, accept or settle
// commitments (docs/dossier.md "Commitments").
func ownWords(text string, f textInfo) []sentence {
	head := strings.ToLower(strings.TrimSpace(text))
	for _, p := range []string{"fwd:", "fw:", "forwarded", "---------- forwarded", "begin forwarded"} {
		if strings.HasPrefix(head, p) {
			return nil
		}
	}
	if strings.ContainsAny(text, "\U0001F3B5\U0001F3B6\u266A\u266B\u266C") {
		return nil
	}
	if !strings.ContainsAny(text, "\"\u201c(") {
		return f.sentences
	}
	return newTextInfo(reNotOwn.ReplaceAllString(text, " ")).sentences
}

// askElsewhere reports whether "I'll ask …" only turns to someone else
// ("all good, I'll ask Marisol", "I'll ask my boss"): like "let me ask", it
// defers. "I'll ask him to check yours too" commits to an errand for the
// owner.
func askElsewhere(verb, rest string) bool {
	return verb == "ask" && !strings.Contains(rest, " to ") && !strings.Contains(rest, " for ") && !strings.Contains(rest, " about ")
}

// pronounObject reports whether a promise's what-clause names its object
// by a pronoun ("send them by thursday", "do it tonight"): it points back
// at something already said.
func pronounObject(what string) bool {
	ws := tokens(strings.ToLower(what))
	if len(ws) < 2 {
		return false
	}
	switch ws[1] {
	case "it", "them", "that", "those", "this", "these", "'em", "em":
		return true
	}
	return false
}

// restated finds the open commitment a speaker's promise repeats: one the
// speaker owns, made or accepted by them, that came up within
// relateWindow, and that the promise points back at by a pronoun right
// after the other side asked about it ("sorry! I'll send them by
// thursday" after "any thoughts on the dates?") or shares a
// word with ("I'll send you my notes on the writeup tonight" for "please
// review the writeup"). The repetition is a mention, not a second
// commitment; the date stays the one first named (docs/dossier.md
// "Commitments").
func (d *Dossier) restated(m *Message, speaker, what string) *Commitment {
	pronoun := pronounObject(what)
	ws := tokens(strings.ToLower(what))
	for i := len(d.Commitments) - 1; i >= 0; i-- {
		if d.tooOld(i, m.Time) {
			break
		}
		c := &d.Commitments[i]
		if c.Status != StatusOpen || c.Owner != speaker || c.Kind == KindPlan || m.Time.Sub(c.Updated) > relateWindow {
			continue
		}
		if (c.By == speaker || c.Accepted) && (pronoun && d.nudged(c) || overlap(ws, c.What) > 0) {
			return c
		}
	}
	return nil
}

// reClockOnly is a due phrase that names only a clock time.
var reClockOnly = regexp.MustCompile(`^(at |by |around |about )?(\d{1,2}(:\d{2})?\s*(am|pm|a\.m\.|p\.m\.)?|noon|midday|midnight)$`)

// onDayOf reads a bare clock time that refines a dated commitment ("lunch
// friday?" → "noon?", "climbing wednesday?" → "6:30?") on that
// commitment's day, not at the next such hour after the reply.
func onDayOf(n, prev *Due, loc *time.Location) *Due {
	if n == nil || prev == nil || n.Precision != "time" || (prev.Precision != "day" && prev.Precision != "time") || !reClockOnly.MatchString(strings.TrimSpace(n.Phrase)) {
		return n
	}
	ps, ns := prev.Start.In(loc), n.Start.In(loc)
	t := time.Date(ps.Year(), ps.Month(), ps.Day(), ns.Hour(), ns.Minute(), 0, 0, loc)
	out := *n
	out.Start, out.End = t, t.Add(n.End.Sub(n.Start))
	return &out
}

// refined reads a date that refines c: "the 20th" inside c's month, a bare
// clock time on c's day, and "7:30" as p.m. for an evening plan (dinner,
// drinks, tonight).
func refined(c *Commitment, due *Due, loc *time.Location) *Due {
	due = onDayOf(reinterpretOrdinal(due, c.Due, loc), c.Due, loc)
	if due.Precision == "time" && due.Start.In(loc).Hour() >= 7 && due.Start.In(loc).Hour() <= 11 && !strings.Contains(due.Phrase, "am") {
		if dates.Evening(strings.ToLower(c.Text)) {
			shifted := *due
			shifted.Start, shifted.End = due.Start.Add(12*time.Hour), due.End.Add(12*time.Hour)
			due = &shifted
		}
	}
	return due
}
