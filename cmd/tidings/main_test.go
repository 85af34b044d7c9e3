package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/app"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// testMain returns a Main with a private TIDINGS_HOME and captured output.
// anchorRFC3339 is the tests' usual pinned clock (internal/testclock) as
// TIDINGS_NOW takes it.
var anchorRFC3339 = testclock.Anchor().Format(time.RFC3339)

func testMain(t *testing.T, env map[string]string) (*Main, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "TIDINGS_HOME": filepath.Join(home, "tidings")}
	for k, v := range env {
		vars[k] = v
	}
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	return m, &out, &errb
}

func TestHelpAndUnknown(t *testing.T) {
	m, out, _ := testMain(t, nil)
	if err := m.Run(context.Background(), []string{"help"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"serve", "doctor"} {
		if !strings.Contains(out.String(), "  "+c+" ") {
			t.Errorf("help does not list %s:\n%s", c, out)
		}
	}
	err := m.Run(context.Background(), []string{"frobnicate"})
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("unknown command: err = %v, want a usage error", err)
	}
	if err := m.Run(context.Background(), []string{"serve", "--no-such-flag"}); !errors.As(err, &ue) {
		t.Errorf("bad flag: err = %v, want a usage error", err)
	}
	if err := m.Run(context.Background(), []string{"serve", "extra"}); !errors.As(err, &ue) {
		t.Errorf("stray argument: err = %v, want a usage error", err)
	}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// TestServeStdioInProcess runs `serve --demo` through Main.Run on pipes.
func TestServeStdioInProcess(t *testing.T) {
	m, _, stderr := testMain(t, map[string]string{"TIDINGS_NOW": anchorRFC3339})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m.Stdin, m.Stdout = inR, outW
	done := make(chan error, 1)
	go func() { done <- m.Run(context.Background(), []string{"serve", "--demo"}); outW.Close() }()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)

	fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_status","arguments":{},%s}}`+"\n", modernMeta)
	if !sc.Scan() {
		t.Fatalf("no response; stderr:\n%s", stderr)
	}
	var resp struct {
		Result struct {
			StructuredContent mcpserver.StatusOutput `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
		t.Fatalf("bad line %q: %v", sc.Text(), err)
	}
	st := resp.Result.StructuredContent
	if st.DataSet.Kind != "demo" || st.DataSet.Empty || !strings.Contains(st.DataSet.Note, "made-up") || strings.Contains(st.DataSet.Note, "empty") {
		t.Errorf("data_set = %+v", st.DataSet)
	}
	if st.Index.Messages == 0 || st.Index.State != "ready" {
		t.Errorf("index = %+v", st.Index)
	}
	if st.Now != anchorRFC3339 {
		t.Errorf("now = %q, want the pinned clock", st.Now)
	}
	if len(st.Checks) == 0 {
		t.Error("get_status has no checks")
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after EOF: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not exit on stdin EOF")
	}
}

func TestServeConfigErrors(t *testing.T) {
	m, _, _ := testMain(t, nil)
	home := m.Getenv("TIDINGS_HOME")
	os.MkdirAll(home, 0o700)
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("read_onyl = true\n"), 0o600)
	err := m.Run(context.Background(), []string{"serve"})
	if err == nil || !strings.Contains(err.Error(), `"read_onyl"`) {
		t.Errorf("unknown config key: err = %v", err)
	}
	m, _, _ = testMain(t, nil)
	if err := m.Run(context.Background(), []string{"serve", "--http", "0.0.0.0:0"}); !errors.Is(err, mcpserver.ErrTokenRequired) {
		t.Errorf("non-loopback bind without token: err = %v", err)
	}
	m, _, _ = testMain(t, nil)
	if err := m.Run(context.Background(), []string{"serve", "--toolsets", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown toolset: err = %v", err)
	}
	m, _, _ = testMain(t, nil)
	if err := m.Run(context.Background(), []string{"serve", "--profile", "/does/not/exist.toml"}); err == nil {
		t.Error("missing profile accepted")
	}
}

// TestDoctorReportsEveryProblemWithItsFix: `tidings doctor` fails on a
// group-readable home, a broken setting or an open --http bind without a
// token, warns on a missing source, and every check that is not ok carries a
// fix, in the text output and in --json.
func TestDoctorReportsEveryProblemWithItsFix(t *testing.T) {
	m, out, _ := testMain(t, nil)
	home := m.Getenv("TIDINGS_HOME")
	os.MkdirAll(home, 0o755)
	os.Chmod(home, 0o755)
	err := m.Run(context.Background(), []string{"doctor", "--android-xml", "/nonexistent/sms.xml"})
	if err == nil || !strings.Contains(err.Error(), "failed") {
		t.Errorf("doctor with a group-readable home: err = %v, want a failure", err)
	}
	text := out.String()
	for _, want := range []string{"FAIL  home", "chmod 700", "warn  source android_xml", "fix: check the path", "ok    send"} {
		if !strings.Contains(text, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, text)
		}
	}

	m, out, _ = testMain(t, map[string]string{"ENABLE_MCP_SEND_MESSAGE": "true"})
	os.MkdirAll(m.Getenv("TIDINGS_HOME"), 0o700)
	if err := m.Run(context.Background(), []string{"doctor", "--json"}); err != nil {
		t.Fatalf("doctor --json: %v", err)
	}
	var res []mcpserver.CheckResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("doctor --json output: %v\n%s", err, out)
	}
	byName := map[string]mcpserver.CheckResult{}
	for _, r := range res {
		byName[r.Name] = r
		if r.Status != "ok" && r.Fix == "" {
			t.Errorf("check %s is %s without a fix", r.Name, r.Status)
		}
	}
	if byName["home"].Status != "ok" || byName["send"].Status != "warn" {
		t.Errorf("results = %+v", res)
	}

	m, out, _ = testMain(t, map[string]string{"TIDINGS_READ_ONLY": "sometimes"})
	if err := m.Run(context.Background(), []string{"doctor"}); err == nil || !strings.Contains(out.String(), "TIDINGS_READ_ONLY") {
		t.Errorf("doctor with a broken setting: err = %v, out:\n%s", err, out)
	}
	m, out, _ = testMain(t, map[string]string{"TIDINGS_HTTP_TOKEN": ""})
	m.Run(context.Background(), []string{"doctor", "--http", "0.0.0.0:7740"})
	if !strings.Contains(out.String(), "FAIL  http") {
		t.Errorf("doctor does not flag an open bind without token:\n%s", out)
	}
}

func TestRunChecksSurvivesPanic(t *testing.T) {
	saved := doctorChecks
	defer func() { doctorChecks = saved }()
	doctorChecks = []app.Check{
		{Name: "ok", Run: func(context.Context, *config.Config) []mcpserver.CheckResult {
			return []mcpserver.CheckResult{{Name: "ok", Status: "ok"}}
		}},
		{Name: "boom", Run: func(context.Context, *config.Config) []mcpserver.CheckResult { panic("kaput") }},
	}
	res := runChecks(context.Background(), &config.Config{})
	if len(res) != 2 || res[0].Name != "ok" {
		t.Fatalf("results = %+v", res)
	}
	last := res[1]
	if last.Name != "boom" || last.Status != "fail" || !strings.Contains(last.Detail, "kaput") {
		t.Errorf("panicking check: %+v", last)
	}
}

// --- the real binary ---

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain removes the binary built by tidingsBinary.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// tidingsBinary builds cmd/tidings once per test run.
func tidingsBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tidings-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "tidings")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func processEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "TIDINGS_HOME=" + filepath.Join(home, "tidings"), "PATH=" + os.Getenv("PATH")}
}

// TestServeProcessStdio checks stdout hygiene of a real process: every line
// it writes is one JSON-RPC message, logs go to stderr, and SIGTERM ends it
// cleanly while a client is still connected.
func TestServeProcessStdio(t *testing.T) {
	bin := tidingsBinary(t)
	cmd := exec.Command(bin, "serve", "--demo", "--log-level", "debug")
	cmd.Env = processEnv(t)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_status","arguments":{},` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"no_such_tool","arguments":{},` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for i, r := range requests {
		io.WriteString(stdin, r+"\n")
		if !sc.Scan() {
			t.Fatalf("no answer to request %d; stderr:\n%s", i+1, stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC: %q", sc.Text())
		}
		if m["id"] != float64(i+1) {
			t.Errorf("answer %d has id %v", i+1, m["id"])
		}
	}
	// SIGTERM with stdin still open: a clean, prompt exit.
	cmd.Process.Signal(syscall.SIGTERM)
	waitc := make(chan error, 1)
	go func() { waitc <- cmd.Wait() }()
	select {
	case err := <-waitc:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\nstderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve ignored SIGTERM")
	}
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("non-JSON stdout line after shutdown: %q", sc.Text())
		}
	}
	if !strings.Contains(stderr.String(), "level=INFO") {
		t.Errorf("no logs on stderr:\n%s", stderr.String())
	}
}

func TestServeProcessStdinEOF(t *testing.T) {
	bin := tidingsBinary(t)
	cmd := exec.Command(bin, "serve")
	cmd.Env = processEnv(t)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_status","arguments":{},` + modernMeta + `}}` + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve did not exit at stdin EOF")
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"structuredContent"`) {
		t.Errorf("stdout = %q, want exactly the get_status answer", stdout.String())
	}
}

func TestServeProcessHTTP(t *testing.T) {
	bin := tidingsBinary(t)
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--read-only")
	cmd.Env = processEnv(t)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addrRE := regexp.MustCompile(`serving MCP at http://(127\.0\.0\.1:\d+)/mcp`)
	sc := bufio.NewScanner(stderr)
	var addr string
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		t.Fatal("serve --http did not report its address")
	}
	go io.Copy(io.Discard, stderr)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_status","arguments":{},` + modernMeta + `}}`
	req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "get_status")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `\"read_only\":true`) {
		t.Errorf("HTTP get_status: %d %s", resp.StatusCode, b)
	}
	req.Header.Set("Origin", "http://evil.example")
	resp, err = http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("bad Origin: %d", resp.StatusCode)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGINT: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve --http ignored SIGINT")
	}
}

