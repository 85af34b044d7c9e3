package mcpserver

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeInventory mirrors the shapes of the real tools to come: read tools,
// an open-world read tool, a file-writing tool and the two send tools.
func fakeInventory() []Tool {
	mk := func(name string, ts Toolset, readOnly, openWorld Hint, mod func(*Tool)) Tool {
		t := Tool{Name: name, Title: name, Description: "test tool " + name, Toolset: ts,
			ReadOnly: readOnly, Destructive: No, Idempotent: Yes, OpenWorld: openWorld}
		if mod != nil {
			mod(&t)
		}
		return Define(t, func(*Deps) mcp.ToolHandlerFor[struct{}, struct{}] { return nil })
	}
	return []Tool{
		mk("get_status", ToolsetStatus, Yes, No, nil),
		mk("search_messages", ToolsetMessages, Yes, No, nil),
		mk("get_contact_dossier", ToolsetContacts, Yes, Yes, nil), // may call an LLM endpoint
		mk("save_attachment", ToolsetAttachments, No, No, func(t *Tool) { t.WritesFiles = true }),
		mk("preview_message", ToolsetSend, No, No, func(t *Tool) { t.SendGate = true }),
		mk("send_message", ToolsetSend, No, Yes, func(t *Tool) { t.SendGate = true; t.Destructive = Yes; t.Idempotent = No }),
	}
}

func TestSelectOrder(t *testing.T) {
	writeAll := &Profile{Path: "p.toml", Access: "write", AllowExternal: true, FileDirs: []string{"/out"}}
	tests := []struct {
		name    string
		f       Filters
		want    []string
		reasons map[string]string // tool -> substring of its reason
	}{
		{"defaults: send quarantined, no file dirs", Filters{},
			[]string{"get_status", "search_messages", "get_contact_dossier"},
			map[string]string{"send_message": "send quarantine", "preview_message": "send quarantine", "save_attachment": "file_dirs"}},
		{"send enabled", Filters{EnableSend: true},
			[]string{"get_status", "search_messages", "get_contact_dossier", "preview_message", "send_message"}, nil},
		{"demo mode never registers send", Filters{EnableSend: true, Demo: true},
			[]string{"get_status", "search_messages", "get_contact_dossier"},
			map[string]string{"send_message": "demo mode", "preview_message": "demo mode"}},
		{"read-only beats send enable and a write profile", Filters{ReadOnly: true, EnableSend: true, Profile: writeAll},
			[]string{"get_status", "search_messages", "get_contact_dossier"},
			map[string]string{"send_message": "read-only", "save_attachment": "read-only"}},
		{"read-only beats toolsets naming send", Filters{ReadOnly: true, EnableSend: true, Toolsets: []string{"send"}},
			nil, map[string]string{"send_message": "read-only", "get_status": "toolset"}},
		{"quarantine is reported before toolsets", Filters{Toolsets: []string{"status"}},
			[]string{"get_status"}, map[string]string{"send_message": "send quarantine", "search_messages": `toolset "messages"`}},
		{"toolsets", Filters{EnableSend: true, Toolsets: []string{"messages", "send"}},
			[]string{"search_messages", "preview_message", "send_message"}, nil},
		{"profile allowed_tools cannot add a quarantined tool", Filters{Profile: &Profile{Access: "write", AllowExternal: true, AllowedTools: []string{"send_message", "get_status"}}},
			[]string{"get_status"}, map[string]string{"send_message": "send quarantine", "search_messages": "allowed_tools"}},
		{"profile empty allowed_tools allows nothing", Filters{Profile: &Profile{Access: "write", AllowExternal: true, AllowedTools: []string{}}},
			nil, map[string]string{"get_status": "allowed_tools"}},
		{"profile access read", Filters{EnableSend: true, Profile: &Profile{Access: "read", AllowExternal: true, FileDirs: []string{"/out"}}},
			[]string{"get_status", "search_messages", "get_contact_dossier"}, map[string]string{"send_message": `access = "read"`, "save_attachment": `access = "read"`}},
		{"profile no external", Filters{EnableSend: true, Profile: &Profile{Access: "write", AllowExternal: false}},
			[]string{"get_status", "search_messages", "preview_message"}, map[string]string{"get_contact_dossier": "allow_external", "send_message": "allow_external"}},
		{"profile file_dirs enable the file tool", Filters{Profile: writeAll},
			[]string{"get_status", "search_messages", "get_contact_dossier", "save_attachment"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Select(fakeInventory(), tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Names(); !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("tools = %v, want %v", got, tt.want)
			}
			if len(sel.Decisions) != len(fakeInventory()) {
				t.Errorf("%d decisions for %d tools", len(sel.Decisions), len(fakeInventory()))
			}
			for _, d := range sel.Decisions {
				if want, ok := tt.reasons[d.Tool]; ok && !strings.Contains(d.Reason, want) {
					t.Errorf("%s: reason %q, want it to mention %q", d.Tool, d.Reason, want)
				}
				if d.Enabled != (d.Reason == "") {
					t.Errorf("%s: enabled=%v with reason %q", d.Tool, d.Enabled, d.Reason)
				}
			}
		})
	}
}

