package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/bridge"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

func init() {
	register(command{
		name:    "bridge",
		summary: "bridge client and installer: call ACTION [PARAMS_JSON] | install | uninstall",
		run:     runBridge,
	})
}

// serveBridge sets `tidings serve --bridge DIR` up: every message tool
// and every Bridged service tool answers through the helper in DIR, and this process opens neither chat.db nor
// the index (the index hook and the checks skip them in bridge mode). A
// helper that speaks another major protocol version stops the server
// (fail closed); one that is not running yet is only a warning, since the
// MCP client may start before it.
func serveBridge(ctx context.Context, env *ServeEnv) error {
	cfg := env.Config
	if cfg.Bridge == "" {
		return nil
	}
	dir, err := filepath.Abs(cfg.Bridge)
	if err != nil {
		return err
	}
	c := bridge.NewClient(dir)
	env.OnClose = append(env.OnClose, func() { c.Close() })
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	st, err := c.Connect(pctx)
	cancel()
	switch {
	case err == nil:
		env.Logger.Info("bridge helper connected", "bridge", dir, "helper", st.HelperVersion, "protocol", st.ProtocolVersion, "role", st.BridgeRole)
		if st.BridgeRole != string(bridge.RoleHost) {
			return fmt.Errorf("the bridge helper in %s has role %q; tidings serve needs a host bridge (unset IMESSAGE_BRIDGE_ROLE for that helper)", dir, st.BridgeRole)
		}
	case errors.Is(err, bridge.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrNotExist), strings.Contains(err.Error(), "does not exist"):
		env.Logger.Warn("bridge helper not answering yet; tools will try again on each call", "bridge", dir, "err", err)
	default:
		return err // incompatible version, unsafe folder: fail closed
	}
	remote := &bridgeRemote{c: c, dir: dir}
	env.Deps.DataSet = mcpserver.DataSet{Kind: "bridge", Note: remote.via()}
	env.Deps.DataSetNow = remote.dataSet
	env.Deps.Index = remote
	env.Deps.Sources = remote
	env.Deps.Checks = remote.checks
	env.Deps.Send = bridge.RemoteSend{C: c}
	env.Deps.Messages = bridge.RemoteMessages{C: c}
	// Bridged service tools answer through the helper, which runs the same
	// tool (helperToolExtensions): the helper owns every service's sync,
	// secrets and stores.
	env.Deps.BridgeCall = func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return bridge.ForwardTool(ctx, c, tool, args)
	}
	return nil
}

// bridgeRemote reports, for get_status, what the helper reports.
type bridgeRemote struct {
	c   *bridge.Client
	dir string
}

// helperStatus asks the helper for status (1.3: with its extra fields).
func (r *bridgeRemote) helperStatus(ctx context.Context) (*bridge.Response, *bridge.StatusResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := r.c.Call(ctx, bridge.ActionStatus, nil)
	if err != nil {
		return nil, nil, err
	}
	var st bridge.StatusResult
	if err := resp.Decode(&st); err != nil {
		return nil, nil, err
	}
	return resp, &st, bridge.CheckVersion(st.ProtocolVersion)
}

func (r *bridgeRemote) via() string {
	return "answers come from the bridge helper in " + r.dir + "; this process opens neither chat.db nor the index"
}

// dataSet is get_status' data_set in bridge mode, asked of the helper on
// every call: a helper that stopped answering, an index still being built
// or one that is empty is said as it is now, not as it was at start.
func (r *bridgeRemote) dataSet(ctx context.Context) mcpserver.DataSet {
	ds := mcpserver.DataSet{Kind: "bridge", Note: r.via()}
	resp, st, err := r.helperStatus(ctx)
	if err != nil {
		ds.Empty = true
		ds.Note = "the bridge helper in " + r.dir + " is not answering (" + err.Error() + "); start it with `tidings bridge install` (or `tidings helper --bridge-dir " + r.dir + " --watch`)"
		return ds
	}
	var extra struct {
		Index *mcpserver.IndexStatus `json:"index"`
	}
	if resp.Decode(&extra) != nil || extra.Index == nil {
		ds.Note += fmt.Sprintf("; the helper (version %s) does not report its index", st.HelperVersion)
		return ds
	}
	switch ix := extra.Index; {
	case ix.Messages > 0:
	case ix.State == "absent":
		ds.Note += "; the helper opens its index on the first question"
	case ix.State == "building":
		ds.Empty = true
		ds.Note += "; the helper is building its index: " + ix.Note
	case ix.State == "error":
		ds.Empty = true
		ds.Note += "; the helper cannot read its index: " + ix.Note
	default:
		ds.Empty = true
		ds.Note += "; the helper's index holds no messages: check the helper's sources (--imessage, --ios-backup, --android-xml) and its Full Disk Access"
	}
	return ds
}

