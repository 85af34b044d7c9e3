package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/imessage/imessageindex"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/index/synth"
	"github.com/tidings-mcp/tidings/internal/model"
)

func init() {
	register(command{
		name:    "bench",
		summary: "measure indexing, search latency, freshness and memory on generated data",
		run:     runBench,
	})
}

const benchUsage = `Usage: tidings bench [--messages N] [flags]

Generates N messages (by default a demo chat.db, as 'tidings demo' writes it,
read through the real chat.db reader; --source synth feeds synthetic
messages straight to the index), indexes them into a fresh index and reports
index time, messages/s, index size, peak memory, search latency (p50/p95)
per mode over a fixed query set, and freshness (a new message → visible in
search). Each phase runs in its own process so memory figures are the
phase's own. Nothing touches your data: everything lives in a temporary
folder (--dir to keep it).

With --client it measures what an MCP client sees instead: the demo data
is indexed by 'tidings index' (into DIR/home; time, CPU and peak memory
reported), 'tidings serve' runs as a subprocess, and go-sdk's client times
--calls calls each of search_messages (hybrid, limit 10),
get_conversation_messages (50-message pages) and review_messages (7 days)
over stdio after a warm-up, with the load average around them. A --dir
given again reuses its demo data and index. --client-cpuprofile FILE adds
a pass against serve running in the bench's own process and profiles the
timed calls of each tool (go tool pprof -tagfocus side=server
FILE.search_messages).

Flags:
`

// benchQueries is the fixed query set: common and rare words, natural
// questions, phrases, typos, prefixes, and paraphrases.
var benchQueries = []string{
	"dinner", "tonight", "passport", "invoice", "birthday party", "running late",
	"what did Sam say about the party last week", "when is the dentist appointment",
	"can you pick up my keys", "\"book the table\"", "dinenr plans", "climb*",
	"money I still owe", "plans to eat out", "flight lands", "rent is due",
	"happy birthday", "where are you", "interview good luck", "photos from the weekend",
}

// benchSubstrings is the substring query set.
var benchSubstrings = []string{"dinner", "late, be", "$4", "🎉", "airport", "ick up", "Café", "be there in"}

// BenchReport is what `tidings bench --json` prints.
type BenchReport struct {
	Messages   int               `json:"messages"`
	Source     string            `json:"source"`
	Embedder   string            `json:"embedder"`
	Machine    string            `json:"machine"`
	Index      *BenchIndex       `json:"index,omitempty"`
	Search     *BenchSearch      `json:"search,omitempty"`
	Freshness  *BenchFreshness   `json:"freshness,omitempty"`
	Client     *BenchClient      `json:"client,omitempty"`
	Status     *index.Status     `json:"status,omitempty"`
	Extra      map[string]any    `json:"extra,omitempty"`
	PhaseError map[string]string `json:"phase_errors,omitempty"`
}

// BenchIndex is the indexing phase.
type BenchIndex struct {
	// GenerateSeconds is the time to write the demo chat.db (not counted
	// in the index time).
	GenerateSeconds float64 `json:"generate_seconds,omitempty"`
	SyncSeconds     float64 `json:"sync_seconds"`  // rows + full text: searchable
	EmbedSeconds    float64 `json:"embed_seconds"` // fit + vectors: semantic ready
	TotalSeconds    float64 `json:"total_seconds"`
	MessagesPerSec  float64 `json:"messages_per_second"`
	SizeBytes       int64   `json:"size_bytes"` // at rest (closed, log folded back)
	PeakRSSBytes    int64   `json:"peak_rss_bytes"`
	CPUSeconds      float64 `json:"cpu_seconds"`
}

// BenchLatency summarises latencies in milliseconds.
type BenchLatency struct {
	N            int     `json:"n"`
	P50          float64 `json:"p50_ms"`
	P95          float64 `json:"p95_ms"`
	Max          float64 `json:"max_ms"`
	Incomplete   int     `json:"incomplete_scans"`
	FellBackMode int     `json:"fell_back"`
	// CPUMean is the mean CPU time per query (process user+system): on a
	// machine shared with other work it estimates the latency the query
	// would have alone (hybrid's two signals run in parallel, so its CPU
	// time can exceed its latency).
	CPUMean float64 `json:"cpu_mean_ms,omitempty"`
}

