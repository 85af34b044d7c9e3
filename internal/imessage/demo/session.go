package demo

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/typedstream"
)

var effects = []string{
	"com.apple.messages.effect.CKConfettiEffect", "com.apple.messages.effect.CKFireworksEffect",
	"com.apple.messages.effect.CKHeartEffect", "com.apple.messages.effect.CKBalloonsEffect",
	"com.apple.MobileSMS.expressivesend.loud", "com.apple.MobileSMS.expressivesend.gentle",
}

var tapbackEmoji = []string{"🔥", "🥹", "🫶", "👀", "🙏", "😮‍💨", "🍕"}

// pickThread draws a thread by weight; inside the story window storyline
// threads get no filler, so their recent history is exactly the script.
func (g *gen) pickThread(storyWindow bool) *thread {
	total := 0
	for _, th := range g.thr {
		if storyWindow && th.story {
			continue
		}
		total += th.weight
	}
	n := g.r.IntN(total)
	for _, th := range g.thr {
		if storyWindow && th.story {
			continue
		}
		if n < th.weight {
			return th
		}
		n -= th.weight
	}
	return g.thr[len(g.thr)-1]
}

// candidates returns the dialogues suited to a thread.
func (g *gen) candidates(th *thread) []*dialogue {
	var out []*dialogue
	for i := range dialogues {
		d := &dialogues[i]
		if th.group && d.where == 0 || !th.group && d.where == 2 {
			continue
		}
		if strings.Contains(" "+d.roles+" ", " "+th.role+" ") {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		for i := range dialogues {
			if dialogues[i].where != 2 && strings.Contains(dialogues[i].roles, "acquaintance") {
				out = append(out, &dialogues[i])
			}
		}
	}
	return out
}

func firstName(key string) string {
	if key == "me" {
		return Owner.First
	}
	p := personByKey(key)
	if p.First == "" {
		return p.Org
	}
	return p.First
}

// fillerDay generates exactly quota messages for one day.
func (g *gen) fillerDay(day time.Time, quota int, storyWindow, recent bool) []*outMsg {
	var out []*outMsg
	for len(out) < quota {
		th := g.pickThread(storyWindow)
		if th.auto {
			out = append(out, g.automated(th, day))
			continue
		}
		out = g.session(out, th, day, quota, recent)
	}
	return out
}

// automated writes one short-code message, with a one-time-code run when
// the text carries a code.
func (g *gen) automated(th *thread, day time.Time) *outMsg {
	key := th.members[0]
	tmpls := automatedTexts[key]
	tmpl := tmpls[g.r.IntN(len(tmpls))]
	code := digits(g.r, 6)
	text := fill(g.r, strings.ReplaceAll(tmpl, "{code}", code), nil)
	at := day.Add(time.Duration(7*3600+g.r.IntN(15*3600)) * time.Second)
	m := &outMsg{th: th, guid: uuid(g.r, at), from: key, t: at, text: text}
	if strings.Contains(tmpl, "{code}") {
		m.runs, _ = buildRuns(text, []runSpec{{sub: code, kind: "otc"}})
	}
	return m
}

// session appends one filler conversation (truncated at quota).
func (g *gen) session(out []*outMsg, th *thread, day time.Time, quota int, recent bool) []*outMsg {
	cands := g.candidates(th)
	dl := cands[g.r.IntN(len(cands))]
	if dl.lines[0] == "A: {photo}" && g.r.IntN(3) != 0 {
		dl = cands[g.r.IntN(len(cands))] // photos are rarer than a template's share
	}
	speakers := map[string]string{}
	if th.group {
		ps := append([]string{"me"}, th.members...)
		g.r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		speakers["A"], speakers["B"], speakers["C"] = ps[0], ps[1], ps[2%len(ps)]
	} else {
		other := th.members[0]
		if g.r.IntN(2) == 0 {
			speakers["A"], speakers["B"] = "me", other
		} else {
			speakers["A"], speakers["B"] = other, "me"
		}
		speakers["C"] = speakers["B"]
	}
	names := map[string]string{"A": firstName(speakers["A"]), "B": firstName(speakers["B"]), "C": firstName(speakers["C"])}
	t := day.Add(time.Duration((8+g.r.IntN(14))*3600+g.r.IntN(3600)) * time.Second)
	var sess []*outMsg
	add := func(m *outMsg) {
		out = append(out, m)
		sess = append(sess, m)
	}
	for i, raw := range dl.lines {
		if len(out) >= quota {
			break
		}
		if !th.group && raw[:1] == "C" {
			continue // a third voice only exists in groups
		}
		from := speakers[raw[:1]]
		line := pick(g.r, strings.TrimSpace(raw[2:]))
		m := &outMsg{th: th, guid: uuid(g.r, t), from: from, t: t}
		switch {
		case line == "{photo}":
			m.photo = fmt.Sprintf("IMG_%04d.jpeg", 1000+g.r.IntN(9000))
			m.text = captions[g.r.IntN(len(captions))]
		case strings.Contains(line, "{link}"):
			url := links[g.r.IntN(len(links))]
			text := fill(g.r, strings.Replace(line, "{link}", url, 1), names)
			if g.r.IntN(3) == 0 {
				text = url // a bare link, shown as a rich link balloon
				m.balloon = "com.apple.messages.URLBalloonProvider"
			}
			m.text = text
			m.runs, _ = buildRuns(text, []runSpec{{sub: url, kind: "link", value: url}})
		default:
			m.text = fill(g.r, line, names)
		}
		if th.group && len(th.members) > 1 && m.photo == "" && m.runs == nil && g.r.IntN(25) == 0 {
			// An @mention of another member.
			for _, k := range th.members {
				if k != from {
					name := firstName(k)
					m.text = name + ", " + m.text
					m.runs = []typedstream.Run{{Start: 0, End: len(name), Part: 0, Mention: personByKey(k).Handle()}, {Start: len(name), End: len(m.text), Part: 0}}
					break
				}
			}
		}
		lower := strings.ToLower(m.text)
		if (strings.Contains(lower, "happy") || strings.Contains(lower, "congrats")) && g.r.IntN(3) == 0 {
			m.effect = effects[g.r.IntN(len(effects))]
		}
		switch {
		case m.photo == "" && m.runs == nil && len(m.text) > 12 && g.r.IntN(250) == 0:
			m.edits, m.editAt = []string{typo(g.r, m.text)}, t.Add(time.Duration(20+g.r.IntN(160))*time.Second)
		case from == "me" && m.photo == "" && g.r.IntN(1500) == 0:
			m.unsent = true
		case from == "me" && g.r.IntN(300) == 0:
			m.failed = true
		}
		if i > 1 && g.r.IntN(50) == 0 {
			if target := sess[g.r.IntN(len(sess))]; target.text != "" && target.assocType == 0 && !target.unsent {
				m.threadGUID, m.threadPart = target.guid, "0:0:"+strconv.Itoa(utf16Len(target.text))
			}
		}
		add(m)
		if m.text != "" && !m.unsent && len(out) < quota && g.r.IntN(16) == 0 {
			g.tapback(add, th, m, &out, quota)
		}
		t = t.Add(time.Duration(15+g.r.IntN(420)) * time.Second)
	}
	if recent {
		// Near now, filler never leaves the owner owing a reply: the last
		// real message of the session (reactions aside) is the owner's.
		var last *outMsg
		for _, m := range sess {
			if m.assocType == 0 {
				last = m
			}
		}
		if last != nil && last.from != "me" {
			if len(out) < quota {
				add(&outMsg{th: th, guid: uuid(g.r, t), from: "me", t: t, text: closers[g.r.IntN(len(closers))]})
			} else {
				// No room left today: the last message becomes the closer.
				m := out[len(out)-1]
				*m = outMsg{th: th, guid: m.guid, from: "me", t: t, text: closers[g.r.IntN(len(closers))]}
			}
		}
	}
	return out
}

// tapback adds a reaction by another participant to m (and, rarely, its
// removal a little later).
func (g *gen) tapback(add func(*outMsg), th *thread, m *outMsg, out *[]*outMsg, quota int) {
	reactor := "me"
	if m.from == "me" {
		reactor = th.members[g.r.IntN(len(th.members))]
	} else if th.group && g.r.IntN(2) == 0 {
		for _, k := range th.members {
			if k != m.from {
				reactor = k
				break
			}
		}
	}
	kinds := []int{2000, 2000, 2001, 2001, 2001, 2003, 2003, 2004, 2005, 2002, 2006}
	kind := kinds[g.r.IntN(len(kinds))]
	at := m.t.Add(time.Duration(5+g.r.IntN(300)) * time.Second)
	r := &outMsg{th: th, guid: uuid(g.r, at), from: reactor, t: at,
		assocType: kind, assocGUID: "p:0/" + m.guid, assocLen: utf16Len(m.text)}
	if kind == 2006 {
		r.assocEmoji = tapbackEmoji[g.r.IntN(len(tapbackEmoji))]
	}
	r.text = reactionText(kind, r.assocEmoji, m.text, m.photo != "")
	add(r)
	if kind < 2006 && len(*out) < quota && g.r.IntN(25) == 0 {
		at := r.t.Add(time.Duration(10+g.r.IntN(120)) * time.Second)
		rm := &outMsg{th: th, guid: uuid(g.r, at), from: reactor, t: at,
			assocType: kind + 1000, assocGUID: r.assocGUID, assocLen: r.assocLen}
		rm.text = reactionText(kind+1000, "", m.text, m.photo != "")
		add(rm)
	}
}

// typo returns text with one plausible slip: two letters swapped in a word.
func typo(r interface{ IntN(int) int }, text string) string {
	words := strings.Fields(text)
	for tries := 0; tries < 5; tries++ {
		i := r.IntN(len(words))
		w := []rune(words[i])
		if len(w) < 4 {
			continue
		}
		j := 1 + r.IntN(len(w)-2)
		w[j], w[j+1] = w[j+1], w[j]
		if string(w) == words[i] {
			continue
		}
		words[i] = string(w)
		return strings.Join(words, " ")
	}
	return text + "."
}