// IndexStatus implements mcpserver.IndexStatusProvider: the index lives
// in the helper; its figures come from the helper's 1.3 status ("index")
// when it reports them.
func (r *bridgeRemote) IndexStatus(ctx context.Context) (mcpserver.IndexStatus, error) {
	resp, _, err := r.helperStatus(ctx)
	if err != nil {
		return mcpserver.IndexStatus{}, err
	}
	var extra struct {
		Index *mcpserver.IndexStatus `json:"index"`
	}
	if resp.Decode(&extra) == nil && extra.Index != nil {
		return *extra.Index, nil
	}
	return mcpserver.IndexStatus{State: "absent", Note: "the index lives in the bridge helper (" + r.dir + "), which does not report it; this process never opens it"}, nil
}

// SourceStatus implements mcpserver.SourceStatusProvider: the one source
// of this process is the bridge folder.
func (r *bridgeRemote) SourceStatus(ctx context.Context) []mcpserver.SourceStatus {
	s := mcpserver.SourceStatus{Kind: "bridge", Path: r.dir}
	if _, st, err := r.helperStatus(ctx); err != nil {
		s.Detail = err.Error()
	} else {
		s.Found = true
		s.Detail = fmt.Sprintf("helper %s, protocol %s, role %s", st.HelperVersion, st.ProtocolVersion, st.BridgeRole)
	}
	return []mcpserver.SourceStatus{s}
}

// checks turns the helper's local boolean checks into doctor results.
func (r *bridgeRemote) checks(ctx context.Context) []mcpserver.CheckResult {
	_, st, err := r.helperStatus(ctx)
	if err != nil {
		return []mcpserver.CheckResult{{Name: "bridge helper", Status: "fail", Detail: err.Error(),
			Fix: "start the helper: tidings bridge install (or tidings helper --bridge-dir " + r.dir + " --watch); on macOS grant it Full Disk Access"}}
	}
	out := []mcpserver.CheckResult{{Name: "bridge helper", Status: "ok",
		Detail: fmt.Sprintf("helper %s answers protocol %s as %s", st.HelperVersion, st.ProtocolVersion, st.BridgeRole)}}
	fixes := map[string]string{
		bridge.CheckDatabase:     "grant the helper binary Full Disk Access (System Settings → Privacy & Security → Full Disk Access) and check its --imessage path",
		bridge.CheckConfirmation: "sending needs a native confirmation dialog: macOS osascript, or zenity/kdialog with a display on Linux",
		bridge.CheckLogFile:      "control/log.txt must be a regular file owned by you with mode 0600 (not a symlink)",
	}
	names := make([]string, 0, len(st.Checks))
	for k := range st.Checks {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		c := mcpserver.CheckResult{Name: "bridge helper: " + k, Status: "ok"}
		if !st.Checks[k] {
			c.Status, c.Fix = "warn", fixes[k]
			if c.Fix == "" {
				c.Fix = "the helper refuses unsafe bridge folders: every runtime folder must be yours with mode 0700"
			}
		}
		out = append(out, c)
	}
	if st.Policy.Error != "" {
		out = append(out, mcpserver.CheckResult{Name: "bridge helper: read policy", Status: "fail", Detail: st.Policy.Error,
			Fix: "fix the files in " + filepath.Join(r.dir, "contacts") + " (tidings policy list --home " + r.dir + ")"})
	}
	return out
}

