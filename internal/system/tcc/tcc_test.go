package tcc

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// Needs derives the permissions from the configuration alone: chat.db
// needs Full Disk Access, the AddressBook folder the Contacts grant (a
// .vcf elsewhere none), sending Automation of Messages, and the device
// services their own grants; network services need none.
func TestNeedsFollowTheConfiguration(t *testing.T) {
	home := "/Users/sam"
	book := filepath.Join(home, "Library", "Application Support", "AddressBook")
	chat := filepath.Join(home, "Library", "Messages", "chat.db")
	for _, tc := range []struct {
		name string
		f    Facts
		want []Grant
	}{
		{"nothing configured", Facts{Home: home}, nil},
		{"chat.db and the address book", Facts{Home: home, IMessage: chat, Contacts: []string{book}}, []Grant{FullDiskAccess, Contacts}},
		{"a vcf file needs no grant", Facts{Home: home, Contacts: []string{"/tmp/people.vcf"}}, nil},
		{"sending needs automation", Facts{Home: home, IMessage: chat, SendEnabled: true}, []Grant{FullDiskAccess, Automation}},
		// location's only macOS source is [location] ip_url (no CoreLocation
		// without cgo): a network lookup, which TCC does not guard.
		{"device services", Facts{Home: home, Services: []string{"web", "weather", "location", "capture"}},
			[]Grant{ScreenRecording, Microphone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Grant
			for _, n := range Needs(tc.f) {
				got = append(got, n.Grant)
				if n.For == "" {
					t.Errorf("%s has no reason", n.Grant)
				}
				if n.Grant == Automation && n.Target != MessagesApp {
					t.Errorf("automation target %q", n.Target)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("needs %v, want %v", got, tc.want)
			}
		})
	}
}

type fakeProber struct {
	state State
	block chan struct{} // non-nil: never answer before ctx ends
}

func (p fakeProber) Probe(ctx context.Context, n Need) Result {
	if p.block != nil {
		select {
		case <-p.block:
		case <-ctx.Done():
		}
		// Answer late, after Check gave up: must not be reported.
		return Result{Need: n, State: Granted}
	}
	return Result{Need: n, State: p.state, How: "fake"}
}

// Check is not_applicable off macOS (with one sentence, never probing),
// reports the prober's answer on macOS, and a probe that overruns the
// bounded wait as check_blocked instead of waiting for it.
func TestCheckIsBoundedAndPlatformAware(t *testing.T) {
	needs := []Need{{Grant: Automation, Target: MessagesApp, For: "send"}}
	for _, tc := range []struct {
		name string
		goos string
		p    Prober
		wait time.Duration
		want State
	}{
		// An answering probe gets a wait no loaded machine overruns (a 1 ms
		// wait lost the race under load); the blocked one never answers, so
		// a short wait proves the bound.
		{"linux", "linux", fakeProber{state: Granted}, time.Minute, NotApplicable},
		{"linux without prober", "linux", nil, time.Minute, NotApplicable},
		{"macOS answered", "darwin", fakeProber{state: Denied}, time.Minute, Denied},
		{"macOS blocked probe", "darwin", fakeProber{block: make(chan struct{})}, time.Millisecond, CheckBlocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(context.Background(), tc.goos, needs, tc.p, tc.wait)
			if len(got) != 1 || got[0].State != tc.want || got[0].Grant != Automation {
				t.Fatalf("got %+v, want state %s", got, tc.want)
			}
			if got[0].State != Denied && got[0].Detail == "" {
				t.Errorf("state %s without a sentence", got[0].State)
			}
		})
	}
}

// ReadProbe is the honest, labelled inference for Full Disk Access: a
// readable file or folder is granted, a permission error denied, a missing
// path or another failure unknown; How always says it is a read probe.
func TestReadProbeClassifies(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "chat.db")
	os.WriteFile(file, []byte("SQLite format 3\x00"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	denied := func(p string) (*os.File, error) {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission}
	}
	odd := func(p string) (*os.File, error) { return nil, fmt.Errorf("open %s: %w", p, os.ErrDeadlineExceeded) }
	for _, tc := range []struct {
		name string
		path string
		open func(string) (*os.File, error)
		want State
	}{
		{"readable file", file, os.Open, Granted},
		{"empty file", empty, os.Open, Granted},
		{"readable folder", dir, os.Open, Granted},
		{"permission refused", file, denied, Denied},
		{"missing", filepath.Join(dir, "nope"), os.Open, Unknown},
		{"other failure", file, odd, Unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ReadProbe(Need{Grant: FullDiskAccess, Target: tc.path, For: "messages"}, tc.open)
			if r.State != tc.want || r.How == "" || r.Detail == "" {
				t.Errorf("got %+v, want %s with how and detail", r, tc.want)
			}
		})
	}
}
