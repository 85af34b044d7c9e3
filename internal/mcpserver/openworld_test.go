package mcpserver

import (
	"context"
	"testing"
)

// A tool that is open world only because of a configured endpoint
// (Tool.OpenWorldVia: search_messages through an http embedder,
// get_contact_dossier through the dossier summary endpoint) stays
// registered whatever allow_external says, and declares openWorldHint true
// exactly when that endpoint is configured and allowed — by the profile
// and by config.toml, the stricter winning (docs/security.md, "Open
// world"). Tools whose call itself reaches out (OpenWorld: Yes) are still
// dropped by allow_external = false, from either source.
func TestOpenWorldHintFollowsConfiguredEndpoint(t *testing.T) {
	allow := &Profile{Access: "write", AllowExternal: true}
	deny := &Profile{Access: "write", AllowExternal: false}
	reacher := fakeServiceTool("web_fetch", ToolsetWeb)
	reacher.OpenWorld = Yes
	web := Service{Name: "web", Default: true, Tools: []Tool{reacher}}
	both := []Endpoint{EndpointEmbedder, EndpointDossierSummary}
	for _, tc := range []struct {
		name string
		f    Filters
		// want: tool -> openWorldHint; absent from the map = must not be
		// registered.
		want map[string]bool
	}{
		{"no endpoint configured", Filters{Profile: allow},
			map[string]bool{"search_messages": false, "get_contact_dossier": false, "list_conversations": false, "web_fetch": true}},
		{"no profile, no endpoint", Filters{},
			map[string]bool{"search_messages": false, "get_contact_dossier": false, "web_fetch": true}},
		{"embedder endpoint allowed", Filters{Profile: allow, Endpoints: []Endpoint{EndpointEmbedder}},
			map[string]bool{"search_messages": true, "get_contact_dossier": false, "list_conversations": false, "web_fetch": true}},
		{"both endpoints allowed, no profile", Filters{Endpoints: both},
			map[string]bool{"search_messages": true, "get_contact_dossier": true, "list_conversations": false, "web_fetch": true}},
		{"endpoints disallowed by the profile", Filters{Profile: deny, Endpoints: both},
			map[string]bool{"search_messages": false, "get_contact_dossier": false, "list_conversations": false}},
		{"endpoints disallowed by config", Filters{Profile: allow, DenyExternal: true, Endpoints: both},
			map[string]bool{"search_messages": false, "get_contact_dossier": false, "list_conversations": false}},
		{"disallowed by config, no profile", Filters{DenyExternal: true, Endpoints: both},
			map[string]bool{"search_messages": false, "get_contact_dossier": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := New(&Deps{}, tc.f, web)
			if err != nil {
				t.Fatal(err)
			}
			res, err := connect(t, srv.SDK).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, tl := range res.Tools {
				got[tl.Name] = tl.Annotations.OpenWorldHint != nil && *tl.Annotations.OpenWorldHint
			}
			for name, want := range tc.want {
				if g, ok := got[name]; !ok || g != want {
					t.Errorf("%s: registered %v, openWorldHint %v; want registered, %v", name, ok, g, want)
				}
			}
			if _, ok := got["web_fetch"]; ok != (tc.want["web_fetch"]) {
				t.Errorf("web_fetch registered = %v, want %v", ok, tc.want["web_fetch"])
			}
			for _, d := range srv.Selection.Decisions {
				if d.Tool == "web_fetch" && !d.Enabled {
					want := "profile: allow_external = false"
					if tc.f.DenyExternal {
						want = "config: allow_external = false"
					}
					if d.Reason != want {
						t.Errorf("web_fetch reason %q, want %q", d.Reason, want)
					}
				}
			}
		})
	}
}

// OpenWorldVia is only for tools that are closed world by themselves: a
// tool that states OpenWorld: Yes and also names an endpoint is
// contradictory, and an unknown endpoint kind is a typo; Validate refuses
// both.
func TestOpenWorldViaIsValidated(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Tool)
	}{
		{"open world and via", func(t *Tool) { t.OpenWorld = Yes; t.OpenWorldVia = []Endpoint{EndpointEmbedder} }},
		{"unknown endpoint", func(t *Tool) { t.OpenWorldVia = []Endpoint{"summarizer"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := fakeServiceTool("x_tool", ToolsetSystem)
			tc.edit(&tl)
			if err := Validate(tl); err == nil {
				t.Error("Validate accepted it")
			}
		})
	}
}