const bridgeUsage = `Usage:
  tidings bridge call ACTION [PARAMS_JSON] [--bridge-dir DIR] [--timeout 15s] [--protocol 1.3|1.2]
  tidings bridge install [--bridge-dir DIR] [--mode watch|once] [--role manager] [source flags]
  tidings bridge uninstall

call sends one request through the bridge folder and prints the response
JSON (exit status 1 when "ok" is false). It asks status first and refuses a
helper of another major protocol version. A send waits at least 3 minutes,
whatever --timeout says: the helper's confirmation dialog alone may take 60 s.

install sets up the helper for this user: a LaunchAgent on macOS
(~/Library/LaunchAgents/` + bridge.LaunchdLabel + `.plist), systemd user units on
Linux (~/.config/systemd/user/` + bridge.SystemdUnit + `.*). --mode watch (default)
keeps one helper running and answers in milliseconds; --mode once starts the
helper when a request appears (launchd WatchPaths, ThrottleInterval 1; a
systemd .path unit). The helper gets the source flags you pass here
(--imessage, --contacts, …) so it reads the same data. On macOS, grant the
printed binary Full Disk Access.

uninstall stops and removes the helper's service files; the bridge folder and
its policy (contacts/*.txt) stay.
`

func runBridge(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(m.Stdout, bridgeUsage)
		return nil
	}
	switch args[0] {
	case "call":
		return runBridgeCall(ctx, m, args[1:])
	case "install":
		return runBridgeInstall(ctx, m, args[1:])
	case "uninstall":
		return runBridgeUninstall(ctx, m, args[1:])
	}
	return usageError{fmt.Sprintf("unknown bridge verb %q (want call, install or uninstall)", args[0])}
}

func runBridgeCall(ctx context.Context, m *Main, args []string) error {
	fs := flag.NewFlagSet("bridge call", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() { fmt.Fprint(m.Stderr, bridgeUsage) }
	dirFlag := fs.String("bridge-dir", "", "the bridge folder (default: TIDINGS_BRIDGE, else $TIDINGS_HOME/bridge)")
	timeout := fs.Duration("timeout", bridge.DefaultTimeout, "how long to wait for the helper")
	proto := fs.String("protocol", bridge.Version13, "protocol version to speak: 1.3 (with the extension) or 1.2 (exactly protocol 1.2, docs/bridge.md)")
	loader := config.Bind(fs, "home")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageError{"bridge call needs ACTION and optionally PARAMS_JSON (a JSON object)"}
	}
	if *proto != bridge.Version12 && *proto != bridge.Version13 {
		return usageError{fmt.Sprintf("--protocol %q: want 1.2 or 1.3", *proto)}
	}
	var params json.RawMessage
	if len(pos) == 2 {
		params = json.RawMessage(pos[1])
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(params, &obj); err != nil || obj == nil {
			return usageError{fmt.Sprintf("PARAMS_JSON must be a JSON object, e.g. '{\"days\": 2}' (got %q)", pos[1])}
		}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	c := bridge.NewClient(bridgeDirFor(*dirFlag, cfg))
	defer c.Close()
	c.Timeout, c.Version = *timeout, *proto
	action := pos[0]
	if action != bridge.ActionStatus {
		if _, err := c.Connect(ctx); err != nil {
			return err
		}
	}
	resp, callErr := c.Call(ctx, action, params)
	if resp == nil {
		return callErr
	}
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(resp.Raw), "", "  "); err != nil {
		return fmt.Errorf("bridge response: %w", err)
	}
	out.WriteByte('\n')
	m.Stdout.Write(out.Bytes())
	if action == bridge.ActionStatus && callErr == nil {
		var st bridge.StatusResult
		if err := resp.Decode(&st); err == nil {
			if err := bridge.CheckVersion(st.ProtocolVersion); err != nil {
				return err
			}
		}
	}
	return callErr
}

// installFlags are the settings passed on to the installed helper.
var installFlags = []string{"home", "region", "imessage", "ios-backup", "android-xml", "contacts"}

