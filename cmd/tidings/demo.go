package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/tidings-mcp/tidings/internal/addressbook"
	"github.com/tidings-mcp/tidings/internal/calendar"
	"github.com/tidings-mcp/tidings/internal/mail"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

func init() {
	register(command{
		name:    "demo",
		summary: "write a synthetic, deterministic chat.db + contacts.vcf to try Tidings without personal data",
		run:     runDemo,
	})
}

const demoUsage = `Usage: tidings demo [--dir DIR] [--messages N] [--seed N] [--home DIR]

Writes a synthetic, deterministic Messages database (chat.db) and address
book (contacts.vcf) of made-up people into DIR (default $TIDINGS_HOME/demo),
to try Tidings without personal data. Then index it with the command it
prints, or simply run tidings serve --demo, which generates, indexes and
serves it by itself.

Flags:
`

func runDemo(ctx context.Context, m *Main, args []string) error {
	fs := newFlagSet(m, "demo", demoUsage)
	dir := fs.String("dir", "", "output folder (default: $TIDINGS_HOME/demo)")
	messages := fs.Int("messages", demo.DefaultMessages, fmt.Sprintf("number of messages (%d to %d)", demo.MinMessages(), demo.MaxMessages))
	seed := fs.String("seed", "1", "seed for the generated filler (storylines never change)")
	loader := config.Bind(fs, "home")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("demo takes no arguments, got %q", fs.Arg(0))}
	}
	s, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		return usageError{fmt.Sprintf("--seed %q: want a non-negative integer", *seed)}
	}
	if *messages < demo.MinMessages() || *messages > demo.MaxMessages {
		return usageError{fmt.Sprintf("--messages %d: want %d to %d", *messages, demo.MinMessages(), demo.MaxMessages)}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	out := *dir
	if out == "" {
		out = cfg.Path("demo")
	}
	start := time.Now()
	res, err := demo.Generate(ctx, demo.Options{Dir: out, Messages: *messages, Seed: s, Now: cfg.Now()})
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "wrote %d messages in %d conversations (%d attachments) in %s\n  %s\n  %s\nnow = %s; try: tidings index --imessage %s --contacts %s\n",
		res.Messages, res.Conversations, res.Attachments, time.Since(start).Round(time.Millisecond),
		res.ChatDB, res.Contacts, res.Now.Format(time.RFC3339), res.ChatDB, res.Contacts)
	return nil
}

// `tidings serve --demo`: the demo data set, generated on first use.

const (
	// demoMarker is the file demo.Generate leaves in a folder it owns
	// (internal/imessage/demo's markerFile).
	demoMarker = ".tidings-demo"
	// demoStateFile records what serve --demo found or generated, so a
	// later start reuses it with the same clock.
	demoStateFile = "serve-demo.json"
	// demoSeed is the filler seed of the served demo (storylines never
	// depend on it).
	demoSeed = 1
)

// demoState is serve-demo.json. ChatDBSize and ChatDBModTime identify the
// chat.db it describes; Now is the moment the data was generated for
// (zero when serve --demo did not generate it itself).
type demoState struct {
	Now           time.Time `json:"now,omitzero"`
	Seed          uint64    `json:"seed,omitempty"`
	ChatDBSize    int64     `json:"chat_db_size"`
	ChatDBModTime int64     `json:"chat_db_mtime_ns"`
}

// serveDemo sets `tidings serve --demo` up: the demo data set in
// $TIDINGS_HOME/demo is generated on first use (the default size, seed 1,
// deterministic for a given clock) and reused afterwards; it is indexed
// before the first answer and served as this process's only data. The
// demo folder is the demo's home — its index, read policy, dossiers — so
// demo data never mixes with personal data. The clock is fixed at the
// moment the data was generated for (unless TIDINGS_NOW pins another,
// which regenerates it for that moment), so the storylines ("needs a
// reply", "last week") stay current however long ago it was made.
func serveDemo(ctx context.Context, env *ServeEnv) error {
	cfg := env.Config
	if !cfg.Demo {
		return nil
	}
	dir := cfg.Path("demo")
	st, err := prepareDemo(ctx, cfg, dir, env.Logger)
	if err != nil {
		return err
	}
	// The demo's home remembers its contacts, so the commands the hint
	// prints (`tidings dossier --home DIR Linda`) know the names.
	if _, err := config.Remember(dir, "contacts.sources", []string{filepath.Join(dir, "contacts.vcf")}); err != nil {
		env.Logger.Warn("the demo's contacts are not remembered in its config.toml", "err", err)
	}
	cfg.Home = dir
	cfg.IMessage = filepath.Join(dir, "chat.db")
	cfg.Contacts = []string{filepath.Join(dir, "contacts.vcf")}
	cfg.IOSBackup, cfg.AndroidXML = "", nil
	made, clock := "by `tidings demo`", "the server's clock is the real one"
	switch {
	case cfg.NowRaw != "":
		made, clock = "for "+st.Now.Format(time.RFC3339), "the server's clock is pinned by TIDINGS_NOW"
	case !st.Now.IsZero():
		t := st.Now
		cfg.Now = func() time.Time { return t }
		env.Deps.Now = cfg.Now
		made, clock = "for "+t.Format(time.RFC3339), "the server's clock is fixed at that moment so its storylines stay current"
	}
	// The demo calendar (events and to-dos around the demo's clock) is
	// the only calendar source in demo mode: no account of the user's is
	// reached (docs/tools.md, "Calendar").
	ics, err := calendar.WriteDemo(dir, cfg.Now(), cfg.Location())
	if err != nil {
		return err
	}
	cfg.Calendar = config.Calendar{Files: []config.CalendarFile{{Name: "Demo", Path: ics}}}
	// The demo vCard folder (people of the demo messages, two groups) is
	// the only contacts account in demo mode (docs/tools.md, "Contacts").
	cards, err := addressbook.WriteDemo(dir)
	if err != nil {
		return err
	}
	cfg.ContactAccounts = []config.ContactAccount{{Name: "Demo", Folder: cards}}
	// The demo Maildir (read-only) is the only mail account in demo mode.
	md, err := mail.WriteDemo(dir)
	if err != nil {
		return err
	}
	cfg.Mail = config.Mail{Accounts: []config.MailAccount{{Name: "Demo", Maildir: md, From: []string{"me@example.com"}}}}
	counts, err := indexDemo(ctx, cfg, env.Logger)
	if err != nil {
		return fmt.Errorf("index the demo data: %w", err)
	}
	env.Deps.DataSet = mcpserver.DataSet{Kind: "demo",
		Note: fmt.Sprintf("demo data set: made-up people and messages (%s, in %s), generated %s; %s. Nothing here is anyone's real data; serve your own with --imessage, --ios-backup or --android-xml.",
			counts, dir, made, clock)}
	env.Logger.Info("serving the demo data set", "dir", dir, "index", counts)
	return nil
}

