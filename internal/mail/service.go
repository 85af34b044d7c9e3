package mail

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/account"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/scope"
	"github.com/tidings-mcp/tidings/internal/send"
)

// StoreFromConfig builds the store of cfg's [[mail.accounts]]. Nothing is
// contacted and no secret is read until a tool or check runs (so `serve
// --bridge`, where the helper answers, opens nothing). An account with
// both imap and maildir (or applemail) reads IMAP (the local copy is then
// unused): that is how a Mac account gets its writes (docs/configuration.md).
func StoreFromConfig(cfg *config.Config, now func() time.Time) (*Store, error) {
	st := &Store{Now: now}
	for _, a := range cfg.Mail.Accounts {
		info := AccountInfo{Name: a.Name, CanSend: a.SMTP != ""}
		for _, f := range a.From {
			info.From = append(info.From, strings.ToLower(f))
		}
		switch {
		case a.IMAP != "":
			src := a.Password()
			var once sync.Once
			var secret account.Secret
			var perr error
			b, err := NewIMAP(IMAPConfig{Account: a.Name, URL: a.IMAP, Username: a.Username, Auth: a.Auth, CAFile: a.CAFile,
				Password: func(ctx context.Context) (account.Secret, error) {
					once.Do(func() { secret, perr = src.Resolve(ctx, account.Options{}) })
					return secret, perr
				}})
			if err != nil {
				return nil, err
			}
			st.Backends = append(st.Backends, b)
			info.Kind = "imap"
		case a.Maildir != "":
			b, err := NewMaildir(a.Name, a.Maildir)
			if err != nil {
				return nil, err
			}
			st.Backends = append(st.Backends, b)
			info.Kind = "maildir"
		case a.AppleMail != "":
			b, err := NewAppleMail(a.Name, a.AppleMail, a.AppleMailAccount)
			if err != nil {
				return nil, err
			}
			st.Backends = append(st.Backends, b)
			info.Kind = "applemail"
		default:
			continue // SMTP only: nothing to read
		}
		st.Accounts = append(st.Accounts, info)
		st.Self = append(st.Self, info.From...)
		if u := strings.ToLower(a.Username); strings.Contains(u, "@") && !slices.Contains(st.Self, u) {
			st.Self = append(st.Self, u)
		}
	}
	pst, err := policy.NewStore(cfg.Home, policy.Options{HardenedAllowlist: cfg.HardenedAllowlist})
	if err != nil {
		// The policy is loaded on first use; an error here hides all mail.
		st.Allow = func(context.Context, []string) (bool, error) { return false, err }
	} else {
		st.Allow = PolicyAllow(pst, FileBook(cfg.Contacts, cfg.Region))
	}
	return st, nil
}

// SenderFromConfig builds the SMTP submitters of cfg's accounts.
func SenderFromConfig(cfg *config.Config, st *Store) (*Sender, error) {
	snd := &Sender{St: st, SMTP: map[string]*SMTP{}, NoSentCopy: map[string]bool{}}
	for _, a := range cfg.Mail.Accounts {
		if a.SMTP == "" {
			continue
		}
		src := a.Password()
		var once sync.Once
		var secret account.Secret
		var perr error
		sub, err := NewSMTP(SMTPConfig{Account: a.Name, URL: a.SMTP, Username: a.Username, Auth: a.Auth, CAFile: a.CAFile,
			Password: func(ctx context.Context) (account.Secret, error) {
				once.Do(func() { secret, perr = src.Resolve(ctx, account.Options{}) })
				return secret, perr
			}})
		if err != nil {
			return nil, err
		}
		snd.SMTP[a.Name] = sub
		snd.NoSentCopy[a.Name] = !a.KeepsSentCopy()
	}
	return snd, nil
}

