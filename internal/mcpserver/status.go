package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/service"
)

// StatusInput is get_status's (empty) argument object.
type StatusInput struct{}

// StatusOutput is get_status's result. It never contains message content:
// only versions, settings, file facts and counts.
type StatusOutput struct {
	Server   StatusServer    `json:"server"`
	Protocol StatusProtocol  `json:"protocol"`
	DataSet  DataSet         `json:"data_set"`
	Access   StatusAccess    `json:"access"`
	Toolsets []StatusToolset `json:"toolsets"`
	Sources  []SourceStatus  `json:"sources"`
	Index    IndexStatus     `json:"index"`
	Checks   []CheckResult   `json:"checks"`
	// Services holds each service's state, keyed by its name: "unavailable"
	// with its sentence when it cannot work here, else what its Status
	// reports (backends and their reachability, never content).
	Services map[string]ServiceStatus `json:"services"`
	// The query layer's view (Deps.Messages): read policy mode, embedder
	// and semantic readiness, per-source sync freshness, contacts.
	Policy        *service.PolicyStatus   `json:"policy,omitempty"`
	Search        *service.SearchStatus   `json:"search,omitempty"`
	SyncedSources []service.SourceSync    `json:"synced_sources,omitempty"`
	Contacts      *service.ContactsStatus `json:"contacts,omitempty"`
	Dossiers      *int                    `json:"dossiers,omitempty" jsonschema:"living dossiers kept"`
	Now           string                  `json:"now" jsonschema:"the server's clock (RFC 3339); pinned when TIDINGS_NOW is set"`
	ClockNote     string                  `json:"clock_note,omitempty"`
}

// StatusServer identifies the running server.
type StatusServer struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Transport string `json:"transport"`
}

// StatusProtocol lists the MCP versions served, by era.
type StatusProtocol struct {
	Modern []string `json:"modern" jsonschema:"stateless MCP versions (2026-07-28 and later)"`
	Legacy []string `json:"legacy" jsonschema:"versions served through the initialize handshake"`
}

// StatusAccess reports the settings that narrow the tool list.
type StatusAccess struct {
	ReadOnly    bool `json:"read_only"`
	SendEnabled bool `json:"send_enabled" jsonschema:"true when send tools are registered (ENABLE_MCP_SEND_MESSAGE=true, not read-only, not demo mode)"`
	// MailSendEnabled: mail_send is registered (ENABLE_MCP_SEND_MAIL=true).
	MailSendEnabled bool   `json:"mail_send_enabled"`
	Profile         string `json:"profile,omitempty"`
}

// StatusToolset is one toolset and its tools' registration decisions.
type StatusToolset struct {
	Name    Toolset    `json:"name"`
	Enabled bool       `json:"enabled"`
	Tools   []Decision `json:"tools"`
}

var getStatus = Define(Tool{
	Name:        "get_status",
	Title:       "Tidings status",
	Description: "What this server answers from: versions, the data set (demo or personal), which tools are enabled and why others are not, sources, index freshness and health checks with fixes. No message content.",
	Toolset:     ToolsetStatus,
	ReadOnly:    Yes,
	Destructive: No,
	Idempotent:  Yes,
	OpenWorld:   No,
}, func(d *Deps) mcp.ToolHandlerFor[StatusInput, StatusOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, _ StatusInput) (*mcp.CallToolResult, StatusOutput, error) {
		return nil, buildStatus(ctx, d), nil
	}
})

