//go:build unix

package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"howett.net/plist"
)

// Install modes: ModeWatch keeps one `tidings helper --watch` running
// (answers in milliseconds); ModeOnce starts `tidings helper --once` when a
// request appears (launchd WatchPaths with a 1 s ThrottleInterval, or a
// systemd .path unit); docs/bridge.md, "Installers".
const (
	ModeWatch = "watch"
	ModeOnce  = "once"
)

// Names of the installed units.
const (
	LaunchdLabel = "dev.tidings.bridge-helper"
	SystemdUnit  = "tidings-bridge"
)

// InstallSpec describes a helper installation.
type InstallSpec struct {
	// Program is the exact helper binary (symlinks resolved: on macOS the
	// Full Disk Access grant belongs to this file).
	Program string
	// BridgeDir is the bridge folder (absolute).
	BridgeDir string
	// Mode is ModeWatch or ModeOnce.
	Mode string
	// Role is "" (host) or "manager"; set as IMESSAGE_BRIDGE_ROLE.
	Role string
	// Args are extra helper arguments (--home, --imessage, --contacts …)
	// so the helper reads the same data as at install time.
	Args []string
}

func (s InstallSpec) validate() error {
	if !filepath.IsAbs(s.Program) || !filepath.IsAbs(s.BridgeDir) {
		return errors.New("install: the program and the bridge folder must be absolute paths")
	}
	if s.Mode != ModeWatch && s.Mode != ModeOnce {
		return fmt.Errorf("install: mode must be %q or %q, not %q", ModeWatch, ModeOnce, s.Mode)
	}
	if _, err := ParseRole(s.Role); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	for _, a := range append([]string{s.Program, s.BridgeDir}, s.Args...) {
		if strings.ContainsAny(a, "\x00\n\r") {
			return fmt.Errorf("install: argument %s contains a NUL or a line break", excerpt(a))
		}
	}
	return nil
}

// RequestsPath is the folder clients write requests to.
func (s InstallSpec) RequestsPath() string {
	return filepath.Join(s.BridgeDir, ControlDir, RequestsDir)
}

func (s InstallSpec) argv() []string {
	args := []string{s.Program, "helper", "--bridge-dir", s.BridgeDir}
	args = append(args, s.Args...)
	return append(args, "--"+s.Mode)
}

// launchAgent is the LaunchAgent property list.
type launchAgent struct {
	Label                string            `plist:"Label"`
	ProgramArguments     []string          `plist:"ProgramArguments"`
	EnvironmentVariables map[string]string `plist:"EnvironmentVariables,omitempty"`
	WatchPaths           []string          `plist:"WatchPaths"`
	ThrottleInterval     int               `plist:"ThrottleInterval"`
	RunAtLoad            bool              `plist:"RunAtLoad"`
	KeepAlive            bool              `plist:"KeepAlive,omitempty"`
	ProcessType          string            `plist:"ProcessType"`
	// stdout and stderr go to /dev/null so they can never follow a
	// user-controlled log symlink (docs/bridge.md, "Installers"); the
	// helper logs to control/log.txt, opened without following symlinks.
	StandardOutPath   string `plist:"StandardOutPath"`
	StandardErrorPath string `plist:"StandardErrorPath"`
}

