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
	"path/filepath"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/tidings-mcp/tidings/internal/app"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
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
	"log-level", "home", "region", "imessage", "ios-backup", "android-xml", "contacts", "bridge", "hardened-allowlist"}

// ServeEnv is what a setup step sees: the object graph of internal/app
// (the resolved configuration, the dependencies it may fill before tools
// are built, the contacts book, what to close).
type ServeEnv = app.Graph

// serveSteps are the setup steps of `tidings serve`, run in this order
// after the configuration and profile are loaded and before the services
// and tools are built (docs/architecture.md, "Setup order"). The order is
// this list, never init order:
//
//   - bridge: `serve --bridge`, every message tool and every Bridged
//     service tool through the helper (bridge.go);
//   - demo: `--demo`, generate/reuse the demo data and point the config
//     at it (demo.go);
//   - index: open the index and watch the sources (index.go);
//   - dataset: data_set follows the index while serving (serve_dataset.go);
//   - service: the query layer and the contacts book (serve_service.go);
//   - send: the send gate, sharing the contacts book (serve_send.go).
var serveSteps = []app.Step{
	{Name: "bridge", Run: serveBridge},
	{Name: "demo", Run: serveDemo},
	{Name: "index", Run: serveIndex},
	{Name: "dataset", Run: serveDataSet},
	{Name: "service", Run: serveService},
	{Name: "send", Run: serveSend},
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
	g, err := app.Build(ctx, app.Options{
		Config:    cfg,
		Logger:    logger,
		Version:   Version,
		Transport: transport,
		DataSet:   defaultDataSet(cfg),
		Steps:     serveSteps,
		Checks:    doctorChecks,
		Services:  app.Services,
		Endpoints: externalEndpoints(cfg),
	})
	if err != nil {
		return err
	}
	defer g.Close()
	deps := g.Deps
	srv, err := g.Server()
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
		printTTYHint(m.Stderr, deps.DataSet, cfg, executable())
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

// executable is the path of the running binary, or "tidings".
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return "tidings"
	}
	return exe
}

// isTerminal reports whether r is a terminal (a person typing), not a pipe,
// a file or /dev/null.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// printTTYHint tells a person who started `tidings serve` in a terminal what
// it is waiting for, instead of hanging silently, and what data it serves
// (or how to give it some). Every command it prints works as printed
// (TestDemoNextStepsWorkAsPrinted): the client snippets keep --demo, the
// demo's commands name its home (it is not the personal one), and a
// binary that `go run` left in the build cache — deleted when the run
// ends — is replaced by the path `go install` puts one at.
func printTTYHint(w io.Writer, ds mcpserver.DataSet, cfg *config.Config, exe string) {
	prog := exe
	if isBuildCache(exe) {
		prog = installedPath(os.Getenv)
		fmt.Fprintf(w, "This tidings was built by `go run` into a temporary folder that goes away when it stops.\n"+
			"For an assistant, install a binary first: go install ./cmd/tidings (it lands at %s).\n\n", prog)
	}
	args := `"serve"`
	if cfg.Demo {
		args = `"serve", "--demo"`
	}
	fmt.Fprintf(w, `tidings serve is an MCP server: it is waiting for an MCP client to speak JSON-RPC on stdin.
Add it to your assistant instead of running it by hand, e.g. in Claude Desktop's claude_desktop_config.json:

  {"mcpServers": {"tidings": {"command": %q, "args": [%s]}}}

or: claude mcp add tidings -- %s %s
`, prog, args, prog, strings.ReplaceAll(strings.ReplaceAll(args, `"`, ""), ",", ""))
	run := prog
	if isBuildCache(exe) {
		run = "go run ./cmd/tidings"
	}
	var try []string
	if cfg.Demo {
		// The demo lives in its own home, with its contacts remembered
		// there (serveDemo), so the query commands need --home.
		home := shellQuote(cfg.Home)
		try = []string{"search --home " + home + " \"dinner on friday\"", "review --home " + home + " --days 7", "dossier --home " + home + " Linda"}
	} else {
		for _, c := range []string{"search \"dinner\"", "review", "doctor"} {
			if _, ok := commands[strings.Fields(c)[0]]; ok {
				try = append(try, c)
			}
		}
	}
	if len(try) > 0 {
		fmt.Fprintf(w, "To try it by hand:\n")
		for _, c := range try {
			fmt.Fprintf(w, "  $ %s %s\n", run, c)
		}
	}
	switch {
	case ds.Kind == "demo" && !ds.Empty:
		fmt.Fprintf(w, "Serving the demo data set (made-up people and messages).\n")
	case ds.Empty:
		fmt.Fprintf(w, "Data: %s.\n", ds.Note)
	}
	fmt.Fprintf(w, "Press Ctrl-D or Ctrl-C to stop.\n")
}

// isBuildCache reports whether exe is a binary `go run` built into a
// temporary go-build folder.
func isBuildCache(exe string) bool {
	for _, dir := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(dir, "go-build") {
			return true
		}
	}
	return false
}

// installedPath is where `go install ./cmd/tidings` puts the binary:
// $GOBIN, else the first $GOPATH entry's bin, else ~/go/bin.
func installedPath(getenv func(string) string) string {
	if b := getenv("GOBIN"); b != "" {
		return filepath.Join(b, "tidings")
	}
	if p := filepath.SplitList(getenv("GOPATH")); len(p) > 0 && p[0] != "" {
		return filepath.Join(p[0], "bin", "tidings")
	}
	return filepath.Join(getenv("HOME"), "go", "bin", "tidings")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
