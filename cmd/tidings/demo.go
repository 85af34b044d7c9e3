package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
)

func init() {
	register(command{
		name:    "demo",
		summary: "write a synthetic, deterministic chat.db + contacts.vcf to try Tidings without personal data",
		run:     runDemo,
	})
}

func runDemo(ctx context.Context, m *Main, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	dir := fs.String("dir", "", "output folder (default: $TIDINGS_HOME/demo)")
	messages := fs.Int("messages", demo.DefaultMessages, fmt.Sprintf("number of messages (%d to %d)", demo.MinMessages(), demo.MaxMessages))
	seed := fs.String("seed", "1", "seed for the generated filler (storylines never change)")
	loader := config.Bind(fs, "home")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("demo takes no arguments, got %q", fs.Arg(0))}
	}
	s, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		return usageError{fmt.Sprintf("--seed %q: want a non-negative integer", *seed)}
	}
	if *messages < demo.MinMessages() || *messages > demo.MaxMessages {
		return usageError{fmt.Sprintf("--messages %d: want %d to %d", *messages, demo.MinMessages(), demo.MaxMessages)}
	}
	cfg, err := loader.Load(m.Getenv)
	if err != nil {
		return err
	}
	out := *dir
	if out == "" {
		out = cfg.Path("demo")
	}
	start := time.Now()
	res, err := demo.Generate(ctx, demo.Options{Dir: out, Messages: *messages, Seed: s, Now: cfg.Now()})
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "wrote %d messages in %d conversations (%d attachments) in %s\n  %s\n  %s\nnow = %s; try: tidings index --imessage %s --contacts %s\n",
		res.Messages, res.Conversations, res.Attachments, time.Since(start).Round(time.Millisecond),
		res.ChatDB, res.Contacts, res.Now.Format(time.RFC3339), res.ChatDB, res.Contacts)
	return nil
}
