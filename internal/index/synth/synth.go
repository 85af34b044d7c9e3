// Package synth generates a deterministic synthetic message history for
// benchmarks and tests of the index: conversations with people and groups,
// chat-like sentences with a realistic word distribution (a frequent head
// of everyday words, a long tail of names, places and made-up slang),
// emoji, replies, reactions and edits, spread over three years.
//
// It produces model values directly, so index benchmarks measure the
// index alone; the demo chat.db generator (internal/imessage/demo) is the
// end-to-end equivalent.
package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Options control Generate.
type Options struct {
	// Messages is the number of messages (reactions and edits included).
	Messages int
	// Seed makes the output reproducible (default 1).
	Seed uint64
	// End is the time of the newest message (default 2026-11-30 12:00 UTC).
	End time.Time
	// Span is the time covered (default three years).
	Span time.Duration
}

// Data is a generated history.
type Data struct {
	Convs []model.Conversation
	// Messages are in ROWID order (RowID 1…n), times mostly increasing.
	Messages []model.Message
	// Names maps a handle to the contact name the generator gave it.
	Names map[string]string
}

var (
	firstNames = strings.Fields(`Sam Zoe Alex Maya Jordan Priya Leo Nina Omar Chloe Ethan Ava Noah Mia Lucas Emma Liam Sofia Mateo Isla
Kai Ruby Theo Lena Hugo Ines Felix Clara Aarav Yuki Sven Ana Diego Fatima Jonas Elif Marco Sara Tomas Lea Ivan Nora Raj Emily
Ben Grace Oscar Lily Max Hannah Adam Julia Eli Zara`)
	foods = strings.Fields(`pizza sushi tacos ramen burgers curry pho dumplings pasta salad bagels brunch pancakes waffles kebab falafel
burritos noodles bbq steak oysters tapas paella risotto gelato croissants dim-sum poke nachos`)
	places = strings.Fields(`Café Rouge, the climbing gym, the park, Trader Joe's, the airport, the office, Mom's place, the beach,
the library, the dentist, the vet, Costco, the station, the stadium, the museum, the farmers market, the bakery, the pub,
the pool, the cinema, the hospital, the school, the lake house, Brooklyn, Oakland, Lisbon, Berlin, Tokyo`)
	activities = strings.Fields(`climbing running yoga hiking swimming cycling bouldering tennis soccer skiing surfing pilates boxing
basketball bowling karaoke trivia`)
	things = strings.Fields(`keys charger umbrella passport wallet laptop jacket tickets headphones book sunglasses receipt package
invoice contract cake flowers present photos playlist recipe`)
	days   = strings.Fields(`Monday Tuesday Wednesday Thursday Friday Saturday Sunday tomorrow tonight today`)
	emoji  = []string{"😂", "❤️", "👍", "🎉", "🙏", "😅", "🔥", "😭", "🥳", "👀", "🧗", "🍕"}
	common = strings.Fields(`ok yeah yes no sure maybe lol haha omg thanks thank you love great good nice cool awesome sorry
really totally definitely probably just still already actually literally basically honestly anyway though also too so very
super kinda gonna wanna gotta need want think know feel guess hope wish mean like get got go going come coming see saw look
call text send sent back home work late early soon later now again here there what when where who why how`)
	templates = []string{
		"are we still on for {day}?",
		"dinner at {place} on {day}?",
		"running late, be there in {num} min",
		"can you pick up {thing} on the way",
		"I left my {thing} at {place} 😭",
		"you still owe me ${num} for the {thing}",
		"I'll pay you back {day}, promise",
		"want to grab {food} {day}?",
		"{food} tonight? I'm starving",
		"happy birthday {name}!!! 🎉",
		"did you see what {name} posted",
		"{activity} at {time}? {emoji}",
		"the {thing} arrived, thanks so much",
		"flight lands at {time}, can you get me from the airport",
		"meeting moved to {day} {time}",
		"don't forget {name}'s party {day}",
		"call me when you get this",
		"how was {place}?",
		"omg {name} just told me the news",
		"can't make it {day}, sorry {emoji}",
		"let's do {activity} next week",
		"remind me to book the table for {num}",
		"the dentist appointment moved to {day}",
		"rent is due {day}, I sent my half",
		"just landed in {place} {emoji}",
		"is {name} coming to {place}?",
		"I found your {thing} in my bag",
		"the package from {place} is here",
		"recipe for the {food}? it was amazing",
		"traffic is insane, {num} more minutes",
		"good luck with the interview {day}!",
		"kids have a half day {day}, can you do pickup",
		"what time is {activity}?",
		"Mom wants to know if we're coming {day}",
		"split the bill? it was ${num} each",
		"I'm at {place}, where are you",
		"{name} says hi",
		"watching the game at {place} tonight",
		"the car needs an oil change, can you drop it {day}",
		"your code is {num6}, don't share it",
	}
)