// TestReadOnlyNeverRegistersWriteTools checks the property over every
// combination of the other settings, not just hand-picked ones.
func TestReadOnlyNeverRegistersWriteTools(t *testing.T) {
	profiles := []*Profile{nil, {Access: "write", AllowExternal: true, FileDirs: []string{"/x"}}, {Access: "read"}}
	toolsets := [][]string{nil, {"send"}, {"send", "attachments", "status"}}
	for _, p := range profiles {
		for _, ts := range toolsets {
			for _, send := range []bool{false, true} {
				sel, err := Select(fakeInventory(), Filters{ReadOnly: true, EnableSend: send, Toolsets: ts, Profile: p})
				if err != nil {
					t.Fatal(err)
				}
				for _, tl := range sel.Tools {
					if tl.IsWrite() {
						t.Errorf("read-only registered write tool %s (send=%v toolsets=%v profile=%+v)", tl.Name, send, ts, p)
					}
				}
			}
		}
	}
}

func TestSelectErrors(t *testing.T) {
	if _, err := Select(fakeInventory(), Filters{Toolsets: []string{"mesages"}}); err == nil || !strings.Contains(err.Error(), `unknown toolset "mesages"`) {
		t.Errorf("typo in toolset: err = %v", err)
	}
	if _, err := Select(fakeInventory(), Filters{Profile: &Profile{Path: "p.toml", AllowedTools: []string{"get_stauts"}}}); err == nil || !strings.Contains(err.Error(), `"get_stauts"`) {
		t.Errorf("typo in allowed_tools: err = %v", err)
	}
}

func TestLoadProfile(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "p.toml")
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	p, err := LoadProfile(write(`allowed_tools = ["get_status"]
access = "read"
allow_external = false
file_dirs = ["/srv/out/../out"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Access != "read" || p.AllowExternal || !reflect.DeepEqual(p.AllowedTools, []string{"get_status"}) || !reflect.DeepEqual(p.FileDirs, []string{"/srv/out"}) {
		t.Errorf("profile = %+v", p)
	}
	p, err = LoadProfile(write(``))
	if err != nil {
		t.Fatal(err)
	}
	if p.Access != "write" || !p.AllowExternal || p.AllowedTools != nil {
		t.Errorf("empty profile narrows: %+v", p)
	}
	if p, _ := LoadProfile(write(`allowed_tools = []`)); p == nil || p.AllowedTools == nil {
		t.Errorf("explicit empty allowed_tools lost: %+v", p)
	}
	for body, want := range map[string]string{
		`acces = "read"`:             `unknown key "acces"`,
		`access = "admin"`:           `access = "admin"`,
		`file_dirs = ["relative/x"]`: "absolute",
		`allow_external = "no"`:      "allow_external",
	} {
		if _, err := LoadProfile(write(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", body, err, want)
		}
	}
	if _, err := LoadProfile(filepath.Join(dir, "missing.toml")); err == nil {
		t.Error("missing profile accepted")
	}
}
