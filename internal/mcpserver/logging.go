package mcpserver

import (
	"context"
	"log/slog"
)

// sdkLogger returns the logger handed to go-sdk. go-sdk logs every session
// connect and disconnect at Info — on stateless HTTP that is several lines
// per request — so unless the user asked for debug logs, only its warnings
// and errors pass.
func sdkLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	if l.Handler().Enabled(context.Background(), slog.LevelDebug) {
		return l
	}
	return slog.New(minLevel{Handler: l.Handler(), min: slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(a), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