// BenchSearch is the query phase.
type BenchSearch struct {
	OpenSeconds  float64                 `json:"open_seconds"`
	Modes        map[string]BenchLatency `json:"modes"`
	PeakRSSBytes int64                   `json:"peak_rss_bytes"`
	RSSBytes     int64                   `json:"rss_bytes"`
}

// BenchFreshness is the freshness phase.
type BenchFreshness struct {
	Latency      BenchLatency `json:"latency"`
	PeakRSSBytes int64        `json:"peak_rss_bytes"`
}

func runBench(ctx context.Context, m *Main, args []string) error {
	fs := newFlagSet(m, "bench", benchUsage)
	n := fs.Int("messages", 100000, "number of messages to generate")
	dir := fs.String("dir", "", "work folder (default: a temporary folder, removed afterwards)")
	embName := fs.String("embedder", "builtin", "builtin, hash (a fast test embedder: measures the index, not embedding) or none")
	reps := fs.Int("reps", 5, "repetitions of each query per mode")
	fresh := fs.Int("freshness", 20, "freshness samples")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	vecMB := fs.Int("vector-memory", 0, "MiB of vectors kept in memory for re-ranking (0: the index default)")
	source := fs.String("source", "demo", "demo (a demo chat.db through the chat.db reader) or synth (generated messages fed to the index directly)")
	phase := fs.String("phase", "", "run one phase in this process (generate, index, search, freshness, client); used by the parent")
	inProcess := fs.Bool("in-process", false, "run all phases in this process (memory figures then include every phase)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the index phase to this file (go tool pprof)")
	searchProfile := fs.String("search-cpuprofile", "", "write a CPU profile of the search phase to this file (go tool pprof)")
	client := fs.Bool("client", false, "measure tool calls as an MCP client sees them instead: index the demo with tidings index, run tidings serve as a subprocess and time search_messages, get_conversation_messages and review_messages over stdio")
	calls := fs.Int("calls", 60, "with --client: timed calls per tool, after the warm-up")
	clientProfile := fs.String("client-cpuprofile", "", "with --client: also run the calls against serve in this process and write a CPU profile of each tool's calls to FILE.<tool> (pprof label side=server marks the server)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if *n < 100 || *n > 20_000_000 {
		return usageError{fmt.Sprintf("--messages %d: want 100 to 20000000", *n)}
	}
	switch *embName {
	case "builtin", "hash", "none":
	default:
		return usageError{fmt.Sprintf("--embedder %q: want builtin, hash or none", *embName)}
	}
	if *source != "demo" && *source != "synth" {
		return usageError{fmt.Sprintf("--source %q: want demo or synth", *source)}
	}
	if *source == "demo" && *n < demo.MinMessages() {
		return usageError{fmt.Sprintf("--messages %d: the demo needs at least %d", *n, demo.MinMessages())}
	}
	if *client && *source != "demo" {
		return usageError{"--client measures the demo data set: leave --source at demo"}
	}
	if *calls < 1 {
		return usageError{fmt.Sprintf("--calls %d: want at least 1", *calls)}
	}
	opts := benchOpts{messages: *n, embedder: *embName, reps: *reps, fresh: *fresh, source: *source, vecMB: *vecMB, cpuProfile: *cpuProfile, searchProfile: *searchProfile,
		calls: *calls, clientProfile: *clientProfile}
	if *phase != "" {
		if *dir == "" {
			return usageError{"--phase needs --dir"}
		}
		opts.dir = *dir
		out, err := benchPhase(ctx, opts, *phase)
		if err != nil {
			return err
		}
		return json.NewEncoder(m.Stdout).Encode(out)
	}
	work := *dir
	if work == "" {
		tmp, err := os.MkdirTemp("", "tidings-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		work = tmp
	} else if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	opts.dir = work
	rep := &BenchReport{Messages: *n, Embedder: *embName, Source: *source, Machine: fmt.Sprintf("%s/%s, %s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, cpuModel(), runtime.NumCPU(), runtime.Version())}
	phases := []string{"index", "search", "freshness"}
	if *client {
		phases = []string{"client"}
	}
	if *source == "demo" {
		// The demo chat.db is written by a process of its own: the
		// generator's memory (≈ 236 MB at 1M messages) would otherwise
		// count towards the index phase's peak RSS.
		phases = append([]string{"generate"}, phases...)
	}
	var genSeconds float64
	for _, ph := range phases {
		if m.Stderr != nil && !*jsonOut {
			fmt.Fprintf(m.Stderr, "bench: %s phase…\n", ph)
		}
		var part *BenchReport
		var err error
		if *inProcess {
			part, err = benchPhase(ctx, opts, ph)
		} else {
			part, err = benchChild(ctx, opts, ph)
		}
		if err != nil {
			return fmt.Errorf("bench %s phase: %w", ph, err)
		}
		switch ph {
		case "generate":
			if part.Index != nil {
				genSeconds = part.Index.GenerateSeconds
			}
		case "index":
			rep.Index, rep.Status = part.Index, part.Status
			if rep.Index != nil && rep.Index.GenerateSeconds == 0 {
				rep.Index.GenerateSeconds = genSeconds
			}
		case "search":
			rep.Search = part.Search
		case "freshness":
			rep.Freshness = part.Freshness
		case "client":
			rep.Client = part.Client
		}
	}
	if *jsonOut {
		return printJSON(m.Stdout, rep)
	}
	printBench(m.Stdout, rep)
	return nil
}

type benchOpts struct {
	calls         int
	clientProfile string
	cpuProfile    string
	searchProfile string
	vecMB         int
	messages      int
	source        string
	embedder      string
	reps          int
	fresh         int
	dir           string
}

// benchChild runs one phase in a child process and returns its report.
func benchChild(ctx context.Context, o benchOpts, phase string) (*BenchReport, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "bench", "--phase", phase, "--dir", o.dir, "--messages", fmt.Sprint(o.messages),
		"--embedder", o.embedder, "--reps", fmt.Sprint(o.reps), "--freshness", fmt.Sprint(o.fresh), "--source", o.source, "--vector-memory", fmt.Sprint(o.vecMB), "--cpuprofile", o.cpuProfile, "--search-cpuprofile", o.searchProfile,
		"--calls", fmt.Sprint(o.calls), "--client-cpuprofile", o.clientProfile)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	var rep BenchReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("child output: %w", err)
	}
	return &rep, nil
}

// benchEmbedder builds the embedder the bench measures.
func benchEmbedder(name string) (index.Embedder, error) {
	switch name {
	case "builtin":
		return embed.NewBuiltin()
	case "hash":
		return hashEmbedder{dim: 128}, nil
	}
	return nil, nil
}

// hashEmbedder is a fast lexical stand-in (hashed bag of words, unit
// length): it measures the index's vector path without the cost of a real
// embedder.
type hashEmbedder struct{ dim int }

func (h hashEmbedder) ID() string { return fmt.Sprintf("bench-hash/d%d", h.dim) }
func (h hashEmbedder) Dim() int   { return h.dim }
func (h hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9') }) {
			f := fnv.New32a()
			f.Write([]byte(w))
			x := f.Sum32()
			if x&1 == 0 {
				v[int(x>>1)%h.dim]++
			} else {
				v[int(x>>1)%h.dim]--
			}
		}
		var s float64
		for _, x := range v {
			s += float64(x * x)
		}
		if s > 0 {
			inv := float32(1 / math.Sqrt(s))
			for j := range v {
				v[j] *= inv
			}
		}
		out[i] = v
	}
	return out, nil
}