// buildStatus assembles get_status from the dependencies.
func buildStatus(ctx context.Context, d *Deps) StatusOutput {
	out := StatusOutput{
		Server:   StatusServer{Name: ServerName, Version: d.Version, Transport: d.Transport},
		DataSet:  d.DataSet,
		Toolsets: []StatusToolset{},
		Sources:  []SourceStatus{},
		Checks:   []CheckResult{},
		Services: ServiceStatuses(ctx, d.Services),
		Now:      d.Now().UTC().Format("2006-01-02T15:04:05Z07:00"),
	}
	if d.Config != nil && d.Config.NowRaw != "" {
		out.ClockNote = "clock pinned by TIDINGS_NOW"
	}
	for _, v := range mcp.SupportedProtocolVersions() {
		if v >= "2026-07-28" {
			out.Protocol.Modern = append(out.Protocol.Modern, v)
		} else {
			out.Protocol.Legacy = append(out.Protocol.Legacy, v)
		}
	}
	out.Access.ReadOnly = d.Filters.ReadOnly
	if d.Profile != nil {
		out.Access.Profile = d.Profile.Path
	}
	if d.Selection != nil {
		for _, ts := range Toolsets {
			st := StatusToolset{Name: ts, Tools: []Decision{}}
			for _, dec := range d.Selection.Decisions {
				if dec.Toolset == ts {
					st.Tools = append(st.Tools, dec)
					st.Enabled = st.Enabled || dec.Enabled
				}
			}
			if len(st.Tools) > 0 {
				out.Toolsets = append(out.Toolsets, st)
			}
		}
		out.Access.SendEnabled = slices.ContainsFunc(d.Selection.Tools, func(t Tool) bool { return t.SendGate })
		out.Access.MailSendEnabled = slices.ContainsFunc(d.Selection.Tools, func(t Tool) bool { return t.Name == "mail_send" })
	}
	if d.Sources != nil {
		if s := d.Sources.SourceStatus(ctx); s != nil {
			out.Sources = s
		}
	}
	out.Index = IndexStatus{State: "absent", Note: "no index in this process yet; `tidings index` builds one"}
	if d.Index != nil {
		is, err := d.Index.IndexStatus(ctx)
		if err != nil {
			is = IndexStatus{State: "error", Note: "index status unavailable: " + err.Error()}
		}
		out.Index = is
	}
	if d.Messages != nil {
		st, err := d.Messages.Status(ctx)
		if err != nil {
			out.Index.Note = joinSentences(out.Index.Note, "query layer status unavailable: "+err.Error())
		}
		out.Policy, out.Search, out.Contacts = &st.Policy, &st.Search, &st.Contacts
		out.SyncedSources = st.Sources
		if st.Dossiers >= 0 {
			out.Dossiers = &st.Dossiers
		}
	}
	if d.Checks != nil {
		if c := d.Checks(ctx); c != nil {
			out.Checks = c
		}
	}
	out.Checks = append(out.Checks, ServiceChecks(ctx, d.Services)...)
	if d.DataSetNow != nil {
		out.DataSet = d.DataSetNow(ctx)
	}
	return out
}

// SourcesFromConfig reports the sources named in the configuration by
// looking at the files only (existence and permission), never their content.
type SourcesFromConfig struct{ Config *config.Config }

// SourceStatus implements SourceStatusProvider.
func (s SourcesFromConfig) SourceStatus(context.Context) []SourceStatus {
	c := s.Config
	out := []SourceStatus{}
	add := func(kind, path string) {
		if path != "" {
			out = append(out, statSource(kind, path))
		}
	}
	add("imessage", c.IMessage)
	add("ios_backup", c.IOSBackup)
	for _, p := range c.AndroidXML {
		add("android_xml", p)
	}
	for _, p := range c.Contacts {
		add("contacts", p)
	}
	return out
}

func statSource(kind, path string) SourceStatus {
	st := SourceStatus{Kind: kind, Path: path}
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		st.Found = true
		if fi.IsDir() {
			st.Detail = "folder"
		} else {
			st.Detail = "file"
		}
		if f, err := os.Open(path); err != nil {
			st.Detail = "present but not readable: " + permissionHint(err)
		} else {
			f.Close()
		}
	case errors.Is(err, fs.ErrNotExist):
		st.Detail = "not found"
	default:
		st.Detail = permissionHint(err)
	}
	return st
}

func permissionHint(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return "permission denied (on macOS, grant Full Disk Access to the process that runs Tidings)"
	}
	return err.Error()
}

func joinSentences(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// ServiceStatuses is get_status' "services": one entry per service, keyed
// by name. A service that cannot work here is "unavailable" with its
// sentence (its Status is not asked: it has nothing to reach); one without
// a Status func is "ready"; a panicking Status is "error".
func ServiceStatuses(ctx context.Context, services []Service) map[string]ServiceStatus {
	out := map[string]ServiceStatus{}
	for _, svc := range services {
		switch {
		case svc.Unavailable != "":
			out[svc.Name] = ServiceStatus{State: "unavailable", Detail: svc.Unavailable}
		case svc.Status == nil:
			out[svc.Name] = ServiceStatus{State: "ready"}
		default:
			out[svc.Name] = serviceStatus(ctx, svc)
		}
	}
	return out
}

func serviceStatus(ctx context.Context, svc Service) (st ServiceStatus) {
	defer func() {
		if r := recover(); r != nil {
			st = ServiceStatus{State: "error", Detail: fmt.Sprintf("status crashed: %v", r)}
		}
	}()
	return svc.Status(ctx)
}

// ServiceChecks runs every service's doctor checks in service order, for
// get_status' "checks" and `tidings doctor`. A panicking check is
// reported as failed instead of taking the process down.
func ServiceChecks(ctx context.Context, services []Service) []CheckResult {
	var out []CheckResult
	for _, svc := range services {
		if svc.Checks == nil {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					out = append(out, CheckResult{Name: svc.Name, Status: "fail", Detail: fmt.Sprintf("check crashed: %v", r),
						Fix: "report this as a bug with the output of tidings doctor"})
				}
			}()
			out = append(out, svc.Checks(ctx)...)
		}()
	}
	return out
}
