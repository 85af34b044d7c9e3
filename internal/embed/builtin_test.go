package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func mustBuiltin(t testing.TB) *Builtin {
	t.Helper()
	b, err := NewBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func embedOne(t testing.TB, e Embedder, s string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{s})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func norm2(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestBuiltinVectorsAreUnitLength(t *testing.T) {
	b := mustBuiltin(t)
	texts := []string{"you still owe me $40 for the tix", "ok", "lol", "1234", "zxqv blorf", "the", "Grandma turns 90"}
	vs, err := b.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != b.Dim() {
			t.Fatalf("%q: len %d, want %d", texts[i], len(v), b.Dim())
		}
		if n := norm2(v); math.Abs(n-1) > 1e-4 {
			t.Errorf("%q: norm %v, want 1", texts[i], n)
		}
	}
	for _, empty := range []string{"", "  \n", "!!!", "👍"} {
		if n := norm2(embedOne(t, b, empty)); n != 0 {
			t.Errorf("%q: norm %v, want the zero vector", empty, n)
		}
	}
}

func TestBuiltinSemanticNeighbours(t *testing.T) {
	b := mustBuiltin(t)
	// Each query must be closer to its paraphrase than to every distractor.
	distractors := []string{"see you at the park at 7", "the game starts at noon", "can you send me the pics from the party?",
		"traffic is terrible on the bridge", "I'm making curry for dinner"}
	cases := []struct{ query, match string }{
		{"the money Sam owes me", "btw you still owe me $40 for the tix"},
		{"tooth doctor", "don't forget your dentist appointment is Tuesday"},
		{"my salary", "what's the pay range for that level?"},
		{"grandmother", "Grandma turns 90 on the 14th"},
		{"medicine", "Your prescription is ready"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			q := embedOne(t, b, c.query)
			want := dot(q, embedOne(t, b, c.match))
			for _, d := range distractors {
				if got := dot(q, embedOne(t, b, d)); got >= want {
					t.Errorf("cos(query, %q) = %.3f ≥ cos(query, match) = %.3f", d, got, want)
				}
			}
		})
	}
}

func TestBuiltinTyposAndSlang(t *testing.T) {
	b := mustBuiltin(t)
	for _, c := range []struct{ a, b string }{
		{"tommorow", "tomorrow"},
		{"resturant", "restaurant"},
		{"tix", "tickets"},
		{"bday", "birthday"},
		{"owes", "owe"},
		{"Café", "cafe"},
	} {
		if s := dot(embedOne(t, b, c.a), embedOne(t, b, c.b)); s < 0.8 {
			t.Errorf("cos(%q, %q) = %.3f, want ≥ 0.8", c.a, c.b, s)
		}
	}
}

func corpus(n int) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		rng := rand.New(rand.NewPCG(7, 8))
		subjects := []string{"the venmo for the tix", "the zorbex payment", "rent", "the dentist", "the concert", "grocery run"}
		verbs := []string{"is due", "went through", "is late again", "was moved", "needs a zorbex", "is on friday"}
		for i := 0; i < n; i++ {
			s := subjects[rng.IntN(len(subjects))] + " " + verbs[rng.IntN(len(verbs))]
			if !yield(s) {
				return
			}
		}
	}
}

func TestBuiltinFitStateRoundTrip(t *testing.T) {
	ctx := context.Background()
	b := mustBuiltin(t)
	if data, err := b.MarshalBinary(); err != nil || data != nil {
		t.Fatalf("unfitted MarshalBinary = %d bytes, %v; want nil, nil", len(data), err)
	}
	base := b.ID()
	if err := b.Fit(ctx, corpus(5000)); err != nil {
		t.Fatal(err)
	}
	if b.ID() == base || !strings.HasPrefix(b.ID(), base+"/fit-") {
		t.Fatalf("fitted ID %q should extend %q with the fit hash", b.ID(), base)
	}
	// A corpus-only word gets a vector from its contexts.
	if n := norm2(embedOne(t, b, "zorbex")); math.Abs(n-1) > 1e-4 {
		t.Fatalf("corpus word has norm %v", n)
	}
	data, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r := mustBuiltin(t)
	if err := r.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if r.ID() != b.ID() {
		t.Fatalf("restored ID %q, want %q", r.ID(), b.ID())
	}
	for _, s := range []string{"zorbex", "the money Sam owes me", "dentist moved to friday", "tommorow"} {
		x, y := embedOne(t, b, s), embedOne(t, r, s)
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("%q: restored vector differs at %d: %v vs %v", s, i, x[i], y[i])
			}
		}
	}
	// Fitting again on the same corpus gives the same state.
	again := mustBuiltin(t)
	if err := again.Fit(ctx, corpus(5000)); err != nil {
		t.Fatal(err)
	}
	if again.ID() != b.ID() {
		t.Fatalf("Fit is not deterministic: %q vs %q", again.ID(), b.ID())
	}
	// Empty state restores the unfitted embedder.
	if err := r.UnmarshalBinary(nil); err != nil || r.ID() != base {
		t.Fatalf("UnmarshalBinary(nil): ID %q, err %v", r.ID(), err)
	}
}