func benchSource(o benchOpts) (*synth.Stream, index.Source) {
	st := synth.NewStream(synth.Options{Messages: o.messages})
	return st, &index.RowSource{SourceKey: "bench:synthetic", SourceKind: model.SourceIMessage, Reader: st}
}

// demoChatDB returns the demo chat.db of the work folder, generating it
// first if needed (and how long that took).
func demoChatDB(ctx context.Context, o benchOpts) (string, float64, error) {
	p := filepath.Join(o.dir, "demo", "chat.db")
	if _, err := os.Stat(p); err == nil {
		return p, 0, nil
	}
	t0 := time.Now()
	res, err := demo.Generate(ctx, demo.Options{Dir: filepath.Join(o.dir, "demo"), Messages: o.messages, Now: time.Now()})
	if err != nil {
		return "", 0, err
	}
	return res.ChatDB, time.Since(t0).Seconds(), nil
}

// benchDemo is the demo chat.db of the work folder, open through the real
// reader.
type benchDemo struct {
	path       string
	genSeconds float64 // how long generating it took (0: it existed)
	reader     *imessage.Reader
	src        index.Source
}

// openDemoSource opens the demo chat.db (demoChatDB) through the real
// reader; the caller closes d.reader.
func openDemoSource(ctx context.Context, o benchOpts) (*benchDemo, error) {
	p, gen, err := demoChatDB(ctx, o)
	if err != nil {
		return nil, err
	}
	r, err := imessage.Open(ctx, p, imessage.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	return &benchDemo{path: p, genSeconds: gen, reader: r, src: imessageindex.Source(r, "imessage", time.Now)}, nil
}

// chatDBWriter plays Messages.app: it commits new rows to chat.db.
type chatDBWriter struct {
	db     *sql.DB
	rows   *chatdb.Writer
	chat   int64
	handle int64
}

func newChatDBWriter(path string) (*chatDBWriter, error) {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	w := &chatDBWriter{db: db, rows: chatdb.New(context.Background(), db)}
	err = db.QueryRow("SELECT chat_id, handle_id FROM chat_handle_join ORDER BY chat_id LIMIT 1").Scan(&w.chat, &w.handle)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("demo chat.db: %w", err)
	}
	// Read the two tables' columns now, not inside a timed add.
	w.rows.Has("message", "guid")
	w.rows.Has("chat_message_join", "message_date")
	if err := w.rows.Err(); err != nil {
		db.Close()
		return nil, fmt.Errorf("demo chat.db: %w", err)
	}
	return w, nil
}

