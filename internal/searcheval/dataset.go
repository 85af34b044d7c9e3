// Package searcheval measures retrieval quality: a labelled set of queries
// with graded relevance over hand-written conversations mixed with
// generated distractor messages, scored with nDCG@10 and Recall@10 for each
// search mode.
//
// The harness runs against any Searcher, so the same evaluation scores the
// in-package reference (BM25 + an embedder + reciprocal rank fusion) while
// the embedders are developed and the real index (internal/index) once it
// exists. The test suite keeps the evaluation as a regression floor.
package searcheval

import (
	"embed"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

//go:embed testdata/conversations.json testdata/queries.json
var files embed.FS

// Message is one message of the evaluation corpus.
type Message struct {
	ID             string `json:"id"`
	ConversationID string `json:"conversation_id"`
	From           string `json:"from"` // "me" or the sender's name
	Text           string `json:"text"`
}

// Conversation is one thread of the corpus.
type Conversation struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Messages []Message `json:"messages"`
}

// Query is one labelled query. Relevant maps message ids to grades: 3 = the
// answer, 2 = directly about it, 1 = related context; unlisted ids are 0.
type Query struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"` // TypeLexical or TypeParaphrase
	Text     string         `json:"text"`
	Relevant map[string]int `json:"relevant"`
}

// Query types.
const (
	TypeLexical    = "lexical"
	TypeParaphrase = "paraphrase"
)

// Dataset is the evaluation corpus and its queries.
type Dataset struct {
	Conversations []Conversation
	// Distractors are generated messages in conversations "dNN"; none is
	// relevant to any query.
	Distractors []Message
	Queries     []Query
}

// Messages returns every message of the corpus: the hand-written ones in
// conversation order, then the distractors.
func (d *Dataset) Messages() []Message {
	var out []Message
	for _, c := range d.Conversations {
		out = append(out, c.Messages...)
	}
	return append(out, d.Distractors...)
}

// DefaultDistractors is the number of generated distractor messages.
const DefaultDistractors = 3000

// Load returns the embedded dataset with n generated distractors
// (deterministic for a given n).
func Load(n int) (*Dataset, error) {
	var conv struct {
		Conversations []Conversation `json:"conversations"`
	}
	var qs struct {
		Queries []Query `json:"queries"`
	}
	for name, v := range map[string]any{"testdata/conversations.json": &conv, "testdata/queries.json": &qs} {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
	}
	d := &Dataset{Conversations: conv.Conversations, Queries: qs.Queries}
	ids := map[string]bool{}
	for ci := range d.Conversations {
		c := &d.Conversations[ci]
		for mi := range c.Messages {
			m := &c.Messages[mi]
			m.ConversationID = c.ID
			if ids[m.ID] {
				return nil, fmt.Errorf("duplicate message id %s", m.ID)
			}
			ids[m.ID] = true
		}
	}
	for _, q := range d.Queries {
		if q.Type != TypeLexical && q.Type != TypeParaphrase {
			return nil, fmt.Errorf("query %s: unknown type %q", q.ID, q.Type)
		}
		if len(q.Relevant) == 0 {
			return nil, fmt.Errorf("query %s: no relevant messages", q.ID)
		}
		for id, g := range q.Relevant {
			if !ids[id] {
				return nil, fmt.Errorf("query %s: unknown message %s", q.ID, id)
			}
			if g < 1 || g > 3 {
				return nil, fmt.Errorf("query %s: grade %d for %s out of 1..3", q.ID, g, id)
			}
		}
	}
	d.Distractors = Distractors(n)
	return d, nil
}

// Distractors generates n everyday messages from templates, spread over 20
// conversations. They share the corpus's register and much of its
// vocabulary (plans, food, times, errands) so that a search has to rank,
// not merely filter; they were written to avoid the specific facts the
// queries ask about.
func Distractors(n int) []Message {
	rng := rand.New(rand.NewPCG(20261130, 4))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	out := make([]Message, n)
	for i := range out {
		t := pick(templates)
		var b strings.Builder
		for {
			j := strings.IndexByte(t, '{')
			if j < 0 {
				b.WriteString(t)
				break
			}
			k := strings.IndexByte(t[j:], '}') + j
			b.WriteString(t[:j])
			b.WriteString(pick(slots[t[j+1:k]]))
			t = t[k+1:]
		}
		conv := fmt.Sprintf("d%02d", rng.IntN(20))
		from := "me"
		if rng.IntN(2) == 0 {
			from = pick(slots["name"])
		}
		out[i] = Message{ID: fmt.Sprintf("%s.%04d", conv, i), ConversationID: conv, From: from, Text: b.String()}
	}
	return out
}