// New builds the Mail service (docs/tools.md, "Mail"). preview_mail and
// mail_send exist only with ENABLE_MCP_SEND_MAIL=true, outside demo mode
// and read-only mode.
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	cfg := env.Config
	st, err := StoreFromConfig(cfg, env.Now)
	if err != nil {
		return mcpserver.Service{}, err
	}
	svc := Service(st)
	// mail_search reads the index mail is synced into (serve's, or the
	// helper's in bridge mode, where the helper answers it).
	svc.Tools = append(svc.Tools, SearchTool(SearchOptions{Index: env.Index, Location: cfg.Location()}))
	if len(st.Backends) == 0 {
		svc.Unavailable = "no [[mail.accounts]] with imap, maildir or applemail in config.toml"
	}
	if cfg.EnableSendMail && !cfg.Demo && !cfg.ReadOnly {
		snd, err := SenderFromConfig(cfg, st)
		if err != nil {
			return mcpserver.Service{}, err
		}
		var gate *send.MailGate
		if !env.Bridge {
			pst, err := policy.NewStore(cfg.Home, policy.Options{HardenedAllowlist: cfg.HardenedAllowlist})
			if err != nil {
				return mcpserver.Service{}, fmt.Errorf("mail send: %w", err)
			}
			confirmer, _ := send.Platform(send.PlatformOptions{})
			gate, err = send.NewMailGate(send.Options{Home: cfg.Home, Now: cfg.Now, Location: cfg.Location(), Region: cfg.Region,
				Policy: pst, Confirmer: confirmer, RateLimit: cfg.SendRateLimit, Logger: env.Logger}, snd)
			if err != nil {
				return mcpserver.Service{}, err
			}
		}
		svc.Tools = append(svc.Tools, SendTools(st, snd, gate)...)
	}
	return svc, nil
}

// Service is the Mail service over st.
func Service(st *Store) mcpserver.Service {
	return mcpserver.Service{
		Name:        "mail",
		Default:     len(st.Backends) > 0,
		Tools:       Tools(st),
		Checks:      checks(st),
		Status:      status(st),
		ScopeFields: []string{string(scope.MailAccounts), string(scope.MailMailboxes)},
	}
}

func checks(st *Store) func(context.Context) []mcpserver.CheckResult {
	return func(ctx context.Context) []mcpserver.CheckResult {
		var out []mcpserver.CheckResult
		for _, b := range st.Backends {
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			mbs, err := b.Mailboxes(cctx)
			cancel()
			r := mcpserver.CheckResult{Name: fmt.Sprintf("mail %s %q", b.Kind(), b.Account()), Status: "ok",
				Detail: fmt.Sprintf("reachable, %d mailboxes listed", len(mbs))}
			if err != nil {
				r.Status, r.Detail = "fail", err.Error()
				r.Fix = "check the imap URL, maildir or applemail path, username and password_env or password_cmd of this [[mail.accounts]] entry (docs/configuration.md, \"Accounts\"), and that the server or folder is reachable"
			}
			out = append(out, r)
		}
		return out
	}
}

func status(st *Store) func(context.Context) mcpserver.ServiceStatus {
	return func(context.Context) mcpserver.ServiceStatus {
		s := mcpserver.ServiceStatus{State: "ready"}
		for _, b := range st.Backends {
			detail := ""
			switch v := b.(type) {
			case *IMAP:
				detail = v.ep.URL()
			case *Maildir:
				detail = v.root
			case *AppleMail:
				detail = v.Location()
			}
			// Not contacted here; Checks reach the backend.
			s.Backends = append(s.Backends, mcpserver.BackendStatus{Name: b.Account(), Kind: b.Kind(), State: "unknown", Detail: detail})
		}
		return s
	}
}

//go:embed all:testdata/maildir
var demoFS embed.FS

// DemoDir is the demo data set's Maildir folder, written next to the demo
// chat.db by `serve --demo`.
const DemoDir = "Maildir"

// WriteDemo writes the demo Maildir into dir (replacing an earlier one)
// and returns its path: realistic messages (alternatives, attachments,
// inline images, Latin-1, Windows-1252 and ISO-2022-JP text, a one-time
// code, a prompt injection, a malformed message) so the mail tools show
// something with no account.
func WriteDemo(dir string) (string, error) {
	path := filepath.Join(dir, DemoDir)
	if err := os.RemoveAll(path); err != nil {
		return "", fmt.Errorf("demo maildir: %w", err)
	}
	sub, err := fs.Sub(demoFS, "testdata/maildir")
	if err != nil {
		return "", fmt.Errorf("demo maildir: %w", err)
	}
	if err := CopyMaildir(sub, path); err != nil {
		return "", fmt.Errorf("demo maildir: %w", err)
	}
	return path, nil
}