func runBridgeInstall(ctx context.Context, m *Main, args []string) error {
	fs := flag.NewFlagSet("bridge install", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() { fmt.Fprint(m.Stderr, bridgeUsage); fs.PrintDefaults() }
	dirFlag := fs.String("bridge-dir", "", "the bridge folder (default: TIDINGS_BRIDGE, else $TIDINGS_HOME/bridge)")
	mode := fs.String("mode", bridge.ModeWatch, "watch (one helper stays up; milliseconds) or once (started per request)")
	role := fs.String("role", "", `bridge role: "" (host, for AI assistants) or "manager" (policy tooling)`)
	dryRun := fs.Bool("dry-run", false, "print the service files instead of installing them")
	loader := config.Bind(fs, installFlags...)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("bridge install takes no arguments (got %q)", fs.Args())}
	}
	if *mode != bridge.ModeWatch && *mode != bridge.ModeOnce {
		return usageError{fmt.Sprintf("--mode %q: want watch or once", *mode)}
	}
	if _, err := bridge.ParseRole(*role); err != nil {
		return usageError{fmt.Sprintf("--role %q: want manager, or nothing for a host bridge", *role)}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	spec, err := installSpec(cfg, *dirFlag, *mode, *role)
	if err != nil {
		return usageError{err.Error()}
	}
	in := installer(m)
	if *dryRun {
		return printUnits(m, in, spec)
	}
	return in.Install(ctx, spec)
}

// installSpec builds the helper's service definition: the exact binary
// (symlinks resolved, since macOS attaches Full Disk Access to the file)
// and the data settings the helper must read.
func installSpec(cfg *config.Config, dirFlag, mode, role string) (bridge.InstallSpec, error) {
	exe, err := os.Executable()
	if err != nil {
		return bridge.InstallSpec{}, fmt.Errorf("locate the tidings binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	dir, err := filepath.Abs(bridgeDirFor(dirFlag, cfg))
	if err != nil {
		return bridge.InstallSpec{}, err
	}
	args := []string{"--home", cfg.Home}
	if cfg.Origins["region"] != "default" && cfg.Region != "" {
		args = append(args, "--region", cfg.Region)
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	if cfg.IMessage != "" {
		args = append(args, "--imessage", abs(cfg.IMessage))
	}
	if cfg.IOSBackup != "" {
		args = append(args, "--ios-backup", abs(cfg.IOSBackup))
	}
	for _, p := range cfg.AndroidXML {
		args = append(args, "--android-xml", abs(p))
	}
	for _, p := range cfg.Contacts {
		args = append(args, "--contacts", abs(p))
	}
	return bridge.InstallSpec{Program: exe, BridgeDir: dir, Mode: mode, Role: role, Args: args}, nil
}

func installer(m *Main) bridge.Installer {
	home, _ := os.UserHomeDir()
	if h := m.Getenv("HOME"); h != "" {
		home = h
	}
	cfgHome := m.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(cfgHome) {
		cfgHome = ""
	}
	return bridge.Installer{GOOS: runtime.GOOS, Home: home, ConfigHome: cfgHome, UID: os.Getuid(),
		Run: bridge.ExecRunner(m.Stderr), Out: m.Stdout}
}

func printUnits(m *Main, in bridge.Installer, spec bridge.InstallSpec) error {
	if in.GOOS == "darwin" {
		data, err := bridge.LaunchAgentPlist(spec)
		if err != nil {
			return err
		}
		fmt.Fprintf(m.Stdout, "# %s\n%s", in.Paths()[0], data)
		return nil
	}
	units, err := bridge.SystemdUnits(spec)
	if err != nil {
		return err
	}
	for _, p := range in.Paths() {
		if body, ok := units[filepath.Base(p)]; ok {
			fmt.Fprintf(m.Stdout, "# %s\n%s\n", p, strings.TrimRight(body, "\n"))
		}
	}
	return nil
}

func runBridgeUninstall(ctx context.Context, m *Main, args []string) error {
	fs := flag.NewFlagSet("bridge uninstall", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() { fmt.Fprint(m.Stderr, bridgeUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("bridge uninstall takes no arguments (got %q)", fs.Args())}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return installer(m).Uninstall(ctx)
}