// pseudo makes a pronounceable made-up word (names, slang, typos).
func pseudo(r *rand.Rand) string {
	cons := "bcdfghjklmnprstvwz"
	vow := "aeiou"
	n := 2 + r.IntN(3)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(cons[r.IntN(len(cons))])
		b.WriteByte(vow[r.IntN(len(vow))])
		if r.IntN(3) == 0 {
			b.WriteByte(cons[r.IntN(len(cons))])
		}
	}
	return b.String()
}

// Generate builds a history in memory.
func Generate(o Options) *Data {
	var msgs []model.Message
	d := generate(o, func(m model.Message) bool {
		msgs = append(msgs, m)
		return true
	})
	d.Messages = msgs
	return d
}

// generate builds the people and conversations, then calls emit with each
// message in order until it returns false.
func generate(o Options, emit func(model.Message) bool) *Data {
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.End.IsZero() {
		o.End = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	}
	if o.Span <= 0 {
		o.Span = 3 * 365 * 24 * time.Hour
	}
	r := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	d := &Data{Names: map[string]string{}}
	// People.
	nPeople := max(5, min(400, o.Messages/2500+20))
	type person struct{ handle, name string }
	people := make([]person, nPeople)
	for i := range people {
		name := firstNames[i%len(firstNames)]
		if i >= len(firstNames) {
			name += " " + strings.ToUpper(pseudo(r)[:1]) + pseudo(r)
		}
		h := fmt.Sprintf("+1415555%04d", 1000+i)
		if i%5 == 4 {
			h = strings.ToLower(strings.Fields(name)[0]) + fmt.Sprint(i) + "@example.com"
		}
		people[i] = person{h, name}
		d.Names[h] = name
	}
	// Conversations: one direct chat per person, plus groups.
	for _, p := range people {
		d.Convs = append(d.Convs, model.Conversation{Source: model.SourceIMessage, ID: "iMessage;-;" + p.handle,
			Identifier: p.handle, Kind: model.KindDirect, Service: "iMessage", Participants: []string{p.handle}})
	}
	nGroups := max(2, nPeople/6)
	for g := 0; g < nGroups; g++ {
		var parts []string
		for k := 0; k < 2+r.IntN(5); k++ {
			parts = append(parts, people[r.IntN(nPeople)].handle)
		}
		id := fmt.Sprintf("chat%09d", 100000+g)
		name := ""
		if g%2 == 0 {
			name = strings.ToUpper(activities[g%len(activities)][:1]) + activities[g%len(activities)][1:] + " crew"
		}
		d.Convs = append(d.Convs, model.Conversation{Source: model.SourceIMessage, ID: "iMessage;+;" + id,
			Identifier: id, Kind: model.KindGroup, DisplayName: name, Service: "iMessage", Participants: dedupe(parts)})
	}
	// Zipf over conversations (a few very active ones).
	zc := rand.NewZipf(r, 1.2, 3, uint64(len(d.Convs)-1))
	// Long-tail vocabulary.
	tail := make([]string, 20000)
	for i := range tail {
		tail[i] = pseudo(r)
	}
	zt := rand.NewZipf(r, 1.05, 5, uint64(len(tail)-1))
	zw := rand.NewZipf(r, 1.1, 2, uint64(len(common)-1))
	start := o.End.Add(-o.Span)
	step := o.Span / time.Duration(max(o.Messages, 1))
	t := start
	fill := func(tpl string) string {
		var b strings.Builder
		for {
			i := strings.IndexByte(tpl, '{')
			if i < 0 {
				b.WriteString(tpl)
				return b.String()
			}
			j := strings.IndexByte(tpl[i:], '}') + i
			b.WriteString(tpl[:i])
			switch tpl[i+1 : j] {
			case "day":
				b.WriteString(days[r.IntN(len(days))])
			case "place":
				b.WriteString(strings.TrimSuffix(places[r.IntN(len(places))], ","))
			case "num":
				fmt.Fprint(&b, 2+r.IntN(90))
			case "num6":
				fmt.Fprintf(&b, "%06d", r.IntN(1000000))
			case "food":
				b.WriteString(foods[r.IntN(len(foods))])
			case "name":
				b.WriteString(strings.Fields(people[r.IntN(nPeople)].name)[0])
			case "thing":
				b.WriteString(things[r.IntN(len(things))])
			case "activity":
				b.WriteString(activities[r.IntN(len(activities))])
			case "time":
				fmt.Fprintf(&b, "%d:%02d", 1+r.IntN(12), 15*r.IntN(4))
			case "emoji":
				b.WriteString(emoji[r.IntN(len(emoji))])
			}
			tpl = tpl[j+1:]
		}
	}
	chatter := func() string {
		n := 2 + r.IntN(12)
		w := make([]string, n)
		for i := range w {
			if r.IntN(4) == 0 {
				w[i] = tail[zt.Uint64()]
			} else {
				w[i] = common[zw.Uint64()]
			}
		}
		s := strings.Join(w, " ")
		if r.IntN(6) == 0 {
			s += " " + emoji[r.IntN(len(emoji))]
		}
		return s
	}
	var recent []model.Message
	for i := 0; i < o.Messages; i++ {
		t = t.Add(time.Duration(float64(step) * (0.2 + 1.6*r.Float64())))
		if t.After(o.End) {
			t = o.End
		}
		c := d.Convs[zc.Uint64()]
		fromMe := r.IntN(5) < 2
		sender := ""
		if !fromMe {
			sender = c.Participants[r.IntN(len(c.Participants))]
		}
		m := model.Message{Source: model.SourceIMessage, ID: fmt.Sprintf("SYN-%08X-%04X", i+1, r.IntN(1<<16)), RowID: int64(i + 1),
			ConversationIDs: []string{c.ID}, Sender: sender, FromMe: fromMe, Service: "iMessage", Kind: model.MsgText,
			Time: t, TextSource: "attributedBody", IsSent: fromMe, IsDelivered: fromMe, IsRead: !fromMe}
		switch k := r.IntN(100); {
		case k < 6 && len(recent) > 0:
			tgt := recent[r.IntN(len(recent))]
			m.Kind = model.MsgReaction
			types := []model.ReactionType{model.ReactLove, model.ReactLike, model.ReactLaugh, model.ReactEmphasize}
			m.Reaction = &model.Reaction{Target: tgt.ID, Type: types[r.IntN(len(types))], Removed: r.IntN(10) == 0}
			m.ConversationIDs = tgt.ConversationIDs
			m.Text = "Loved “" + tgt.Text + "”"
		case k < 55:
			m.Text = fill(templates[r.IntN(len(templates))])
		default:
			m.Text = chatter()
		}
		if m.Kind == model.MsgText && r.IntN(50) == 0 && len(recent) > 0 {
			m.ReplyTo = recent[r.IntN(len(recent))].ID
		}
		if m.Kind == model.MsgText && r.IntN(200) == 0 {
			m.Edited = true
			m.Edits = []model.Edit{{Time: t, Text: m.Text + " typo"}, {Time: t.Add(time.Minute), Text: m.Text}}
			m.TimeEdited = t.Add(time.Minute)
		}
		if m.Kind == model.MsgText {
			if len(recent) < 64 {
				recent = append(recent, m)
			} else {
				recent[r.IntN(64)] = m
			}
		}
		if !emit(m) {
			break
		}
	}
	return d
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Stream serves a history without holding it in memory: each Messages
// call regenerates the messages after the requested RowID (the generator is
// deterministic), so a million-message source costs no memory. Append adds
// live messages after the generated ones.
type Stream struct {
	opts  Options
	head  *Data
	mu    sync.Mutex
	extra []model.Message
}

// NewStream returns a streaming source of the history o describes.
func NewStream(o Options) *Stream {
	return &Stream{opts: o, head: generate(o, func(model.Message) bool { return false })}
}

// Names maps generated handles to contact names.
func (s *Stream) Names() map[string]string { return s.head.Names }

// Append adds a message with the next RowID and returns it.
func (s *Stream) Append(m model.Message) model.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	m.RowID = int64(s.opts.Messages + len(s.extra) + 1)
	if m.Source == "" {
		m.Source = model.SourceIMessage
	}
	s.extra = append(s.extra, m)
	return m
}

