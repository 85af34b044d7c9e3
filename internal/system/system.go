// Package system is the System service of seed 002: one tool,
// permissions_check, reporting what Tidings can reach here — every
// service's backends and credentials state (from each service's Status),
// the data sources, and on macOS the privacy permissions (TCC) the
// configured services need (internal/system/tcc). It never returns
// content (docs/tools.md, "permissions_check").
package system

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"time"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/system/tcc"
)

// peerWait bounds one service's Status inside permissions_check: a peer
// whose reachability probe hangs is reported unknown, not waited for.
const peerWait = 5 * time.Second

// system is the service's state: the environment and the platform seams
// tests replace.
type system struct {
	env    *mcpserver.ServiceEnv
	goos   string
	prober tcc.Prober
	wait   time.Duration
	home   func() (string, error)
	read   func(path string) error
}

// New builds the System service. It is always available and on by
// default (toolset system).
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	return newSystem(env, runtime.GOOS, tcc.Default()).service(), nil
}

func newSystem(env *mcpserver.ServiceEnv, goos string, p tcc.Prober) *system {
	return &system{env: env, goos: goos, prober: p, wait: tcc.DefaultWait, home: os.UserHomeDir, read: tcc.Read}
}

func (s *system) service() mcpserver.Service {
	return mcpserver.Service{
		Name:    "system",
		Default: true,
		Tools:   []mcpserver.Tool{s.tool()},
		Checks:  s.checks,
		Status:  s.status,
	}
}

// ServiceReport is one other service and its backends.
type ServiceReport struct {
	Name     string                    `json:"name"`
	State    string                    `json:"state"`
	Detail   string                    `json:"detail,omitempty"`
	Backends []mcpserver.BackendStatus `json:"backends"`
}

// Report is permissions_check's answer.
type Report struct {
	Platform    string                    `json:"platform"`
	Services    []ServiceReport           `json:"services"`
	Sources     []mcpserver.BackendStatus `json:"sources"`
	Permissions []tcc.Result              `json:"permissions"`
}

// report gathers everything; no content, only states and configured names.
func (s *system) report(ctx context.Context) Report {
	r := Report{Platform: s.goos, Services: []ServiceReport{}, Sources: s.sources(), Permissions: []tcc.Result{}}
	var working []string
	for _, p := range s.peers() {
		if p.Unavailable == "" {
			working = append(working, p.Name)
		}
		if p.Name == "system" {
			continue
		}
		st := s.peerStatus(ctx, p)
		sr := ServiceReport{Name: output.Name(p.Name), State: st.State, Detail: output.Name(st.Detail), Backends: []mcpserver.BackendStatus{}}
		for _, b := range st.Backends {
			sr.Backends = append(sr.Backends, mcpserver.BackendStatus{Name: output.Name(b.Name), Kind: output.Name(b.Kind), State: b.State, Detail: output.Name(b.Detail)})
		}
		r.Services = append(r.Services, sr)
	}
	f := tcc.Facts{Services: working}
	if home, err := s.home(); err == nil {
		f.Home = home
	}
	if c := s.env.Config; c != nil && !s.env.Bridge {
		f.IMessage, f.Contacts, f.SendEnabled = c.IMessage, c.Contacts, c.EnableSend && !c.ReadOnly
	}
	for _, res := range tcc.Check(ctx, s.goos, tcc.Needs(f), s.prober, s.wait) {
		res.Target = output.Name(res.Target)
		res.How = output.Name(res.How)
		r.Permissions = append(r.Permissions, res)
	}
	return r
}

func (s *system) peers() []mcpserver.Service {
	if s.env.Peers == nil {
		return nil
	}
	return s.env.Peers()
}

// peerStatus is a service's Status, bounded by peerWait; a service
// without a Status func reports what Unavailable says.
func (s *system) peerStatus(ctx context.Context, p mcpserver.Service) mcpserver.ServiceStatus {
	if p.Status == nil {
		if p.Unavailable != "" {
			return mcpserver.ServiceStatus{State: "unavailable", Detail: p.Unavailable}
		}
		return mcpserver.ServiceStatus{State: "ready"}
	}
	ctx, cancel := context.WithTimeout(ctx, peerWait)
	defer cancel()
	ch := make(chan mcpserver.ServiceStatus, 1)
	go func() { ch <- p.Status(ctx) }()
	select {
	case st := <-ch:
		return st
	case <-ctx.Done():
		return mcpserver.ServiceStatus{State: "error", Detail: "its status did not answer within " + peerWait.String()}
	}
}

// sources reads one byte of each configured data source: a path that
// opens is ok, a refused one unauthorized (on macOS: Full Disk Access), a
// missing one misconfigured.
//
// In bridge mode serve never opens the data (the helper owns it,
// docs/bridge.md): the sources and the permissions that guard them are the
// helper's to report, so nothing is read here.
func (s *system) sources() []mcpserver.BackendStatus {
	out := []mcpserver.BackendStatus{}
	c := s.env.Config
	if c == nil || s.env.Bridge {
		return out
	}
	add := func(kind, path string) {
		b := mcpserver.BackendStatus{Name: output.Name(path), Kind: kind}
		switch err := s.read(path); {
		case err == nil:
			b.State, b.Detail = "ok", "readable"
		case errors.Is(err, fs.ErrPermission):
			b.State, b.Detail = "unauthorized", "the system refused to read it"
		case errors.Is(err, fs.ErrNotExist):
			b.State, b.Detail = "misconfigured", "it does not exist"
		default:
			b.State, b.Detail = "unknown", "it could not be read"
		}
		out = append(out, b)
	}
	if c.IMessage != "" {
		add("imessage", c.IMessage)
	}
	if c.IOSBackup != "" {
		add("ios_backup", c.IOSBackup)
	}
	for _, p := range c.AndroidXML {
		add("android_xml", p)
	}
	for _, p := range c.Contacts {
		add("contacts", p)
	}
	return out
}

// status is the service's get_status part: its data sources as backends.
func (s *system) status(ctx context.Context) mcpserver.ServiceStatus {
	return mcpserver.ServiceStatus{State: "ready", Backends: s.sources()}
}

// checks are the doctor checks: an unreadable source or a missing or
// blocked permission, each with its fix; one ok line otherwise.
func (s *system) checks(ctx context.Context) []mcpserver.CheckResult {
	r := s.report(ctx)
	var out []mcpserver.CheckResult
	for _, b := range r.Sources {
		if b.State != "ok" {
			out = append(out, mcpserver.CheckResult{Name: "source " + b.Kind, Status: "fail", Detail: b.Name + ": " + b.Detail,
				Fix: "fix the path in config.toml, or (macOS) grant Full Disk Access to the program that starts Tidings"})
		}
	}
	for _, p := range r.Permissions {
		switch p.State {
		case tcc.Denied:
			out = append(out, mcpserver.CheckResult{Name: "permission " + string(p.Grant), Status: "fail", Detail: p.For + ": " + p.Detail,
				Fix: "System Settings > Privacy & Security: allow the program that starts Tidings, then restart it"})
		case tcc.CheckBlocked:
			out = append(out, mcpserver.CheckResult{Name: "permission " + string(p.Grant), Status: "warn", Detail: p.For + ": " + p.Detail,
				Fix: "answer the consent prompt on screen, then run tidings doctor again"})
		}
	}
	if len(out) == 0 {
		out = append(out, mcpserver.CheckResult{Name: "permissions", Status: "ok", Detail: "every configured source is readable and no needed permission is missing"})
	}
	return out
}