func TestBuiltinUnmarshalRejects(t *testing.T) {
	b := mustBuiltin(t)
	if err := b.Fit(context.Background(), corpus(2000)); err != nil {
		t.Fatal(err)
	}
	good, _ := b.MarshalBinary()
	other, err := NewBuiltinWithOptions(BuiltinOptions{NoLexicon: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.UnmarshalBinary(good); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("state from another configuration: err = %v, want ErrStateMismatch", err)
	}
	for name, data := range map[string][]byte{
		"magic":     []byte("XXXX\x02"),
		"truncated": good[:len(good)/2],
		"trailing":  append(append([]byte(nil), good...), 0),
		"no header": good[:8],
	} {
		t.Run(name, func(t *testing.T) {
			r := mustBuiltin(t)
			if err := r.UnmarshalBinary(data); err == nil {
				t.Fatal("UnmarshalBinary accepted corrupt state")
			}
			if r.ID() != r.baseID() {
				t.Fatalf("a failed restore changed the state: %q", r.ID())
			}
		})
	}
}

func TestBuiltinFitHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := mustBuiltin(t)
	if err := b.Fit(ctx, corpus(10000)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Fit on a cancelled context: %v", err)
	}
	if _, err := b.Embed(ctx, make([]string, 5000)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed on a cancelled context: %v", err)
	}
}

func TestBuiltinConcurrentEmbedAndFit(t *testing.T) {
	b := mustBuiltin(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				v, err := b.Embed(context.Background(), []string{fmt.Sprintf("the dentist moved to friday %d", i)})
				if err != nil || math.Abs(norm2(v[0])-1) > 1e-4 {
					t.Errorf("concurrent Embed: %v", err)
					return
				}
			}
		}()
	}
	if err := b.Fit(context.Background(), corpus(3000)); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

func TestNewDefaultIsBuiltin(t *testing.T) {
	e, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.(*Builtin); !ok {
		t.Fatalf("New(Config{}) = %T, want *Builtin", e)
	}
	if _, ok := e.(Fitter); !ok {
		t.Fatal("the built-in embedder must implement Fitter")
	}
	if _, err := New(Config{Name: "word2vec"}); !errors.Is(err, ErrUnknownEmbedder) {
		t.Fatalf("unknown name: %v", err)
	}
	if _, err := New(Config{Name: NameModel2Vec}); err == nil {
		t.Fatal("model2vec without model_dir must fail")
	}
	if _, err := New(Config{Name: NameHTTP}); err == nil {
		t.Fatal("http without url must fail")
	}
}

func FuzzBuiltinUnmarshal(f *testing.F) {
	b, err := NewBuiltin()
	if err != nil {
		f.Fatal(err)
	}
	if err := b.Fit(context.Background(), corpus(300)); err != nil {
		f.Fatal(err)
	}
	good, _ := b.MarshalBinary()
	f.Add(good[:min(len(good), 600)])
	f.Add([]byte("TDBE\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _ := NewBuiltin()
		if err := r.UnmarshalBinary(data); err != nil {
			return
		}
		v := embedOne(t, r, "owe money for tickets")
		if n := norm2(v); math.Abs(n-1) > 1e-3 && n != 0 {
			t.Fatalf("restored state yields norm %v", n)
		}
	})
}