func testMainOnly(t *testing.T) *Main {
	m, _, _ := testMain(t, nil)
	return m
}

func TestTTYHint(t *testing.T) {
	var b bytes.Buffer
	printTTYHint(&b, mcpserver.DataSet{Kind: "personal"}, mustConfig(t, testMainOnly(t)), "tidings")
	for _, want := range []string{"MCP server", `"args": ["serve"]`, "claude mcp add tidings", "tidings doctor", "Ctrl-D"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("hint lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "--demo") {
		t.Errorf("a server with data suggests the demo:\n%s", b.String())
	}
	// No data on a Linux machine: the hint says how to get some.
	m, _, _ := testMain(t, nil)
	cfg := mustConfig(t, m)
	b.Reset()
	printTTYHint(&b, defaultDataSet(cfg), cfg, "tidings")
	for _, want := range []string{"tidings serve --demo", "--imessage PATH", "--ios-backup DIR", "--android-xml FILE"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no-data hint lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	printTTYHint(&b, mcpserver.DataSet{Kind: "demo", Note: "demo data set"}, cfg, "tidings")
	if !strings.Contains(b.String(), "demo data set") {
		t.Errorf("demo hint:\n%s", b.String())
	}
	if isTerminal(strings.NewReader("")) {
		t.Error("a string reader counted as a terminal")
	}
	f, err := os.Open(os.DevNull) // a character device, but not a terminal
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("/dev/null counted as a terminal")
	}
}
