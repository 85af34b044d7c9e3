package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

func TestDemoCommand(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"TIDINGS_NOW": testclock.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC).Format(time.RFC3339)}
	m, out, _ := testMain(t, env)
	dir := filepath.Join(t.TempDir(), "demo")
	if err := m.Run(ctx, []string{"demo", "--dir", dir, "--messages", "1500", "--seed", "3"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wrote 1500 messages") || !strings.Contains(out.String(), "now = "+testclock.Text(time.RFC3339, "2026-11-30T17:00:00Z")) {
		t.Errorf("output: %s", out)
	}
	first, err := os.ReadFile(filepath.Join(dir, "chat.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "contacts.vcf")); err != nil {
		t.Fatal(err)
	}
	r, err := imessage.Open(ctx, filepath.Join(dir, "chat.db"), imessage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	r.Messages(ctx, 0, func(model.Message) error { n++; return nil })
	r.Close()
	if n != 1500 {
		t.Errorf("chat.db holds %d messages, want 1500", n)
	}

	// TIDINGS_NOW pins the data: the same command gives the same bytes.
	m2, _, _ := testMain(t, env)
	if err := m2.Run(ctx, []string{"demo", "--dir", dir, "--messages", "1500", "--seed", "3"}); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "chat.db"))
	if !bytes.Equal(first, again) {
		t.Error("same flags and TIDINGS_NOW gave a different chat.db")
	}

	// Without --dir the data goes to $TIDINGS_HOME/demo.
	m3, _, _ := testMain(t, env)
	if err := m3.Run(ctx, []string{"demo", "--messages", "500"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m3.Getenv("TIDINGS_HOME"), "demo", "chat.db")); err != nil {
		t.Errorf("default folder: %v", err)
	}
}

func TestDemoCommandErrors(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{"demo", "--messages", "5"},
		{"demo", "--messages", "-1"},
		{"demo", "--messages", "abc"},
		{"demo", "--seed", "-3"},
		{"demo", "--seed", "x"},
		{"demo", "stray"},
		{"demo", "--no-such-flag"},
	} {
		m, _, _ := testMain(t, nil)
		var ue usageError
		if err := m.Run(ctx, args); !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
	m, _, _ := testMain(t, map[string]string{"TIDINGS_NOW": "yesterday"})
	if err := m.Run(ctx, []string{"demo", "--dir", t.TempDir(), "--messages", "500"}); err == nil || !strings.Contains(err.Error(), "TIDINGS_NOW") {
		t.Errorf("bad TIDINGS_NOW: %v", err)
	}
	if demo.MinMessages() > 500 {
		t.Errorf("MinMessages = %d; the tests assume 500 is enough", demo.MinMessages())
	}
}