// add commits one incoming message (row and chat link in one transaction,
// as Messages does).
func (w *chatDBWriter) add(guid, text string, at time.Time) error {
	tx, err := w.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	w.rows.On(tx).Message(chatdb.Message{GUID: guid, Text: text, Handle: w.handle, Service: "iMessage", Date: chatdb.Nanos(at),
		Chats: []int64{w.chat}})
	if err := w.rows.Err(); err != nil {
		return err
	}
	return tx.Commit()
}

func benchOpen(ctx context.Context, o benchOpts) (*index.Index, error) {
	emb, err := benchEmbedder(o.embedder)
	if err != nil {
		return nil, err
	}
	return index.Open(ctx, filepath.Join(o.dir, "index.db"), index.Options{Embedder: emb, VectorMemory: int64(o.vecMB) << 20})
}

// startCPUProfile writes a CPU profile of this process to path until stop
// is called (go tool pprof reads it); with path "" it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// benchPhase runs one phase in this process.
func benchPhase(ctx context.Context, o benchOpts, phase string) (*BenchReport, error) {
	rep := &BenchReport{Messages: o.messages, Embedder: o.embedder}
	switch phase {
	case "generate":
		if o.source != "demo" {
			return rep, nil
		}
		_, g, err := demoChatDB(ctx, o)
		if err != nil {
			return nil, err
		}
		rep.Index = &BenchIndex{GenerateSeconds: g}
	case "index":
		limitIndexMemory(os.Getenv)
		os.Remove(filepath.Join(o.dir, "index.db"))
		os.Remove(filepath.Join(o.dir, "index.db-wal"))
		os.Remove(filepath.Join(o.dir, "index.db-shm"))
		var src index.Source
		var gen float64
		if o.source == "demo" {
			d, err := openDemoSource(ctx, o)
			if err != nil {
				return nil, err
			}
			defer d.reader.Close()
			src, gen = d.src, d.genSeconds
		} else {
			_, src = benchSource(o)
		}
		stopProfile, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer stopProfile()
		cpu0 := cpuSeconds()
		t0 := time.Now()
		ix, err := benchOpen(ctx, o)
		if err != nil {
			return nil, err
		}
		closed := false
		defer func() {
			if !closed {
				ix.Close()
			}
		}()
		if _, err := ix.Sync(ctx, index.SyncOptions{}, src); err != nil {
			return nil, err
		}
		t1 := time.Now()
		if _, err := ix.Embed(ctx); err != nil {
			return nil, err
		}
		t2 := time.Now()
		st, err := ix.Status(ctx)
		if err != nil {
			return nil, err
		}
		rep.Status = &st
		cpu, peak := cpuSeconds()-cpu0, peakRSS()
		// The size at rest: closing folds the write-ahead log back into
		// the database (its size while open depends on when the last
		// checkpoint ran).
		closed = true
		if err := ix.Close(); err != nil {
			return nil, err
		}
		size, err := fileSizes(ix.Path(), ix.Path()+"-wal")
		if err != nil {
			return nil, err
		}
		rep.Index = &BenchIndex{GenerateSeconds: gen, SyncSeconds: t1.Sub(t0).Seconds(), EmbedSeconds: t2.Sub(t1).Seconds(), TotalSeconds: t2.Sub(t0).Seconds(),
			MessagesPerSec: float64(o.messages) / t2.Sub(t0).Seconds(), SizeBytes: size, PeakRSSBytes: peak, CPUSeconds: cpu}
	case "search":
		stopProfile, err := startCPUProfile(o.searchProfile)
		if err != nil {
			return nil, err
		}
		defer stopProfile()
		t0 := time.Now()
		ix, err := benchOpen(ctx, o)
		if err != nil {
			return nil, err
		}
		defer ix.Close()
		s := &BenchSearch{OpenSeconds: time.Since(t0).Seconds(), Modes: map[string]BenchLatency{}}
		for _, mode := range []index.Mode{index.ModeFulltext, index.ModeSubstring, index.ModeSemantic, index.ModeHybrid} {
			qs := benchQueries
			if mode == index.ModeSubstring {
				qs = benchSubstrings
			}
			var lat []time.Duration
			var lt BenchLatency
			var cpu float64
			for _, q := range qs {
				if _, err := ix.Search(ctx, index.Query{Text: q, Mode: mode}); err != nil { // warm-up
					return nil, err
				}
				for r := 0; r < max(o.reps, 1); r++ {
					c0 := cpuSeconds()
					t := time.Now()
					res, err := ix.Search(ctx, index.Query{Text: q, Mode: mode})
					if err != nil {
						return nil, err
					}
					lat = append(lat, time.Since(t))
					cpu += cpuSeconds() - c0
					if r == 0 && !res.ScanComplete {
						lt.Incomplete++
					}
					if r == 0 && res.Mode != mode {
						lt.FellBackMode++
					}
				}
			}
			lt.CPUMean = 1000 * cpu / float64(max(len(lat), 1))
			s.Modes[string(mode)] = summarize(lat, lt)
		}
		s.PeakRSSBytes, s.RSSBytes = peakRSS(), currentRSS()
		rep.Search = s
	case "freshness":
		ix, err := benchOpen(ctx, o)
		if err != nil {
			return nil, err
		}
		defer ix.Close()
		var (
			src   index.Source
			paths []string
			add   func(i int, word string) error
		)
		if o.source == "demo" {
			d, err := openDemoSource(ctx, o)
			if err != nil {
				return nil, err
			}
			defer d.reader.Close()
			w, err := newChatDBWriter(d.path)
			if err != nil {
				return nil, err
			}
			defer w.db.Close()
			src, paths = d.src, []string{d.path, d.path + "-wal"}
			add = func(i int, word string) error {
				return w.add(fmt.Sprintf("BENCH-FRESH-%d-%s", i, word), "new message "+word, time.Now().UTC())
			}
		} else {
			st, s := benchSource(o)
			chat := filepath.Join(o.dir, "chat.db")
			os.WriteFile(chat, nil, 0o600)
			os.WriteFile(chat+"-wal", nil, 0o600)
			convs, _ := st.Conversations(ctx)
			src, paths = s, []string{chat, chat + "-wal"}
			add = func(i int, word string) error {
				c := convs[i%len(convs)]
				st.Append(model.Message{ID: fmt.Sprintf("FRESH-%d-%s", i, word), ConversationIDs: []string{c.ID},
					Sender: c.Participants[0], Kind: model.MsgText, Time: time.Now().UTC(), Text: "new message " + word})
				f, err := os.OpenFile(chat+"-wal", os.O_WRONLY|os.O_APPEND, 0o600)
				if err != nil {
					return err
				}
				f.Write([]byte("x"))
				return f.Close()
			}
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		ready := make(chan struct{}, 1)
		go func() {
			done <- ix.Watch(wctx, index.WatchOptions{Sources: []index.Source{src}, Paths: paths,
				OnSync: func(index.SyncReport, bool, error) {
					select {
					case ready <- struct{}{}:
					default:
					}
				}})
		}()
		<-ready
		var lat []time.Duration
		for i := 0; i < max(o.fresh, 1); i++ {
			word := fmt.Sprintf("zqfresh%dx%d", i, time.Now().UnixNano()%1000)
			if err := add(i, word); err != nil {
				cancel()
				return nil, err
			}
			t := time.Now() // the message has landed
			for {
				res, err := ix.Search(ctx, index.Query{Text: word, Mode: index.ModeFulltext})
				if err != nil {
					cancel()
					return nil, err
				}
				if len(res.Hits) > 0 {
					break
				}
				if time.Since(t) > 30*time.Second {
					cancel()
					return nil, fmt.Errorf("message %d not visible after 30 s", i)
				}
				time.Sleep(200 * time.Microsecond)
			}
			lat = append(lat, time.Since(t))
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
		<-done
		rep.Freshness = &BenchFreshness{Latency: summarize(lat, BenchLatency{}), PeakRSSBytes: peakRSS()}
	case "client":
		c, err := benchClientPhase(ctx, o)
		if err != nil {
			return nil, err
		}
		rep.Client = c
	default:
		return nil, usageError{fmt.Sprintf("--phase %q: want generate, index, search, freshness or client", phase)}
	}
	return rep, nil
}

func summarize(lat []time.Duration, l BenchLatency) BenchLatency {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	l.N = len(lat)
	if len(lat) > 0 {
		l.P50 = ms(lat[len(lat)/2])
		l.P95 = ms(lat[min(len(lat)-1, len(lat)*95/100)])
		l.Max = ms(lat[len(lat)-1])
	}
	return l
}

// fileSizes sums the sizes of the files that exist.
func fileSizes(paths ...string) (int64, error) {
	var n int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		n += fi.Size()
	}
	return n, nil
}

// peakRSS returns the process's peak resident set size in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes on macOS
	}
	return int64(ru.Maxrss) * 1024 // KiB elsewhere
}