// LaunchAgentPlist renders the macOS LaunchAgent: WatchPaths on
// control/requests with ThrottleInterval 1 (both modes; in watch mode
// KeepAlive also keeps the --watch process up), stdout/stderr to
// /dev/null, the exact program path.
func LaunchAgentPlist(s InstallSpec) ([]byte, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	a := launchAgent{
		Label:             LaunchdLabel,
		ProgramArguments:  s.argv(),
		WatchPaths:        []string{s.RequestsPath()},
		ThrottleInterval:  1,
		RunAtLoad:         true,
		KeepAlive:         s.Mode == ModeWatch,
		ProcessType:       "Background",
		StandardOutPath:   "/dev/null",
		StandardErrorPath: "/dev/null",
	}
	if s.Role != "" {
		a.EnvironmentVariables = map[string]string{RoleEnv: s.Role}
	}
	var b bytes.Buffer
	enc := plist.NewEncoderForFormat(&b, plist.XMLFormat)
	enc.Indent("\t")
	if err := enc.Encode(a); err != nil {
		return nil, fmt.Errorf("render LaunchAgent: %w", err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// systemdQuote quotes one ExecStart argument: double quotes with \ and "
// escaped, and % doubled (systemd specifiers).
func systemdQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "%", "%%")
	return `"` + s + `"`
}

// systemdPath escapes a path setting value (specifiers only; paths may
// contain spaces).
func systemdPath(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// SystemdUnits renders the Linux systemd user units, file name → content.
// ModeOnce: tidings-bridge.path (PathExistsGlob on request-*.json in
// control/requests) starting the oneshot tidings-bridge.service, which
// runs `tidings helper --once`. ModeWatch: one tidings-bridge.service
// running `tidings helper --watch`, restarted if it stops.
func SystemdUnits(s InstallSpec) (map[string]string, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	args := s.argv()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = systemdQuote(a)
	}
	env := ""
	if s.Role != "" {
		env = fmt.Sprintf("Environment=%s=%s\n", RoleEnv, s.Role)
	}
	units := map[string]string{}
	if s.Mode == ModeOnce {
		units[SystemdUnit+".service"] = fmt.Sprintf(`[Unit]
Description=Tidings bridge helper: answer queued requests in %[1]s

[Service]
Type=oneshot
ExecStart=%[2]s
%[3]sStandardOutput=null
StandardError=journal
`, systemdPath(s.BridgeDir), strings.Join(quoted, " "), env)
		units[SystemdUnit+".path"] = fmt.Sprintf(`[Unit]
Description=Tidings bridge: start the helper when a request is queued in %[1]s

[Path]
PathExistsGlob=%[1]s/request-*.json
Unit=%[2]s.service

[Install]
WantedBy=default.target
`, systemdPath(s.RequestsPath()), SystemdUnit)
		return units, nil
	}
	units[SystemdUnit+".service"] = fmt.Sprintf(`[Unit]
Description=Tidings bridge helper: answer requests in %[1]s as they arrive

[Service]
Type=simple
ExecStart=%[2]s
%[3]sRestart=on-failure
RestartSec=1
StandardOutput=null
StandardError=journal

[Install]
WantedBy=default.target
`, systemdPath(s.BridgeDir), strings.Join(quoted, " "), env)
	return units, nil
}

// Runner runs a service-manager command (launchctl, systemctl); tests
// replace it.
type Runner func(ctx context.Context, name string, args ...string) error

// ExecRunner runs the command, with its output going to w.
func ExecRunner(w io.Writer) Runner {
	return func(ctx context.Context, name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return nil
	}
}

// Installer writes and removes the helper's service definitions.
type Installer struct {
	// GOOS selects launchd ("darwin") or systemd (anything else).
	GOOS string
	// Home is the user's home; ConfigHome is $XDG_CONFIG_HOME (default
	// Home/.config); UID is the user id for launchctl's gui/UID domain.
	Home, ConfigHome string
	UID              int
	Run              Runner
	// Out receives what the user must know (the Full Disk Access step).
	Out io.Writer
}

// Paths returns the files Install writes.
func (in Installer) Paths() []string {
	if in.GOOS == "darwin" {
		return []string{filepath.Join(in.Home, "Library", "LaunchAgents", LaunchdLabel+".plist")}
	}
	dir := in.unitDir()
	return []string{filepath.Join(dir, SystemdUnit+".service"), filepath.Join(dir, SystemdUnit+".path")}
}

func (in Installer) unitDir() string {
	base := in.ConfigHome
	if base == "" {
		base = filepath.Join(in.Home, ".config")
	}
	return filepath.Join(base, "systemd", "user")
}

// Install creates the bridge folder (0700 runtime directories, checked
// like the worker checks them), writes the service definition and loads
// it.
func (in Installer) Install(ctx context.Context, s InstallSpec) error {
	if err := s.validate(); err != nil {
		return err
	}
	if err := PrepareFolder(s.BridgeDir); err != nil {
		return err
	}
	if in.GOOS == "darwin" {
		data, err := LaunchAgentPlist(s)
		if err != nil {
			return err
		}
		path := in.Paths()[0]
		if err := writeFileAtomic(path, data, 0o644); err != nil {
			return err
		}
		domain := fmt.Sprintf("gui/%d", in.UID)
		_ = in.Run(ctx, "launchctl", "bootout", domain+"/"+LaunchdLabel) // a previous version
		if err := in.Run(ctx, "launchctl", "bootstrap", domain, path); err != nil {
			return err
		}
		fmt.Fprintf(in.Out, `Installed the LaunchAgent %s (%s mode).

One step only you can do: grant Full Disk Access to the helper, or it cannot read your messages:
  System Settings → Privacy & Security → Full Disk Access → + → add exactly this file:
    %s
(press Cmd-Shift-G in the file dialog and paste the path). The grant belongs to this binary:
after upgrading Tidings, grant it again if requests time out.

Check it with: tidings bridge call status --bridge-dir %q
`, path, s.Mode, s.Program, s.BridgeDir)
		return nil
	}
	units, err := SystemdUnits(s)
	if err != nil {
		return err
	}
	// Remove a unit of the other mode first.
	for _, p := range in.Paths() {
		if _, ok := units[filepath.Base(p)]; !ok {
			_ = in.Run(ctx, "systemctl", "--user", "disable", "--now", filepath.Base(p))
			_ = os.Remove(p)
		}
	}
	for name, body := range units {
		if err := writeFileAtomic(filepath.Join(in.unitDir(), name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	if err := in.Run(ctx, "systemctl", "--user", "daemon-reload"); err != nil {
		return err
	}
	start := SystemdUnit + ".service"
	if s.Mode == ModeOnce {
		start = SystemdUnit + ".path"
	}
	if err := in.Run(ctx, "systemctl", "--user", "enable", "--now", start); err != nil {
		return err
	}
	fmt.Fprintf(in.Out, "Installed the systemd user units in %s (%s mode) and started %s.\nCheck it with: tidings bridge call status --bridge-dir %q\n",
		in.unitDir(), s.Mode, start, s.BridgeDir)
	return nil
}

// Uninstall stops and removes the service definitions. The bridge folder
// and its policy files are left in place.
func (in Installer) Uninstall(ctx context.Context) error {
	if in.GOOS == "darwin" {
		_ = in.Run(ctx, "launchctl", "bootout", fmt.Sprintf("gui/%d/%s", in.UID, LaunchdLabel))
	} else {
		for _, p := range in.Paths() {
			_ = in.Run(ctx, "systemctl", "--user", "disable", "--now", filepath.Base(p))
		}
	}
	var errs []error
	removed := 0
	for _, p := range in.Paths() {
		err := os.Remove(p)
		if err == nil {
			removed++
		} else if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if in.GOOS != "darwin" {
		_ = in.Run(ctx, "systemctl", "--user", "daemon-reload")
	}
	if removed == 0 && len(errs) == 0 {
		fmt.Fprintln(in.Out, "No bridge helper was installed.")
	} else {
		fmt.Fprintf(in.Out, "Removed the bridge helper (%d file(s)); the bridge folder and its policy files were kept.\n", removed)
	}
	return errors.Join(errs...)
}

// writeFileAtomic writes a service definition: temp file, rename.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tidings-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
