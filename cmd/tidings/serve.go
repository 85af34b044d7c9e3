package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
	"github.com/tidings-mcp/tidings/internal/service"
)

func init() {
	register(command{
		name:    "serve",
		summary: "run the MCP server (stdio; --http ADDR for Streamable HTTP + legacy SSE)",
		run:     runServe,
	})
}

// serveFlags are the settings `tidings serve` accepts on its command line;
// every other setting still comes from TIDINGS_* or config.toml.
var serveFlags = []string{"http", "http-token-file", "profile", "read-only", "demo", "toolsets",
	"log-level", "home", "region", "imessage", "ios-backup", "android-xml", "contacts", "bridge"}

// ServeEnv is what a serve hook sees: the resolved configuration and the
// dependencies it may fill before tools are built.
type ServeEnv struct {
	Config *config.Config
	Deps   *mcpserver.Deps
	Logger *slog.Logger
	// Contacts is the address book the query layer uses, once a hook has
	// built it; later hooks (the send gate) share it.
	Contacts service.ContactBook
	// OnClose functions run in reverse order when serve returns.
	OnClose []func()
}

type serveHook struct {
	name string
	fn   func(ctx context.Context, env *ServeEnv) error
}

var serveHooks []serveHook

// addServeHook registers a setup step for `tidings serve`, called from the
// init function of the file that owns it (index.go opens the index and sets
// Deps.Index; demo.go prepares demo data and sets Deps.DataSet; …). Hooks
// run in registration order (file name order within the package) after the
// configuration is loaded and before the tool inventory is built; an error
// stops the server with that error.
//
//lint:ignore U1000 called from the files of other subcommands as they land.
func addServeHook(name string, fn func(ctx context.Context, env *ServeEnv) error) {
	serveHooks = append(serveHooks, serveHook{name, fn})
}

func runServe(ctx context.Context, m *Main, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "Usage: tidings serve [flags]\n\nRuns the MCP server: stdio by default; with --http ADDR, POST /mcp (MCP 2026-07-28 and legacy sessions) and GET /sse.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	loader := config.Bind(fs, serveFlags...)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("serve takes no arguments (got %q)", fs.Args())}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	if cfg.Demo && cfg.Bridge != "" {
		return usageError{"--demo and --bridge exclude each other: the demo data is served in-process, a bridge serves the helper's data"}
	}
	logger := newLogger(m.Stderr, cfg.LogLevel)

	transport := "stdio"
	if cfg.HTTP != "" {
		transport = "http"
	}
	deps := &mcpserver.Deps{
		Config:    cfg,
		Version:   Version,
		Now:       cfg.Now,
		Logger:    logger,
		Transport: transport,
		DataSet:   defaultDataSet(cfg),
	}
	if cfg.Profile != "" {
		p, err := mcpserver.LoadProfile(cfg.Profile)
		if err != nil {
			return err
		}
		deps.Profile = p
	}
	env := &ServeEnv{Config: cfg, Deps: deps, Logger: logger}
	defer func() {
		for i := len(env.OnClose) - 1; i >= 0; i-- {
			env.OnClose[i]()
		}
	}()
	for _, h := range serveHooks {
		if err := h.fn(ctx, env); err != nil {
			return fmt.Errorf("serve setup (%s): %w", h.name, err)
		}
	}
	if deps.Checks == nil { // a hook may supply them (bridge mode asks the helper)
		deps.Checks = func(ctx context.Context) []mcpserver.CheckResult { return runChecks(ctx, cfg) }
	}

	srv, err := mcpserver.New(deps, mcpserver.Filters{
		ReadOnly:   cfg.ReadOnly,
		EnableSend: cfg.EnableSend,
		Demo:       cfg.Demo,
		Toolsets:   cfg.Toolsets,
		Profile:    deps.Profile,
	})
	if err != nil {
		return err
	}
	logger.Info("tidings serve", "version", Version, "transport", transport, "tools", strings.Join(srv.Selection.Names(), ","),
		"read_only", cfg.ReadOnly, "data_set", deps.DataSet.Kind)

	if cfg.HTTP != "" {
		token := cfg.HTTPToken
		if token == "" && cfg.HTTPTokenFile != "" {
			if token, err = mcpserver.ReadTokenFile(cfg.HTTPTokenFile); err != nil {
				return err
			}
		}
		return mcpserver.ListenAndServe(ctx, srv.SDK, mcpserver.ListenOptions{
			Addr:        cfg.HTTP,
			HTTPOptions: mcpserver.HTTPOptions{Token: token, Logger: logger},
			Ready: func(a net.Addr) {
				fmt.Fprintf(m.Stderr, "tidings: serving MCP at http://%s/mcp (legacy SSE: http://%s/sse)\n", a, a)
			},
		})
	}

	if isTerminal(m.Stdin) {
		printTTYHint(m.Stderr, deps.DataSet)
	}
	in, ok := m.Stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(m.Stdin)
	}
	out, ok := m.Stdout.(io.WriteCloser)
	if !ok {
		out = nopWriteCloser{m.Stdout}
	}
	return mcpserver.ServeStdio(ctx, srv.SDK, in, out)
}

