package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/app"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

func init() {
	register(command{
		name:    "doctor",
		summary: "check configuration, data sources and permissions; print each problem with its fix",
		run:     runDoctor,
	})
}

// doctorChecks are the process's own checks, in this order, for `tidings
// doctor` and get_status' checks; each service's checks follow them
// (mcpserver.ServiceChecks over app.Services). They must not change
// anything or print message content (docs/architecture.md, "How to add a
// doctor check"). The order is this list, never init order.
var doctorChecks = []app.Check{
	{Name: "config", Run: checkConfig},
	{Name: "home", Run: checkHome},
	{Name: "imessage", Run: checkIMessage},
	{Name: "sources", Run: checkSources},
	{Name: "access", Run: checkAccess},
	{Name: "http", Run: checkHTTP},
	{Name: "index", Run: checkIndex}, // index.go
}

// runChecks runs every check of doctorChecks. A panicking check is
// reported as failed instead of taking the server down.
func runChecks(ctx context.Context, cfg *config.Config) []mcpserver.CheckResult {
	return app.RunChecks(ctx, cfg, doctorChecks)
}

// doctorServiceChecks builds the services of app.Services as serve would
// and runs their checks. A service that cannot be built (wrong
// configuration) is itself the finding.
func doctorServiceChecks(ctx context.Context, cfg *config.Config, logger *slog.Logger) []mcpserver.CheckResult {
	var profile *mcpserver.Profile
	if cfg.Profile != "" {
		profile, _ = mcpserver.LoadProfile(cfg.Profile) // checkAccess reports a profile that cannot be read
	}
	svcs, err := app.BuildServices(app.NewServiceEnv(cfg, logger, profile), app.Services)
	if err != nil {
		return []mcpserver.CheckResult{{Name: "services", Status: "fail", Detail: err.Error(),
			Fix: "correct the named setting in config.toml"}}
	}
	return mcpserver.ServiceChecks(ctx, svcs)
}

const doctorUsage = `Usage: tidings doctor [--json] [--open-settings] [flags]

Checks what tidings serve would find with the same settings (flags,
TIDINGS_* and config.toml): the message sources and contacts, their
permissions, the index, the HTTP settings and the profile, and prints each
problem with its fix. It changes nothing. Exit status 1 when a check fails.
On macOS, --open-settings opens System Settings at Privacy & Security → Full
Disk Access, where the binary named in the fix is granted.

Flags:
`

