package dossier

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Topic is a word or two-word phrase's use over the history.
type Topic struct {
	Count     int    `json:"count"`
	Days      int    `json:"days"`   // distinct days it came up
	Months    int    `json:"months"` // distinct months
	LastDay   string `json:"last_day"`
	LastMonth string `json:"last_month"`
	First     Cite   `json:"first"`
	Last      Cite   `json:"last"`
	// Recent cites the newest messages using it (at most maxTopicCites).
	Recent []string `json:"recent"`
}

const (
	maxTopicCites = 3
	maxTopics     = 4000 // state bound; one-off words are pruned first
)

// stopwords are function words and chat filler that never make a topic.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
a about above after again against all almost also am an and any anyone anything are aren't around as at back be
because been before being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't done down during each either else even ever every few for from further get gets getting got gotta
had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how
how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let let's like likely lot lots
made make makes many may maybe me might more most much must my myself need needs never no nor not nothing now
of off oh ok okay on once one only or other ought our ours ourselves out over own pretty quite rather really
right said same say says see seems she she'd she'll she's should shouldn't so some something soon still such
sure than thank thanks that that's the their theirs them themselves then there there's these they they'd
they'll they're they've thing things think this those though through to too totally under until up upon us
very via was wasn't way we we'd we'll we're we've well went were weren't what what's whatever when when's where
where's whether which while who who's whom why why's will with won't would wouldn't yeah yes yet you you'd
you'll you're you've your yours yourself yourselves yep yup nope lol haha hahaha lmao omg btw idk tbh imo
gonna wanna gotta kinda sorta ya yo hey hi hello bye ugh hmm hm ah aw wow cool nice great good awesome
perfect sounds sound fine alright okay ok k kk ty thx pls plz u ur r im ive dont cant wont didnt doesnt isnt
thats whats theres heres youre theyre ill id also again ever even back time today tomorrow tonight yesterday
week weekend day days night morning afternoon evening later now soon last next first new old know knew
want wants wanted going go goes come comes came take took give gave put keep let tell told ask asked feel
feels felt look looks looked looking love loved send sent sending bring brought call called text texted
work works worked working try tried use used mean means thought guess hope glad happy sorry please sure
yes no maybe definitely probably actually literally honestly basically super totally completely exactly
one two three four five six seven eight nine ten monday tuesday wednesday thursday friday saturday sunday
mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec january february
march april june july august september october november december attachment wait already else everyone
anyone someone something anything nothing everything left right little big lot bit mine yours ooh oooh
min mins omw brb ttyl lemme gimme hmmm yay yess yesss nah alright ahh ahhh aww awww
`) {
		stopwords[w] = true
	}
}

// topicTerms returns the distinct content words and adjacent content-word
// pairs of a message.
func topicTerms(tokens []string, skip map[string]bool) []string {
	var terms []string
	seen := map[string]bool{}
	prev := ""
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	for _, w := range tokens {
		if !contentWord(w, skip) {
			prev = ""
			continue
		}
		w = singular(w)
		add(w)
		if prev != "" && prev != w {
			add(prev + " " + w)
		}
		prev = w
	}
	return terms
}

func contentWord(w string, skip map[string]bool) bool {
	if utf8.RuneCountInString(w) < 3 || stopwords[w] || skip[w] {
		return false
	}
	digits := true
	for _, r := range w {
		if r < '0' || r > '9' {
			digits = false
			break
		}
	}
	return !digits && !strings.ContainsAny(w, "'")
}

// singular folds a plain English plural ("tickets" → "ticket").
func singular(w string) string {
	if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
		return w[:len(w)-1]
	}
	return w
}

func (d *Dossier) addTopics(m *Message, f textInfo, day, month string, opts Options) {
	if len(f.tokens) == 0 {
		return
	}
	skip := map[string]bool{}
	for _, n := range append(append([]string{d.Subject.Name, d.Subject.Organization}, d.Subject.Names...), opts.OwnerNames...) {
		for _, w := range strings.Fields(strings.ToLower(n)) {
			skip[w] = true
		}
	}
	if d.State.Topics == nil {
		d.State.Topics = map[string]*Topic{}
	}
	cite := Cite{ID: m.ID, Time: m.Time}
	for _, term := range topicTerms(f.tokens, skip) {
		t := d.State.Topics[term]
		if t == nil {
			t = &Topic{First: cite}
			d.State.Topics[term] = t
		}
		t.Count++
		t.Last = cite
		if t.LastDay != day {
			t.Days++
			t.LastDay = day
		}
		if t.LastMonth != month {
			t.Months++
			t.LastMonth = month
		}
		t.Recent = append(t.Recent, m.ID)
		if len(t.Recent) > maxTopicCites {
			t.Recent = t.Recent[len(t.Recent)-maxTopicCites:]
		}
	}
}

// pruneTopics drops one-off terms when a quarter closes, and the rarest
// ones beyond maxTopics, so the state stays bounded. It runs at the same
// messages in a rebuild as in updates, so both give the same state.
func (d *Dossier) pruneTopics() {
	for k, t := range d.State.Topics {
		if t.Count < 2 {
			delete(d.State.Topics, k)
		}
	}
	if len(d.State.Topics) <= maxTopics {
		return
	}
	keys := make([]string, 0, len(d.State.Topics))
	for k := range d.State.Topics {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ta, tb := d.State.Topics[a], d.State.Topics[b]
		if c := cmp.Compare(tb.Count, ta.Count); c != 0 {
			return c
		}
		if c := tb.Last.Time.Compare(ta.Last.Time); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, k := range keys[maxTopics:] {
		delete(d.State.Topics, k)
	}
}

// TopicView is a recurring topic in a report.
type TopicView struct {
	Term   string   `json:"term"`
	Count  int      `json:"count"`
	Days   int      `json:"days"`
	Months int      `json:"months"`
	First  Cite     `json:"first"`
	Last   Cite     `json:"last"`
	Cites  []string `json:"cites"`
}

// recurringTopics ranks terms that came up at least three times on at
// least two days: count weighted by spread, phrases ahead of their words.
func (d *Dossier) recurringTopics(n int) []TopicView {
	type scored struct {
		term  string
		t     *Topic
		score float64
	}
	var all []scored
	for k, t := range d.State.Topics {
		if t.Count < 3 || t.Days < 2 {
			continue
		}
		s := float64(t.Count) * (1 + math.Log(float64(t.Days)))
		if strings.Contains(k, " ") {
			s *= 1.5
		}
		all = append(all, scored{k, t, s})
	}
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.term, b.term)
	})
	var out []TopicView
	for _, s := range all {
		if len(out) == n {
			break
		}
		covered := false
		for _, o := range out {
			// A word is shown through the phrase that carries most of it.
			if strings.Contains(o.Term, " ") && slices.Contains(strings.Fields(o.Term), s.term) && float64(o.Count) >= 0.6*float64(s.t.Count) {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		out = append(out, TopicView{Term: s.term, Count: s.t.Count, Days: s.t.Days, Months: s.t.Months, First: s.t.First, Last: s.t.Last,
			Cites: slices.Clone(s.t.Recent)})
	}
	return out
}