// prepareDemo returns the state of the demo folder, generating the data
// when it is missing or half-written, or was generated for another pinned
// clock. A folder `tidings demo` wrote is served as it is (its clock is
// unknown). A lock in the home keeps two servers starting at once from
// writing the folder together.
func prepareDemo(ctx context.Context, cfg *config.Config, dir string, logger *slog.Logger) (demoState, error) {
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return demoState{}, fmt.Errorf("tidings home: %w", err)
	}
	unlock, err := lockFile(ctx, cfg.Path(".serve-demo.lock"))
	if err != nil {
		return demoState{}, err
	}
	defer unlock()
	chatDB := filepath.Join(dir, "chat.db")
	present := true
	for _, f := range []string{demoMarker, "chat.db", "contacts.vcf"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			present = false
		}
	}
	st, stErr := readDemoState(dir, chatDB)
	switch {
	case present && stErr == nil && (cfg.NowRaw == "" || st.Now.Equal(cfg.Now().UTC().Truncate(time.Second))):
		return st, nil // as an earlier serve --demo left it
	case present && (stErr != nil || st.Now.IsZero()) && cfg.NowRaw == "":
		// Written (or rewritten) by `tidings demo`: serve what is there.
		logger.Info("serving the demo data written by tidings demo", "dir", dir)
		return recordDemo(dir, chatDB, demoState{})
	}
	start := time.Now()
	logger.Info("generating the demo data set (first use)", "dir", dir, "messages", demo.DefaultMessages)
	res, err := demo.Generate(ctx, demo.Options{Dir: dir, Messages: demo.DefaultMessages, Seed: demoSeed, Now: cfg.Now()})
	if err != nil {
		return demoState{}, err
	}
	logger.Info("demo data generated", "messages", res.Messages, "conversations", res.Conversations, "took", time.Since(start).Round(time.Millisecond))
	return recordDemo(dir, res.ChatDB, demoState{Now: res.Now, Seed: demoSeed})
}

// recordDemo writes serve-demo.json for the chat.db now in dir. The demo
// index is removed first: a chat.db written anew reuses row ids, which the
// old index would take for rows it already has.
func recordDemo(dir, chatDB string, st demoState) (demoState, error) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(filepath.Join(dir, "index.db"+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return demoState{}, fmt.Errorf("demo: remove the old demo index: %w", err)
		}
	}
	fi, err := os.Stat(chatDB)
	if err != nil {
		return demoState{}, fmt.Errorf("demo: %w", err)
	}
	st.ChatDBSize, st.ChatDBModTime = fi.Size(), fi.ModTime().UnixNano()
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, demoStateFile), append(b, '\n'), 0o600); err != nil {
		return demoState{}, fmt.Errorf("demo: %w", err)
	}
	return st, nil
}

// readDemoState reads serve-demo.json and checks that it still describes
// chatDB.
func readDemoState(dir, chatDB string) (demoState, error) {
	var st demoState
	b, err := os.ReadFile(filepath.Join(dir, demoStateFile))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return demoState{}, fmt.Errorf("%s: %w", demoStateFile, err)
	}
	fi, err := os.Stat(chatDB)
	if err != nil {
		return demoState{}, err
	}
	if fi.Size() != st.ChatDBSize || fi.ModTime().UnixNano() != st.ChatDBModTime {
		return demoState{}, errors.New("the demo chat.db changed since serve --demo recorded it")
	}
	return st, nil
}

// lockFile holds an exclusive lock on path until the returned function is
// called, waiting while another process holds it.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// indexDemo syncs the demo data into its index before serving, so the
// first call already has every conversation (about a second on first
// use, milliseconds afterwards). It returns the index's counts in words.
func indexDemo(ctx context.Context, cfg *config.Config, logger *slog.Logger) (string, error) {
	srcs, _, closeSrcs, err := indexSources(ctx, cfg, logger)
	if err != nil {
		return "", err
	}
	defer closeSrcs()
	ix, err := openIndex(ctx, cfg, os.Getenv, logger, false)
	if err != nil {
		return "", err
	}
	defer ix.Close()
	if err := loadContacts(ctx, ix, cfg, io.Discard); err != nil {
		return "", err
	}
	if _, err := ix.Sync(ctx, index.SyncOptions{Embed: true}, srcs...); err != nil {
		return "", err
	}
	st, err := ix.Status(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d messages in %d conversations", st.Messages, st.Conversations), nil
}
