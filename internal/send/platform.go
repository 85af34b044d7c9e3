package send

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
)

// PlatformOptions configure the confirmer and sender Platform returns.
type PlatformOptions struct {
	// ChatDB is the Messages database sends are verified against.
	ChatDB string
	// UserHome is the user's home folder; images are staged under
	// UserHome/Library/Messages/.send-staging.
	UserHome string
	// VerifyTimeout bounds the wait for chat.db; 0 means
	// DefaultVerifyTimeout.
	VerifyTimeout time.Duration
	// Runner runs processes; nil means ExecRunner{}.
	Runner Runner
	// Getenv and LookPath are for the desktop confirmer's checks; nil
	// means the real ones.
	Getenv   func(string) string
	LookPath func(string) (string, error)
}

func (p PlatformOptions) runner() Runner {
	if p.Runner != nil {
		return p.Runner
	}
	return ExecRunner{}
}

// StagingDir returns the folder images are staged in for Messages.
func StagingDir(userHome string) string {
	return filepath.Join(userHome, "Library", "Messages", ".send-staging")
}

// macPlatform is the macOS pair: an osascript dialog and Messages.
func macPlatform(p PlatformOptions) (Confirmer, Sender) {
	r := p.runner()
	return MacDialog{Runner: r}, &MessagesSender{
		Runner:     r,
		StagingDir: StagingDir(p.UserHome),
		Verifier:   Verifier{ChatDB: p.ChatDB, Timeout: p.VerifyTimeout},
	}
}

// NoSenderSentence is the refusal of platforms without Messages.
const NoSenderSentence = "sending is unavailable on this system: iMessage and SMS go out only through Messages on a Mac, so Tidings can preview messages here but never send them"

// otherPlatform is every other system: a desktop dialog and no sender.
func otherPlatform(p PlatformOptions) (Confirmer, Sender) {
	return DesktopDialog{Runner: p.runner(), Getenv: p.Getenv, LookPath: p.LookPath}, Unavailable{Reason: NoSenderSentence}
}

// FromConfig builds the gate a process uses: state under cfg.Home, the
// clock cfg.Now (TIDINGS_NOW pins it), the phone region, the rate limit and
// verification wait from config, this platform's confirmer and sender, and
// the caller's policy, name resolver and image folders (a profile's
// file_dirs; nil refuses images). The MCP server and the bridge helper
// both build their gate here, so they share one set of rules.
func FromConfig(cfg *config.Config, pol PolicySource, names NameResolver, fileDirs []string, logger *slog.Logger) (*Gate, error) {
	if cfg.SendRateLimit < 1 {
		return nil, fmt.Errorf("send_rate_limit = %d: it must be at least 1 (sending is switched off with ENABLE_MCP_SEND_MESSAGE, not a zero limit)", cfg.SendRateLimit)
	}
	if cfg.SendVerifySeconds < 1 || cfg.SendVerifySeconds > 120 {
		return nil, fmt.Errorf("send_verify_seconds = %d: want 1 to 120", cfg.SendVerifySeconds)
	}
	home, _ := os.UserHomeDir()
	confirmer, sender := Platform(PlatformOptions{
		ChatDB:        cfg.IMessage,
		UserHome:      home,
		VerifyTimeout: time.Duration(cfg.SendVerifySeconds) * time.Second,
	})
	return New(Options{
		Home: cfg.Home, Now: cfg.Now, Location: cfg.Location(), Region: cfg.Region,
		Policy: pol, Names: names, Confirmer: confirmer, Sender: sender,
		FileDirs: fileDirs, RateLimit: cfg.SendRateLimit, Logger: logger,
	})
}