// howToGetData tells a person (or the model, in get_status) how to give
// Tidings something to serve.
const howToGetData = "to try Tidings, run `tidings serve --demo` (a made-up data set, generated on first use); " +
	"to serve your own messages, pass --imessage PATH (a Mac's chat.db), --ios-backup DIR (an unencrypted iPhone backup) " +
	"or --android-xml FILE (an SMS Backup & Restore export), or set them in config.toml; `tidings doctor` checks what is found"

// defaultDataSet describes the data before any hook knows better (the
// demo hook and the index hook replace it).
func defaultDataSet(cfg *config.Config) mcpserver.DataSet {
	if cfg.Demo {
		return mcpserver.DataSet{Kind: "demo", Empty: true, Note: "demo mode: the demo data set is not ready yet"}
	}
	if cfg.IMessage == "" && cfg.IOSBackup == "" && len(cfg.AndroidXML) == 0 {
		return mcpserver.DataSet{Kind: "personal", Empty: true,
			Note: "no message source is configured and there is no message index yet: " + howToGetData}
	}
	return mcpserver.DataSet{Kind: "personal", Empty: true,
		Note: "no messages were indexed when this server started (a first sync may be running: see index); sources and checks say what was found; " + howToGetData}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newLogger logs to w (stderr) only: stdout belongs to the protocol.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: quoteAttr}))
}

// quoteAttr escapes and bounds every string and error a log line carries
// (sanitize.Message): an error quoting a file's content must not reach
// the terminal raw through the log either (docs/security.md, "Errors that
// quote input").
func quoteAttr(_ []string, a slog.Attr) slog.Attr {
	switch v := a.Value.Resolve(); {
	case v.Kind() == slog.KindString:
		if q := sanitize.Message(v.String()); q != v.String() {
			a.Value = slog.StringValue(q)
		}
	case v.Kind() == slog.KindAny:
		if err, ok := v.Any().(error); ok && err != nil {
			a.Value = slog.StringValue(sanitize.Message(err.Error()))
		}
	}
	return a
}

// isTerminal reports whether r is a terminal (a person typing), not a pipe,
// a file or /dev/null.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// printTTYHint tells a person who started `tidings serve` in a terminal what
// it is waiting for, instead of hanging silently, and what data it serves
// (or how to give it some).
func printTTYHint(w io.Writer, ds mcpserver.DataSet) {
	exe, err := os.Executable()
	if err != nil {
		exe = "tidings"
	}
	fmt.Fprintf(w, `tidings serve is an MCP server: it is waiting for an MCP client to speak JSON-RPC on stdin.
Add it to your assistant instead of running it by hand, e.g. in Claude Desktop's claude_desktop_config.json:

  {"mcpServers": {"tidings": {"command": %q, "args": ["serve"]}}}

or: claude mcp add tidings -- %s serve
`, exe, exe)
	var try []string
	for _, c := range []string{"search", "review", "doctor"} {
		if _, ok := commands[c]; ok {
			try = append(try, "tidings "+c)
		}
	}
	if len(try) > 0 {
		fmt.Fprintf(w, "To try it by hand: %s.\n", strings.Join(try, ", "))
	}
	switch {
	case ds.Kind == "demo" && !ds.Empty:
		fmt.Fprintf(w, "Serving the demo data set (made-up people and messages).\n")
	case ds.Empty:
		fmt.Fprintf(w, "Data: %s.\n", ds.Note)
	}
	fmt.Fprintf(w, "Press Ctrl-D or Ctrl-C to stop.\n")
}
