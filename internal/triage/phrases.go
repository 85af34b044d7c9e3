package triage

import "strings"

// Phrase sets recognised by matchPhrases.
const (
	setRequest = iota
	setProposal
	setRSVP
	setCollective
	setCancel
	setDeferral
	setUrgent
	setSocial
	setFraud
	setCodeContext
	setRhetorical
	setExclaim
	setWordyAsk
	setEveryone
	numSets
)

// phrase is one entry of the word-level phrase index.
type phrase struct {
	words []string
	set   int // -1 for an automated-sender phrase
	auto  int // index into autoPhrases when set == -1
	// notBefore: the phrase does not count when followed by this word
	// ("can you" + "believe").
	notBefore string
}

// phraseIndex maps a phrase's first word to the phrases starting with it,
// so a message is matched in one pass over its words instead of one
// substring search per phrase.
var (
	phrases     []phrase
	phraseIndex = map[string][]int{}
	apostrophes = strings.NewReplacer("\u2019", "'", "\u2018", "'")
)

func addPhrases(set int, list []string) {
	for _, p := range list {
		ph := phrase{words: strings.Fields(p), set: set}
		if set == setRequest && p == " can you " {
			ph.notBefore = "believe"
		}
		phraseIndex[ph.words[0]] = append(phraseIndex[ph.words[0]], len(phrases))
		phrases = append(phrases, ph)
	}
}

func init() {
	addPhrases(setRequest, requestPhrases)
	addPhrases(setProposal, proposalPhrases)
	addPhrases(setRSVP, rsvpPhrases)
	addPhrases(setCollective, collectivePhrases)
	addPhrases(setCancel, cancelPhrases)
	addPhrases(setDeferral, deferralPhrases)
	addPhrases(setUrgent, urgentPhrases)
	addPhrases(setSocial, socialPhrases)
	addPhrases(setFraud, fraudPhrases)
	addPhrases(setCodeContext, codeContext)
	addPhrases(setRhetorical, rhetorical)
	addPhrases(setExclaim, exclaims)
	addPhrases(setWordyAsk, wordyAsks)
	addPhrases(setEveryone, everyonePhrases)
	for i, p := range autoPhrases {
		ph := phrase{words: strings.Fields(p.p), set: -1, auto: i}
		phraseIndex[ph.words[0]] = append(phraseIndex[ph.words[0]], len(phrases))
		phrases = append(phrases, ph)
	}
	if len(autoPhrases) > 256 {
		panic("triage: more automated phrases than the match bitset holds")
	}
}

// phraseMatch is what matchPhrases found.
type phraseMatch struct {
	sets       uint32
	autoSeen   [4]uint64 // automated phrases already counted
	autoCats   autoCat
	strongCats autoCat // categories with a strong phrase
	autoScore  int
	strongAuto bool
}

func (m *phraseMatch) has(set int) bool { return m.sets&(1<<set) != 0 }

// matchPhrases finds every known phrase in words. Each automated phrase
// counts once, however often it occurs.
func matchPhrases(words []string) phraseMatch {
	var m phraseMatch
	for i, w := range words {
		for _, id := range phraseIndex[w] {
			p := &phrases[id]
			if i+len(p.words) > len(words) {
				continue
			}
			ok := true
			for k := 1; k < len(p.words); k++ {
				if words[i+k] != p.words[k] {
					ok = false
					break
				}
			}
			if !ok || p.notBefore != "" && i+len(p.words) < len(words) && words[i+len(p.words)] == p.notBefore {
				continue
			}
			if p.set >= 0 {
				m.sets |= 1 << p.set
				continue
			}
			if m.autoSeen[p.auto/64]&(1<<(p.auto%64)) != 0 {
				continue
			}
			m.autoSeen[p.auto/64] |= 1 << (p.auto % 64)
			a := autoPhrases[p.auto]
			m.autoCats |= a.cat
			if a.strong {
				m.autoScore += 2
				m.strongAuto = true
				m.strongCats |= a.cat
			} else {
				m.autoScore++
			}
		}
	}
	return m
}
