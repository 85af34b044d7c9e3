package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
)

// Deps is everything tool handlers may use. The CLI fills it; tests fill
// what they need. A nil provider means "not available in this process", and
// handlers must say so rather than return empty answers.
//
// To give tools a new dependency (the index, the read policy, the send
// gate), add a field here whose type is a small interface declared in this
// package (interfaces live with their consumer), fill it in
// cmd/tidings/serve.go's setup hooks, and document it in
// docs/architecture.md.
type Deps struct {
	Config  *config.Config
	Version string
	// Now is the clock (config.Config.Now); never call time.Now in a tool.
	Now    func() time.Time
	Logger *slog.Logger
	// Transport is "stdio" or "http"; get_status reports it.
	Transport string
	// Profile is the loaded --profile, or nil.
	Profile *Profile

	// Index reports index freshness; nil until an index exists in-process.
	Index IndexStatusProvider
	// Sources reports the data sources; nil means SourcesFromConfig.
	Sources SourceStatusProvider
	// Checks runs the doctor checks for get_status; nil = none registered.
	Checks func(ctx context.Context) []CheckResult
	// DataSet describes what data this process serves (demo, personal,
	// bridge). Setup hooks overwrite it once they know.
	DataSet DataSet
	// DataSetNow, when set, is called by get_status on every request
	// instead of reporting DataSet, so data that appears (a first sync
	// finishing, an index built while the server runs, a bridge helper
	// starting) is reported as it is, not as it was at start.
	DataSetNow func(ctx context.Context) DataSet
	// Send is the send gate (internal/send's *Gate); nil = cannot send here.
	Send SendService
	// Messages is the query layer (internal/service's *Service) behind the
	// message, triage, contacts and attachment tools; nil = no message
	// data in this process, and those tools say so.
	Messages MessageService

	// Set by New: the services given to it, the filters and the resulting
	// selection.
	// BridgeCall, when set (`serve --bridge`), answers every Bridged
	// service tool: it sends the protocol 1.3 action named tool with args
	// (the call's arguments object) to the helper and returns the
	// helper's CallToolResult as JSON. nil = run every tool in-process.
	BridgeCall func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error)

	Services  []Service
	Filters   Filters
	Selection *Selection
}

func (d *Deps) fill() {
	if d.Now == nil {
		if d.Config != nil && d.Config.Now != nil {
			d.Now = d.Config.Now
		} else {
			d.Now = time.Now
		}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Version == "" {
		d.Version = "dev"
	}
	if d.Sources == nil && d.Config != nil {
		d.Sources = SourcesFromConfig{Config: d.Config}
	}
}

// DataSet says which data a server answers from.
type DataSet struct {
	// Kind is "demo", "personal" or "bridge".
	Kind string `json:"kind"`
	// Empty is true when there is nothing to answer from yet.
	Empty bool `json:"empty"`
	// Note explains the state in one sentence for the model and the user.
	Note string `json:"note,omitempty"`
}

// IndexStatusProvider reports the index's freshness. The index package
// implements it; get_status calls it on every request.
type IndexStatusProvider interface {
	IndexStatus(ctx context.Context) (IndexStatus, error)
}

// IndexStatusFunc adapts a function to IndexStatusProvider, for a serve
// hook that converts the index package's own status:
//
//	env.Deps.Index = mcpserver.IndexStatusFunc(func(ctx context.Context) (mcpserver.IndexStatus, error) { … })
type IndexStatusFunc func(ctx context.Context) (IndexStatus, error)

// IndexStatus implements IndexStatusProvider.
func (f IndexStatusFunc) IndexStatus(ctx context.Context) (IndexStatus, error) { return f(ctx) }

// IndexStatus is the index part of get_status. Fields grow as the index
// does; every field must be free of message content.
type IndexStatus struct {
	// State is "absent", "building", "ready" or "error".
	State         string     `json:"state"`
	Path          string     `json:"path,omitempty"`
	Conversations int64      `json:"conversations"`
	Messages      int64      `json:"messages"`
	Contacts      int64      `json:"contacts"`
	LastSync      *time.Time `json:"last_sync,omitempty"`
	// NewestMessage is the time of the newest indexed message.
	NewestMessage *time.Time `json:"newest_message,omitempty"`
	// LagSeconds is how far the index trails its sources, when known.
	LagSeconds *float64 `json:"lag_seconds,omitempty"`
	Note       string   `json:"note,omitempty"`
}

// SourceStatusProvider lists the data sources a process reads.
type SourceStatusProvider interface {
	SourceStatus(ctx context.Context) []SourceStatus
}

// SourceStatusFunc adapts a function to SourceStatusProvider.
type SourceStatusFunc func(ctx context.Context) []SourceStatus

// SourceStatus implements SourceStatusProvider.
func (f SourceStatusFunc) SourceStatus(ctx context.Context) []SourceStatus { return f(ctx) }

// SourceStatus is one configured data source. No content, only facts about
// the file.
type SourceStatus struct {
	// Kind is "imessage", "ios_backup", "android_xml" or "contacts".
	Kind  string `json:"kind"`
	Path  string `json:"path"`
	Found bool   `json:"found"`
	// Detail says what was found or what is wrong ("permission denied:
	// grant Full Disk Access", "not found").
	Detail string `json:"detail,omitempty"`
}

// CheckResult is one doctor check. Status is "ok", "warn", "fail" or
// "skip"; Fix says what to do when it is not ok.
type CheckResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
	Fix    string `json:"fix,omitempty"`
}