// Conversations returns every conversation.
func (s *Stream) Conversations(ctx context.Context) ([]model.Conversation, error) {
	return append([]model.Conversation(nil), s.head.Convs...), nil
}

// Messages streams messages with RowID > after.
func (s *Stream) Messages(ctx context.Context, after int64, fn func(model.Message) error) error {
	var err error
	if after < int64(s.opts.Messages) {
		generate(s.opts, func(m model.Message) bool {
			if m.RowID <= after {
				return true
			}
			if m.RowID%4096 == 0 {
				if err = ctx.Err(); err != nil {
					return false
				}
			}
			err = fn(m)
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	s.mu.Lock()
	extra := append([]model.Message(nil), s.extra...)
	s.mu.Unlock()
	for _, m := range extra {
		if m.RowID > after {
			if err := fn(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// Changed reports nothing: generated messages never change.
func (s *Stream) Changed(ctx context.Context, since time.Time, fn func(model.Message) error) error {
	return nil
}

// Deleted reports nothing.
func (s *Stream) Deleted(ctx context.Context, after int64, fn func(int64, string) error) error {
	return nil
}

// Reader serves the data as a ROWID-ordered message database (it satisfies
// index.RowReader). Append adds messages as a live database would.
type Reader struct {
	mu   sync.Mutex
	data *Data
}

// Reader returns a reader over d.
func (d *Data) Reader() *Reader { return &Reader{data: d} }

// Append adds a message with the next RowID and returns it.
func (r *Reader) Append(m model.Message) model.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	m.RowID = int64(len(r.data.Messages) + 1)
	if m.Source == "" {
		m.Source = model.SourceIMessage
	}
	r.data.Messages = append(r.data.Messages, m)
	return m
}

// Conversations returns every conversation.
func (r *Reader) Conversations(ctx context.Context) ([]model.Conversation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.Conversation(nil), r.data.Convs...), nil
}

// Messages streams messages with RowID > after.
func (r *Reader) Messages(ctx context.Context, after int64, fn func(model.Message) error) error {
	r.mu.Lock()
	msgs := r.data.Messages
	r.mu.Unlock()
	if after < 0 {
		after = 0
	}
	for i := int(after); i < len(msgs); i++ {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := fn(msgs[i]); err != nil {
			return err
		}
	}
	return nil
}

// Changed reports nothing: generated messages never change.
func (r *Reader) Changed(ctx context.Context, since time.Time, fn func(model.Message) error) error {
	return nil
}

// Deleted reports nothing: generated messages are never deleted.
func (r *Reader) Deleted(ctx context.Context, after int64, fn func(int64, string) error) error {
	return nil
}
