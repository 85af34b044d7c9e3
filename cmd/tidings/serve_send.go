package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/tidings-mcp/tidings/internal/send"
	"github.com/tidings-mcp/tidings/internal/service"
)

// The send gate of `tidings serve` (in-process mode). serveSend is
// registered after the query layer's hook (serve_service.go), so the gate
// resolves names with the same contacts book the message tools use.

// newSendGate builds the send gate. It is send.FromConfig: this platform's
// confirmer and sender (on Linux a desktop dialog and no sender at all).
// Tests replace it to put a fake confirmer and sender behind the real gate,
// so nothing is ever sent.
var newSendGate = send.FromConfig

// serveSend sets Deps.Send when sending is switched on
// (ENABLE_MCP_SEND_MESSAGE=true) and not beaten by --read-only. In bridge
// mode the helper's gate answers (serveBridge sets bridge.RemoteSend).
// The gate keeps its key, nonces and audit log under $TIDINGS_HOME, checks
// the same read policy as every read ($TIDINGS_HOME/contacts/*.txt),
// resolves names from the contacts book, and accepts images only inside
// the profile's file_dirs. A gate that cannot be built (an unsafe home
// folder, a bad send_rate_limit) is not fatal: both tools then answer with
// the reason.
func serveSend(ctx context.Context, env *ServeEnv) error {
	cfg := env.Config
	switch {
	case !cfg.EnableSend, cfg.ReadOnly:
		return nil // the send tools are not registered
	case cfg.Bridge != "":
		return nil // the helper's gate answers (bridge.go)
	case cfg.Demo:
		env.Deps.Send = unavailableSend{errors.New("sending is off in demo mode: the demo's people are made up, so nothing is previewed or sent (serve your own data to send messages)")}
		return nil
	}
	var dirs []string
	if env.Deps.Profile != nil {
		dirs = env.Deps.Profile.FileDirs
	}
	var names send.NameResolver
	if env.Contacts != nil {
		names = bookNames{env.Contacts}
	} else if b := contactBook(env.Config, nil, env.Logger); b != nil {
		names = bookNames{b}
	}
	gate, err := newSendGate(cfg, homePolicy(cfg), names, dirs, env.Logger)
	if err != nil {
		env.Logger.Error("send gate unavailable; preview_message and send_message will say why", "err", err)
		env.Deps.Send = unavailableSend{err}
		return nil
	}
	env.Deps.Send = gate
	return nil
}

// bookNames resolves a recipient's name from the current contacts book
// (which reloads when its files change).
type bookNames struct{ b service.ContactBook }

// DisplayName implements send.NameResolver.
func (n bookNames) DisplayName(handle string) string {
	b, err := n.b.Book(context.Background())
	if err != nil || b == nil {
		return ""
	}
	return b.DisplayName(handle)
}

// HandlesOf implements send.PersonHandles: every phone and address on the
// card of the person behind handle, so that blocking one of them blocks
// sending to all of them.
func (n bookNames) HandlesOf(handle string) []string {
	b, err := n.b.Book(context.Background())
	if err != nil || b == nil {
		return nil
	}
	pp, ok := b.Resolve(handle)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(pp.Handles))
	for _, h := range pp.Handles {
		out = append(out, h.Key)
	}
	return out
}

var _ send.PersonHandles = bookNames{}

// unavailableSend answers both send tools with the reason sending is not
// possible in this process.
type unavailableSend struct{ err error }

func (u unavailableSend) Preview(context.Context, send.PreviewRequest) (send.PreviewResult, error) {
	return send.PreviewResult{}, u.error()
}

func (u unavailableSend) Send(context.Context, send.SendRequest) (send.SendResult, error) {
	return send.SendResult{}, u.error()
}

func (u unavailableSend) error() error {
	return fmt.Errorf("sending is not available in this process: %w", u.err)
}
