package mcpserver

import (
	"fmt"
	"slices"
	"strings"
)

// Filters decide which inventory tools a server registers. Select applies
// them in this fixed order, and the first one that removes a tool gives the
// reason recorded for it:
//
//  1. ReadOnly: write tools are never registered. It beats every other
//     setting, including ENABLE_MCP_SEND_MESSAGE and a profile with
//     access = "write".
//  2. Send quarantine: tools marked SendGate (preview_message,
//     send_message) are registered only when EnableSend is true, and never
//     in demo mode (Demo): the demo's people are made up, so a send tool
//     could only answer "off" (docs/configuration.md).
//  3. Toolsets: when Toolsets is non-empty, only tools of those toolsets;
//     when it is empty, every messaging tool and the tools of Default
//     services (docs/configuration.md, "Which tools are registered").
//  4. Availability: a service that cannot work here (Service.Unavailable)
//     registers none of its tools, and its sentence is the reason.
//  5. Profile: allowed_tools, then access = "read" (drops write tools), then
//     allow_external = false (drops open-world tools; config.toml's
//     allow_external = false does the same, see DenyExternal), then
//     file_dirs (a tool that writes or reads the person's files needs at
//     least one folder).
//
// Every filter can only remove tools; none can add one back. A tool that
// is open world only through a configured endpoint (Tool.OpenWorldVia) is
// never removed for it: allow_external = false turns the endpoint off
// instead, and the tool's openWorldHint says which it is (DefFor).
type Filters struct {
	ReadOnly   bool
	EnableSend bool
	// Demo is `tidings serve --demo`: the send tools are never registered.
	Demo     bool
	Toolsets []string
	Profile  *Profile
	// DenyExternal is config.toml's allow_external = false
	// (TIDINGS_ALLOW_EXTERNAL): the same as a profile's, and the stricter
	// of the two wins.
	DenyExternal bool
	// Endpoints are the external endpoints this process has configured
	// (an http embedder, a dossier summary endpoint), whether or not
	// allow_external lets them be used.
	Endpoints []Endpoint
}

// ExternalAllowed reports whether both the configuration and the profile
// allow reaching beyond this machine.
func (f Filters) ExternalAllowed() bool {
	return !f.DenyExternal && (f.Profile == nil || f.Profile.AllowExternal)
}

// Reaches reports whether endpoint e is configured and allowed, so tools
// naming it in OpenWorldVia send text to it.
func (f Filters) Reaches(e Endpoint) bool {
	return f.ExternalAllowed() && slices.Contains(f.Endpoints, e)
}

// Decision records whether one tool was registered and, if not, why.
type Decision struct {
	Tool    string  `json:"tool"`
	Toolset Toolset `json:"toolset"`
	Enabled bool    `json:"enabled"`
	Reason  string  `json:"reason,omitempty"`
}

// Selection is the outcome of Select.
type Selection struct {
	// Tools are the enabled tools in inventory order.
	Tools []Tool
	// Decisions cover every inventory tool in inventory order.
	Decisions []Decision
}

// Names returns the enabled tool names in order.
func (s *Selection) Names() []string {
	out := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		out[i] = t.Name
	}
	return out
}

// EnabledToolsets lists the toolsets with at least one enabled tool.
func (s *Selection) EnabledToolsets() []Toolset {
	var out []Toolset
	for _, ts := range Toolsets {
		if slices.ContainsFunc(s.Tools, func(t Tool) bool { return t.Toolset == ts }) {
			out = append(out, ts)
		}
	}
	return out
}

// Select applies f to tools. Unknown toolset names and profile tool names
// are errors, so a typo never silently empties the server.
func Select(tools []Tool, f Filters) (*Selection, error) {
	for _, ts := range f.Toolsets {
		if !slices.Contains(Toolsets, Toolset(ts)) {
			return nil, fmt.Errorf("unknown toolset %q (known: %s)", ts, joinToolsets(Toolsets))
		}
	}
	if p := f.Profile; p != nil {
		for _, n := range p.AllowedTools {
			if !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == n }) {
				return nil, fmt.Errorf("profile %s: allowed_tools names unknown tool %q", p.Path, n)
			}
		}
	}
	sel := &Selection{}
	for _, t := range tools {
		reason := excluded(t, f)
		sel.Decisions = append(sel.Decisions, Decision{Tool: t.Name, Toolset: t.Toolset, Enabled: reason == "", Reason: reason})
		if reason == "" {
			sel.Tools = append(sel.Tools, t)
		}
	}
	return sel, nil
}

// excluded returns why t is not registered, or "" when it is.
func excluded(t Tool, f Filters) string {
	if f.ReadOnly && t.IsWrite() {
		return "read-only mode: write tools are never registered"
	}
	if t.SendGate && !f.EnableSend {
		return "send quarantine: set ENABLE_MCP_SEND_MESSAGE=true to register it"
	}
	if t.SendGate && f.Demo {
		return "demo mode: the demo's people are made up, so nothing is sent (serve your own data to send messages)"
	}
	if len(f.Toolsets) > 0 && !slices.Contains(f.Toolsets, string(t.Toolset)) {
		return fmt.Sprintf("toolset %q is not enabled", t.Toolset)
	}
	if len(f.Toolsets) == 0 && t.optIn {
		return fmt.Sprintf("toolset %q is opt-in: name it in the toolsets setting to register it", t.Toolset)
	}
	if t.unavailable != "" {
		return "unavailable: " + t.unavailable
	}
	if p := f.Profile; p != nil {
		if p.AllowedTools != nil && !slices.Contains(p.AllowedTools, t.Name) {
			return "profile: not in allowed_tools"
		}
		if p.Access == "read" && t.IsWrite() {
			return `profile: access = "read"`
		}
		if !p.AllowExternal && t.OpenWorld == Yes {
			return "profile: allow_external = false"
		}
	}
	if f.DenyExternal && t.OpenWorld == Yes {
		return "config: allow_external = false"
	}
	if t.WritesFiles && (f.Profile == nil || len(f.Profile.FileDirs) == 0) {
		return "no file_dirs: a profile must name the folders this tool may write into"
	}
	if t.ReadsFiles && (f.Profile == nil || len(f.Profile.FileDirs) == 0) {
		return "no file_dirs: a profile must name the folders this tool may read from"
	}
	return ""
}

func joinToolsets(ts []Toolset) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
