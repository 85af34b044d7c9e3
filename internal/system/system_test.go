package system

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
	"github.com/tidings-mcp/tidings/internal/system/tcc"
)

// fakePeers are services as permissions_check sees them through
// ServiceEnv.Peers: one with backends (one refusing its credentials, one
// whose name carries markup), one unavailable without a Status func.
func fakePeers() []mcpserver.Service {
	return []mcpserver.Service{
		{Name: "mail", Default: true, Status: func(context.Context) mcpserver.ServiceStatus {
			return mcpserver.ServiceStatus{State: "ready", Backends: []mcpserver.BackendStatus{
				{Name: "Work", Kind: "imap", State: "ok"},
				{Name: "Home <script>", Kind: "imap", State: "unauthorized", Detail: "the server refused the password"},
			}}
		}},
		{Name: "location", Unavailable: "no location backend on this system"},
	}
}

// newTestService builds the service with fake peers (and itself among
// them, as internal/app lists it) over a configuration naming a readable
// chat.db and a missing contacts file.
func newTestService(t *testing.T, goos string, p tcc.Prober) (mcpserver.Service, string) {
	t.Helper()
	dir := t.TempDir()
	chat := filepath.Join(dir, "chat.db")
	os.WriteFile(chat, []byte("SQLite format 3\x00"), 0o600)
	cfg := &config.Config{IMessage: chat, Contacts: []string{filepath.Join(dir, "missing.vcf")}, EnableSend: true}
	var all []mcpserver.Service
	env := &mcpserver.ServiceEnv{Config: cfg, Peers: func() []mcpserver.Service { return all }}
	sys := newSystem(env, goos, p)
	sys.home = func() (string, error) { return dir, nil }
	svc := sys.service()
	all = append(fakePeers(), svc)
	return svc, chat
}

// transports connects real clients over stdio and HTTP
// (internal/mcpserver/mcptest).
var transports = mcptest.Sessions

// permissions_check through a real MCP client, over stdio and HTTP:
// every peer's backends with their credential state (markup in a name
// escaped), the unavailable peer with its sentence, the data sources read
// (readable chat.db ok, missing file misconfigured), and on Linux every
// needed permission not_applicable with one sentence. No content: the
// chat.db bytes never appear.
func TestPermissionsCheckThroughAClient(t *testing.T) {
	svc, chat := newTestService(t, "linux", nil)
	srv, err := mcpserver.New(&mcpserver.Deps{}, mcpserver.Filters{}, svc)
	if err != nil {
		t.Fatal(err)
	}
	for name, cs := range transports(t, srv) {
		t.Run(name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "permissions_check", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			raw, _ := json.Marshal(res.StructuredContent)
			var r Report
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			if r.Platform != "linux" || len(r.Services) != 2 {
				t.Fatalf("report: %s", raw)
			}
			mail, loc := r.Services[0], r.Services[1]
			if mail.Name != "mail" || len(mail.Backends) != 2 || mail.Backends[1].State != "unauthorized" || strings.Contains(mail.Backends[1].Name, "<") {
				t.Errorf("mail: %+v", mail)
			}
			if loc.State != "unavailable" || loc.Detail != "no location backend on this system" {
				t.Errorf("location: %+v", loc)
			}
			if len(r.Sources) != 2 || r.Sources[0].Name != chat || r.Sources[0].State != "ok" || r.Sources[1].State != "misconfigured" {
				t.Errorf("sources: %+v", r.Sources)
			}
			if len(r.Permissions) != 2 { // chat.db: Full Disk Access; sending: Automation
				t.Fatalf("permissions: %+v", r.Permissions)
			}
			for _, p := range r.Permissions {
				if p.State != tcc.NotApplicable || p.Detail == "" {
					t.Errorf("permission on linux: %+v", p)
				}
			}
			if bytes.Contains(raw, []byte("SQLite format")) {
				t.Error("content leaked")
			}
		})
	}
}

type deniedProber struct{}

func (deniedProber) Probe(_ context.Context, n tcc.Need) tcc.Result {
	if n.Grant == tcc.FullDiskAccess {
		return tcc.ReadProbe(n, func(p string) (*os.File, error) {
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission}
		})
	}
	return tcc.Result{Need: n, State: tcc.Granted, How: "fake"}
}

// On macOS (the decision logic, with a fake prober on any platform) a
// refused read of chat.db is Full Disk Access denied, labelled as a read
// probe, and the doctor checks carry it with a fix; Checks and Status are
// never nil.
func TestPermissionsCheckOnMacOSLogic(t *testing.T) {
	svc, _ := newTestService(t, "darwin", deniedProber{})
	if svc.Checks == nil || svc.Status == nil {
		t.Fatal("Checks and Status must be set")
	}
	var fda *mcpserver.CheckResult
	for _, c := range svc.Checks(context.Background()) {
		if c.Name == "permission full_disk_access" {
			fda = &c
		}
		if c.Status != "ok" && c.Fix == "" {
			t.Errorf("check %+v has no fix", c)
		}
	}
	if fda == nil || fda.Status != "fail" {
		t.Errorf("full disk access check: %+v", fda)
	}
	if st := svc.Status(context.Background()); st.State != "ready" || len(st.Backends) != 2 {
		t.Errorf("status: %+v", st)
	}
}

// In bridge mode serve never opens the data sources (the helper owns them):
// permissions_check, the status and the checks read nothing, on any
// platform (TestServeBridge in cmd/tidings failed on this).
func TestBridgeModeReadsNoSource(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		cfg := &config.Config{IMessage: "/Users/me/Library/Messages/chat.db", Contacts: []string{"/Users/me/c.vcf"}}
		env := &mcpserver.ServiceEnv{Config: cfg, Bridge: true, Peers: func() []mcpserver.Service { return nil }}
		sys := newSystem(env, goos, tcc.Default())
		var reads []string
		sys.read = func(p string) error { reads = append(reads, p); return nil }
		sys.home = func() (string, error) { return "/Users/me", nil }
		r := sys.report(context.Background())
		sys.status(context.Background())
		sys.checks(context.Background())
		if len(reads) > 0 || len(r.Sources) > 0 {
			t.Errorf("%s: bridge mode read %q (sources %v)", goos, reads, r.Sources)
		}
	}
}
