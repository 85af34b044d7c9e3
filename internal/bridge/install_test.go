//go:build unix

package bridge

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"howett.net/plist"
)

func testSpec(t *testing.T, mode, role string) InstallSpec {
	t.Helper()
	prog, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to stand in for the helper binary")
	}
	dir := filepath.Join(t.TempDir(), "Application Support", "Tidings 100%", "bridge")
	return InstallSpec{Program: prog, BridgeDir: dir, Mode: mode, Role: role, Args: []string{"--home", filepath.Dir(dir)}}
}

func TestLaunchAgentPlist(t *testing.T) {
	for _, tc := range []struct{ mode, role string }{{ModeOnce, ""}, {ModeWatch, ""}, {ModeWatch, "manager"}} {
		t.Run(tc.mode+"/"+tc.role, func(t *testing.T) {
			s := testSpec(t, tc.mode, tc.role)
			data, err := LaunchAgentPlist(s)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			format, err := plist.Unmarshal(data, &got)
			if err != nil || format != plist.XMLFormat {
				t.Fatalf("plist does not parse (%v, format %d):\n%s", err, format, data)
			}
			args := got["ProgramArguments"].([]any)
			wantArgs := []any{s.Program, "helper", "--bridge-dir", s.BridgeDir, "--home", filepath.Dir(s.BridgeDir), "--" + tc.mode}
			if !slices.Equal(args, wantArgs) {
				t.Errorf("ProgramArguments = %v, want %v", args, wantArgs)
			}
			if got["Label"] != LaunchdLabel || got["ThrottleInterval"] != uint64(1) || got["RunAtLoad"] != true {
				t.Errorf("plist = %v", got)
			}
			if w := got["WatchPaths"].([]any); len(w) != 1 || w[0] != filepath.Join(s.BridgeDir, "control", "requests") {
				t.Errorf("WatchPaths = %v", w)
			}
			if got["StandardOutPath"] != "/dev/null" || got["StandardErrorPath"] != "/dev/null" {
				t.Errorf("stdout/stderr = %v / %v", got["StandardOutPath"], got["StandardErrorPath"])
			}
			if keep, _ := got["KeepAlive"].(bool); keep != (tc.mode == ModeWatch) {
				t.Errorf("KeepAlive = %v", got["KeepAlive"])
			}
			env, _ := got["EnvironmentVariables"].(map[string]any)
			if tc.role != "" && env[RoleEnv] != tc.role || tc.role == "" && env != nil {
				t.Errorf("EnvironmentVariables = %v", env)
			}
			if lint, err := exec.LookPath("plutil"); err == nil {
				p := filepath.Join(t.TempDir(), "a.plist")
				os.WriteFile(p, data, 0o644)
				if out, err := exec.Command(lint, "-lint", p).CombinedOutput(); err != nil {
					t.Errorf("plutil -lint: %v\n%s", err, out)
				}
			}
		})
	}
}

func TestSystemdUnits(t *testing.T) {
	analyze, _ := exec.LookPath("systemd-analyze")
	for _, tc := range []struct{ mode, role string }{{ModeOnce, ""}, {ModeWatch, ""}, {ModeOnce, "manager"}} {
		t.Run(tc.mode+"/"+tc.role, func(t *testing.T) {
			s := testSpec(t, tc.mode, tc.role)
			units, err := SystemdUnits(s)
			if err != nil {
				t.Fatal(err)
			}
			svc := units[SystemdUnit+".service"]
			wantExec := `ExecStart="` + s.Program + `" "helper" "--bridge-dir" "` + strings.ReplaceAll(s.BridgeDir, "%", "%%") + `"`
			if !strings.Contains(svc, wantExec) || !strings.Contains(svc, `"--`+tc.mode+`"`) {
				t.Errorf("service:\n%s\nwant %s", svc, wantExec)
			}
			if tc.role != "" && !strings.Contains(svc, "Environment=IMESSAGE_BRIDGE_ROLE=manager\n") {
				t.Errorf("role not set:\n%s", svc)
			}
			if tc.mode == ModeOnce {
				path := units[SystemdUnit+".path"]
				want := "PathExistsGlob=" + strings.ReplaceAll(filepath.Join(s.BridgeDir, "control", "requests"), "%", "%%") + "/request-*.json\n"
				if !strings.Contains(path, want) || !strings.Contains(svc, "Type=oneshot") {
					t.Errorf("path unit:\n%s\nwant %s", path, want)
				}
				if len(units) != 2 {
					t.Errorf("units %v", units)
				}
			} else if len(units) != 1 || !strings.Contains(svc, "Type=simple") || !strings.Contains(svc, "Restart=on-failure") {
				t.Errorf("watch units %v", units)
			}
			if analyze == "" {
				t.Log("systemd-analyze not found; skipping verify")
				return
			}
			dir := t.TempDir()
			var files []string
			for name, body := range units {
				p := filepath.Join(dir, name)
				os.WriteFile(p, []byte(body), 0o644)
				files = append(files, p)
			}
			slices.Sort(files)
			cmd := exec.Command(analyze, append([]string{"verify", "--man=no"}, files...)...)
			out, err := cmd.CombinedOutput()
			if err != nil || bytes.Contains(out, []byte(dir)) {
				t.Errorf("systemd-analyze verify: %v\n%s", err, out)
			}
		})
	}
}