func runDoctor(ctx context.Context, m *Main, args []string) error {
	fs := newFlagSet(m, "doctor", doctorUsage)
	asJSON := fs.Bool("json", false, "print the results as JSON")
	openSettings := fs.Bool("open-settings", false, "macOS: open System Settings at Full Disk Access")
	loader := config.Bind(fs, "home", "http", "http-token-file", "profile", "imessage", "ios-backup", "android-xml", "contacts")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if *openSettings {
		return openFullDiskAccessPane(ctx, runtime.GOOS, m.Stdout)
	}
	cfg, err := loader.Load(m.Getenv)
	var results []mcpserver.CheckResult
	if err != nil {
		// The configuration itself is broken: that is the finding.
		results = []mcpserver.CheckResult{{Name: "config", Status: "fail", Detail: err.Error(),
			Fix: "correct the named setting in config.toml, the environment variable or the flag"}}
	} else {
		results = append(runChecks(ctx, cfg), doctorServiceChecks(ctx, cfg, newLogger(m.Stderr, cfg.LogLevel))...)
	}
	failed := 0
	for _, r := range results {
		if r.Status == "fail" {
			failed++
		}
	}
	if *asJSON {
		enc := json.NewEncoder(m.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	} else {
		marks := map[string]string{"ok": "ok  ", "warn": "warn", "fail": "FAIL", "skip": "skip"}
		for _, r := range results {
			fmt.Fprintf(m.Stdout, "%s  %s", marks[r.Status], r.Name)
			if r.Detail != "" {
				fmt.Fprintf(m.Stdout, ": %s", r.Detail)
			}
			fmt.Fprintln(m.Stdout)
			if r.Fix != "" && r.Status != "ok" {
				fmt.Fprintf(m.Stdout, "      fix: %s\n", r.Fix)
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed", failed)
	}
	return nil
}

func checkConfig(_ context.Context, cfg *config.Config) []mcpserver.CheckResult {
	r := mcpserver.CheckResult{Name: "config", Status: "ok"}
	if cfg.ConfigFile != "" {
		r.Detail = "read " + cfg.ConfigFile
	} else {
		r.Detail = "no " + cfg.Path(config.FileName) + "; using defaults, TIDINGS_* variables and flags"
	}
	out := []mcpserver.CheckResult{r}
	if cfg.NowRaw != "" {
		out = append(out, mcpserver.CheckResult{Name: "clock", Status: "warn", Detail: "clock pinned to " + cfg.NowRaw + " by TIDINGS_NOW",
			Fix: "unset TIDINGS_NOW unless you are reproducing a run"})
	}
	if cfg.Profile != "" {
		if _, err := mcpserver.LoadProfile(cfg.Profile); err != nil {
			out = append(out, mcpserver.CheckResult{Name: "profile", Status: "fail", Detail: err.Error(), Fix: "fix the profile file or drop --profile"})
		} else {
			out = append(out, mcpserver.CheckResult{Name: "profile", Status: "ok", Detail: cfg.Profile})
		}
	}
	return out
}

// checkHome verifies that the data folder, which will hold a copy of
// message content, is private to the user.
func checkHome(_ context.Context, cfg *config.Config) []mcpserver.CheckResult {
	r := mcpserver.CheckResult{Name: "home"}
	fi, err := os.Stat(cfg.Home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Status, r.Detail = "warn", cfg.Home+" does not exist yet"
		r.Fix = fmt.Sprintf("it is created on first use; to create it now: mkdir -p -m 700 %q", cfg.Home)
	case err != nil:
		r.Status, r.Detail, r.Fix = "fail", err.Error(), "make the folder readable by your user or set TIDINGS_HOME"
	case !fi.IsDir():
		r.Status, r.Detail, r.Fix = "fail", cfg.Home+" is not a folder", "remove it or point TIDINGS_HOME elsewhere"
	case fi.Mode().Perm()&0o077 != 0:
		r.Status, r.Detail = "fail", fmt.Sprintf("%s has mode %04o: other users could read the index", cfg.Home, fi.Mode().Perm())
		r.Fix = fmt.Sprintf("chmod 700 %q", cfg.Home)
	default:
		r.Status, r.Detail = "ok", cfg.Home+" (private)"
	}
	return []mcpserver.CheckResult{r}
}

// checkIMessage runs the iMessage package's own diagnosis of the
// configured chat.db/sms.db and iPhone backup.
func checkIMessage(ctx context.Context, cfg *config.Config) []mcpserver.CheckResult {
	var out []mcpserver.CheckResult
	add := func(cs []imessage.Check) {
		for _, c := range cs {
			r := mcpserver.CheckResult{Name: c.Name, Status: "ok", Detail: c.Detail}
			if !c.OK {
				r.Status, r.Fix = "fail", c.Fix
			}
			out = append(out, r)
		}
	}
	if cfg.IMessage != "" {
		add(imessage.CheckDatabase(ctx, cfg.IMessage))
	}
	if cfg.IOSBackup != "" {
		add(imessage.CheckBackup(ctx, cfg.IOSBackup))
	}
	return out
}

func checkSources(ctx context.Context, cfg *config.Config) []mcpserver.CheckResult {
	var srcs []mcpserver.SourceStatus
	for _, s := range (mcpserver.SourcesFromConfig{Config: cfg}).SourceStatus(ctx) {
		if s.Kind != "imessage" && s.Kind != "ios_backup" { // checkIMessage covers those in depth
			srcs = append(srcs, s)
		}
	}
	if len(srcs) == 0 && cfg.IMessage == "" && cfg.IOSBackup == "" {
		fix := "pass --ios-backup DIR (an unencrypted iPhone backup) or --android-xml FILE (SMS Backup & Restore), or try tidings serve --demo"
		if runtime.GOOS == "darwin" {
			fix = "set --imessage ~/Library/Messages/chat.db, or try tidings serve --demo"
		}
		return []mcpserver.CheckResult{{Name: "sources", Status: "warn", Detail: "no data source configured", Fix: fix}}
	}
	flagOf := map[string]string{"android_xml": "--android-xml FILE", "contacts": "--contacts PATH"}
	var out []mcpserver.CheckResult
	for _, s := range srcs {
		r := mcpserver.CheckResult{Name: "source " + s.Kind, Detail: s.Path + ": " + s.Detail}
		switch {
		case s.Found && s.Detail != "file" && s.Detail != "folder":
			r.Status = "fail"
			r.Fix = "grant read access; on macOS add the app that runs Tidings (Terminal, Claude) under System Settings > Privacy & Security > Full Disk Access"
		case s.Found:
			r.Status = "ok"
		default:
			r.Status = "warn"
			r.Fix = "check the path, or set it with " + flagOf[s.Kind] + " / config.toml"
		}
		out = append(out, r)
	}
	return out
}

func checkAccess(_ context.Context, cfg *config.Config) []mcpserver.CheckResult {
	switch {
	case cfg.ReadOnly:
		return []mcpserver.CheckResult{{Name: "send", Status: "ok", Detail: "read-only: no write tool is registered"}}
	case cfg.EnableSend:
		return []mcpserver.CheckResult{{Name: "send", Status: "warn", Detail: "ENABLE_MCP_SEND_MESSAGE=true: send tools are registered (each send still needs your confirmation)",
			Fix: "unset ENABLE_MCP_SEND_MESSAGE, or run tidings serve --read-only, if assistants should not send"}}
	}
	return []mcpserver.CheckResult{{Name: "send", Status: "ok", Detail: "send tools quarantined (ENABLE_MCP_SEND_MESSAGE is not true)"}}
}

func checkHTTP(_ context.Context, cfg *config.Config) []mcpserver.CheckResult {
	if cfg.HTTP == "" {
		return nil
	}
	r := mcpserver.CheckResult{Name: "http", Status: "ok", Detail: cfg.HTTP}
	host, _, err := net.SplitHostPort(cfg.HTTP)
	if err != nil {
		r.Status, r.Detail, r.Fix = "fail", fmt.Sprintf("%q is not host:port", cfg.HTTP), "use e.g. 127.0.0.1:7740"
		return []mcpserver.CheckResult{r}
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	token := cfg.HTTPToken != ""
	if token {
		// The one rule serve applies (mcpserver.CheckToken), whatever the bind.
		if err := mcpserver.CheckToken(cfg.HTTPToken); err != nil {
			r.Status, r.Detail, r.Fix = "fail", "TIDINGS_HTTP_TOKEN: "+err.Error(), "set TIDINGS_HTTP_TOKEN to at least 16 random characters (openssl rand -hex 32)"
			return []mcpserver.CheckResult{r}
		}
	}
	if cfg.HTTPTokenFile != "" {
		if _, err := mcpserver.ReadTokenFile(cfg.HTTPTokenFile); err != nil {
			r.Status, r.Detail, r.Fix = "fail", err.Error(), "create the file with a long random token and chmod 600 it"
			return []mcpserver.CheckResult{r}
		}
		token = true
	}
	if !loopback && !token {
		r.Status, r.Detail = "fail", cfg.HTTP+" is reachable from other machines but no bearer token is set"
		r.Fix = "bind 127.0.0.1, or set TIDINGS_HTTP_TOKEN / --http-token-file"
	}
	return []mcpserver.CheckResult{r}
}

// fullDiskAccessPane is the System Settings URL of Privacy & Security →
// Full Disk Access (macOS 13 and later accept it, as did System Preferences).
const fullDiskAccessPane = "x-apple.systempreferences:com.apple.preference.security?Privacy_AllFiles"

// openFullDiskAccessPane runs `open` with the pane's URL: argv, no shell,
// bounded. Elsewhere it says there is nothing to open.
func openFullDiskAccessPane(ctx context.Context, goos string, w io.Writer) error {
	if goos != "darwin" {
		return fmt.Errorf("--open-settings opens macOS System Settings; on %s, make sure the user running tidings can read its sources", goos)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "open", fullDiskAccessPane).CombinedOutput(); err != nil {
		return fmt.Errorf("open System Settings: %v (%s); open it by hand: Privacy & Security → Full Disk Access", err, strings.TrimSpace(string(out)))
	}
	fmt.Fprintln(w, "Opened System Settings at Privacy & Security → Full Disk Access: add the tidings binary named by `tidings doctor`, then restart the app that runs it.")
	return nil
}
