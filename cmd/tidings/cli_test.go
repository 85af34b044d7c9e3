package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseWords(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		text      string
		help, bad bool
		json      bool
	}{
		{name: "words only", args: []string{" dinner", "on", "friday "}, text: "dinner on friday"},
		{name: "flags between words", args: []string{"dinner", "--json", "on", "friday"}, text: "dinner on friday", json: true},
		{name: "flags first", args: []string{"--json", "Sam Rivera"}, text: "Sam Rivera", json: true},
		{name: "after --", args: []string{"--", "--json"}, text: "--json"},
		{name: "none", args: nil, text: ""},
		{name: "help", args: []string{"dinner", "-h"}, help: true},
		{name: "unknown flag", args: []string{"dinner", "--nope"}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			fs := newFlagSet(&Main{Stderr: &stderr}, "search", "Usage: tidings search QUERY\n")
			jsonOut := fs.Bool("json", false, "")
			text, help, err := parseWords(fs, tc.args)
			var ue usageError
			if got := errors.As(err, &ue); got != tc.bad || (err != nil && !got) {
				t.Fatalf("err = %v, want a usage error: %v", err, tc.bad)
			}
			if help != tc.help {
				t.Errorf("help = %v, want %v", help, tc.help)
			}
			if tc.help && !strings.Contains(stderr.String(), "Usage: tidings search QUERY") {
				t.Errorf("usage not printed: %q", stderr.String())
			}
			if tc.bad || tc.help {
				return
			}
			if text != tc.text || *jsonOut != tc.json {
				t.Errorf("text %q json %v, want %q %v", text, *jsonOut, tc.text, tc.json)
			}
		})
	}
}

func TestParseNoArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		help    bool
		wantErr string
	}{
		{name: "flags", args: []string{"--json"}},
		{name: "help", args: []string{"--help"}, help: true},
		{name: "argument", args: []string{"--json", "extra"}, wantErr: `review takes no arguments (got ["extra"])`},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFlagSet(&Main{Stderr: &bytes.Buffer{}}, "review", "")
			fs.Bool("json", false, "")
			help, err := parseNoArgs(fs, tc.args)
			if help != tc.help {
				t.Errorf("help = %v, want %v", help, tc.help)
			}
			var ue usageError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr != "" && (!errors.As(err, &ue) || err.Error() != tc.wantErr):
				t.Fatalf("err = %v, want usage error %q", err, tc.wantErr)
			}
		})
	}
}

func TestPrintJSON(t *testing.T) {
	var b bytes.Buffer
	if err := printJSON(&b, map[string]any{"a": []int{1}}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": [\n    1\n  ]\n}\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