var templates = []string{
	"running {n} min late, sorry!", "on my way", "omw, {place} in {n}", "want to grab {food} {day}?",
	"can't {day}, how about {day2}?", "did you see {show} last night", "{show} was so good omg", "lol {react}",
	"haha {react}", "ok sounds good", "sure, what time?", "{time} works for me", "see you at {place} at {time}",
	"just got home", "I'm at {place}, where are you", "can you send me the pics from {event}?",
	"happy {event2}!!", "thanks for {favor} yesterday", "no worries", "call me when you're free",
	"are you around {day}?", "I'll be there around {time}", "what are you up to {day}", "heading to {place} now",
	"parking is a nightmare here", "traffic is terrible on the {road}", "the {food} at {place} is amazing",
	"we should try that new {food} place", "I'm so tired today", "long day at work", "meeting ran over, sorry",
	"my phone is about to die", "good morning!", "good night 😴", "miss you!", "that's hilarious",
	"can you believe {react2}", "I'm making {food} for dinner", "who's bringing {item}?", "I can bring {item}",
	"don't forget {item}", "left {item} at {place} 🙄", "found it, never mind", "do you still have my {item}?",
	"{name} says hi", "tell {name} I said happy {event2}", "are we still on for {day}?", "let's reschedule",
	"it's raining so hard", "it's so hot today", "the game starts at {time}", "{team} won!!", "{team} lost again smh",
	"just finished {show}, no spoilers", "what should I watch next", "listening to {band} on repeat",
	"running errands, back in an hour", "at {place} getting {food}, want anything?", "I'll pick up {food} on the way",
	"picked up the {item}", "the {item} is in the car", "sent you the link", "check your email",
	"did you get my message?", "sorry missed your call", "can we talk later?", "I'll text you when I'm out",
	"{name} is coming too", "{name} can't make it", "let me check my calendar", "I'm free after {time}",
	"booked it for {day} at {time}", "the line at {place} is insane", "so proud of {name}", "that's awesome news",
	"ugh {react2}", "walking the dog, back soon", "we're out of {food}", "I'll grab {food} after work",
}

var slots = map[string][]string{
	"n":      {"5", "10", "15", "20", "30"},
	"place":  {"the cafe", "target", "costco", "the park", "the office", "work", "the station", "the mall", "the library", "home", "the bar", "dolores park", "whole foods", "the farmers market"},
	"food":   {"coffee", "lunch", "brunch", "sushi", "ramen", "pizza", "burgers", "tacos", "bagels", "ice cream", "dumplings", "pho", "salad", "curry", "bread", "milk"},
	"day":    {"tomorrow", "tonight", "saturday", "sunday", "monday", "friday", "this weekend", "next week"},
	"day2":   {"thursday", "wednesday", "sunday", "next weekend", "the day after"},
	"show":   {"the bear", "succession", "the last of us", "severance", "the finale", "that documentary", "the new marvel movie", "love island"},
	"react":  {"I'm dying", "classic", "stop it", "no way", "that's so you", "iconic"},
	"react2": {"this weather", "it's already december", "how expensive everything is", "that ending", "he actually said that"},
	"time":   {"6", "6:30", "7", "7:30", "8", "noon", "5pm", "9am", "10", "4:45"},
	"event":  {"the party", "the hike", "the wedding", "saturday", "the beach", "dinner"},
	"event2": {"birthday", "new year", "halloween", "4th of july", "friday"},
	"favor":  {"dinner", "the ride", "helping out", "the coffee", "listening"},
	"road":   {"freeway", "bridge", "101", "highway"},
	"item":   {"charger", "umbrella", "chips", "drinks", "speaker", "the blanket", "sunglasses", "jacket", "book", "water bottle", "dessert", "ice"},
	"name":   {"Maya", "Jordan", "Tyler", "Aisha", "Ken", "Lucia", "Ravi", "Zoe", "Ethan", "Grace"},
	"team":   {"the warriors", "the giants", "the niners", "arsenal", "the dodgers"},
	"band":   {"taylor swift", "the national", "sza", "bon iver", "kendrick"},
}

func init() {
	// A template slot without values would panic at generation time.
	for _, t := range templates {
		for {
			j := strings.IndexByte(t, '{')
			if j < 0 {
				break
			}
			k := strings.IndexByte(t[j:], '}') + j
			if _, ok := slots[t[j+1:k]]; !ok {
				panic("searcheval: template slot " + t[j+1:k] + " has no values")
			}
			t = t[k+1:]
		}
	}
}