// currentRSS returns the resident set size now (Linux; 0 elsewhere).
func currentRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, res int64
	fmt.Sscan(string(b), &size, &res)
	return res * int64(os.Getpagesize())
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func printBench(w io.Writer, r *BenchReport) {
	mb := func(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }
	fmt.Fprintf(w, "tidings bench: %d messages (%s), embedder %s, %s\n\n", r.Messages, r.Source, r.Embedder, r.Machine)
	if x := r.Index; x != nil {
		if x.GenerateSeconds > 0 {
			fmt.Fprintf(w, "demo       chat.db written in %.1f s (not counted)\n", x.GenerateSeconds)
		}
		fmt.Fprintf(w, "index      %.2f s total (searchable after %.2f s, vectors %.2f s more), %.0f messages/s, %.2f CPU s\n",
			x.TotalSeconds, x.SyncSeconds, x.EmbedSeconds, x.MessagesPerSec, x.CPUSeconds)
		fmt.Fprintf(w, "           size %s, peak RSS %s\n", mb(x.SizeBytes), mb(x.PeakRSSBytes))
	}
	if s := r.Search; s != nil {
		fmt.Fprintf(w, "search     open %.0f ms; peak RSS %s (now %s)\n", s.OpenSeconds*1000, mb(s.PeakRSSBytes), mb(s.RSSBytes))
		for _, mode := range []string{"fulltext", "substring", "semantic", "hybrid"} {
			l, ok := s.Modes[mode]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "  %-9s p50 %7.2f ms  p95 %7.2f ms  max %7.2f ms  CPU/query %6.2f ms  (%d queries; %d incomplete scans; %d fell back)\n",
				mode, l.P50, l.P95, l.Max, l.CPUMean, l.N, l.Incomplete, l.FellBackMode)
		}
	}
	if c := r.Client; c != nil {
		printBenchClient(w, c)
	}
	if f := r.Freshness; f != nil {
		how := "a row committed to chat.db → found by search"
		if r.Source == "synth" {
			how = "appended to the source, chat.db-wal touched → found by search"
		}
		fmt.Fprintf(w, "freshness  p50 %.1f ms  p95 %.1f ms  max %.1f ms (%d samples: %s)\n",
			f.Latency.P50, f.Latency.P95, f.Latency.Max, f.Latency.N, how)
	}
}