func TestInstallSpecValidation(t *testing.T) {
	good := testSpec(t, ModeOnce, "")
	for name, mod := range map[string]func(*InstallSpec){
		"relative program": func(s *InstallSpec) { s.Program = "tidings" },
		"relative folder":  func(s *InstallSpec) { s.BridgeDir = "bridge" },
		"bad mode":         func(s *InstallSpec) { s.Mode = "daemon" },
		"bad role":         func(s *InstallSpec) { s.Role = "admin" },
		"newline":          func(s *InstallSpec) { s.BridgeDir += "\nExecStart=/bin/sh" },
	} {
		s := good
		mod(&s)
		if _, err := SystemdUnits(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := LaunchAgentPlist(s); err == nil {
			t.Errorf("%s: accepted by the plist renderer", name)
		}
	}
}

// TestInstallerSetsUpAndRemovesTheServiceOnEachPlatform: on macOS and Linux,
// Install writes the service files, creates the bridge folders 0700, starts
// the service (launchctl, systemctl) and on macOS prints the Full Disk
// Access step; switching Linux to watch mode removes the .path unit;
// Uninstall removes the service files but keeps the bridge folder; an unsafe
// existing bridge folder is refused, not fixed.
func TestInstallerSetsUpAndRemovesTheServiceOnEachPlatform(t *testing.T) {
	for _, goos := range []string{"darwin", "linux"} {
		t.Run(goos, func(t *testing.T) {
			home := t.TempDir()
			var ran []string
			var out bytes.Buffer
			in := Installer{GOOS: goos, Home: home, UID: 501, Out: &out,
				Run: func(ctx context.Context, name string, args ...string) error {
					ran = append(ran, name+" "+strings.Join(args, " "))
					return nil
				}}
			s := testSpec(t, ModeOnce, "")
			if err := in.Install(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			for _, p := range in.Paths() {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("not written: %v", err)
				}
			}
			for _, d := range []string{"", "control", "control/requests", "control/responses", "nonces"} {
				fi, err := os.Lstat(filepath.Join(s.BridgeDir, d))
				if err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("bridge folder %q: %v %v", d, fi, err)
				}
			}
			if goos == "darwin" {
				if !slices.Contains(ran, "launchctl bootstrap gui/501 "+in.Paths()[0]) {
					t.Errorf("commands %v", ran)
				}
				if !strings.Contains(out.String(), "Full Disk Access") || !strings.Contains(out.String(), s.Program) {
					t.Errorf("the Full Disk Access step is not printed:\n%s", out.String())
				}
			} else if !slices.Contains(ran, "systemctl --user enable --now tidings-bridge.path") {
				t.Errorf("commands %v", ran)
			}
			// Switching to watch mode on Linux removes the .path unit.
			if goos == "linux" {
				s.Mode = ModeWatch
				if err := in.Install(context.Background(), s); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(in.Paths()[1]); err == nil {
					t.Errorf("the once-mode .path unit survived a switch to watch mode")
				}
			}
			if err := in.Uninstall(context.Background()); err != nil {
				t.Fatal(err)
			}
			for _, p := range in.Paths() {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s not removed", p)
				}
			}
			if _, err := os.Stat(s.BridgeDir); err != nil {
				t.Errorf("uninstall removed the bridge folder")
			}
		})
	}
	// An unsafe existing bridge folder is refused, not fixed.
	s := testSpec(t, ModeOnce, "")
	must(t, os.MkdirAll(s.BridgeDir, 0o755))
	must(t, os.Chmod(s.BridgeDir, 0o755))
	in := Installer{GOOS: "linux", Home: t.TempDir(), Out: &bytes.Buffer{}, Run: func(context.Context, string, ...string) error { return nil }}
	if err := in.Install(context.Background(), s); err == nil || !strings.Contains(err.Error(), "no group or world") {
		t.Errorf("err = %v", err)
	}
}
