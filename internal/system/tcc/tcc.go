// Package tcc decides which macOS privacy permissions (TCC) the configured
// services need and reports their state ahead of time, for the system
// service's permissions_check (docs/security.md, "permissions_check").
//
// It never learns a state by making the real call and parsing its error
// text: each state comes from a probe run before any tool needs the
// permission, bounded by a wait (DefaultWait), and a probe that does not
// answer in time is reported as check_blocked rather than waited for (a
// consent prompt left on screen blocks the probe, not the server).
//
// Full Disk Access has no status API: its state is what a read probe of
// the protected file it guards shows, and the result says so. The other
// permissions (Automation per target app, Location, Screen Recording,
// Microphone) are answered by the platform's Prober; on Linux every
// permission is not_applicable. The decision logic here is plain Go, so it
// is tested on every platform; only the probes are behind build tags.
package tcc

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Grant is a kind of macOS privacy permission.
type Grant string

// The grants permissions_check reports.
const (
	FullDiskAccess  Grant = "full_disk_access"
	Contacts        Grant = "contacts"
	Automation      Grant = "automation"
	Location        Grant = "location"
	ScreenRecording Grant = "screen_recording"
	Microphone      Grant = "microphone"
)

// State is what is known about one permission.
type State string

// States.
const (
	Granted       State = "granted"
	Denied        State = "denied"
	NotDetermined State = "not_determined"
	Unknown       State = "unknown"
	CheckBlocked  State = "check_blocked"
	NotApplicable State = "not_applicable"
)

// DefaultWait bounds each probe. A TCC status check answers in
// milliseconds, but blocks while a consent prompt is on screen.
const DefaultWait = 2 * time.Second

// Need is one permission a configured service needs.
type Need struct {
	Grant Grant `json:"grant"`
	// Target is the app an Automation grant is for ("Messages
	// (com.apple.MobileSMS)"), or the protected path a read probe opens.
	Target string `json:"target,omitempty"`
	// For says which service needs it and why.
	For string `json:"needed_for"`
}

// Result is one permission's reported state.
type Result struct {
	Need
	State State `json:"state"`
	// How says how the state was learned ("read probe of …"), so a
	// reader can tell a status from an inference.
	How    string `json:"how,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Facts are the parts of the configuration that decide the needs.
type Facts struct {
	// Home is the user's home folder (for the macOS default paths).
	Home string
	// IMessage is the configured chat.db; Contacts the contacts sources.
	IMessage string
	Contacts []string
	// SendEnabled: messages are sent through Messages.app (Automation).
	SendEnabled bool
	// Services are the names of the services of this process that can
	// work here (mcpserver.Service.Name with Unavailable empty).
	Services []string
}

// MessagesApp is the Automation target of sending: Messages.app's bundle
// id, from its iOS origins.
const MessagesApp = "Messages (com.apple.MobileSMS)"

// serviceNeeds are the grants of services whose backends are macOS
// frameworks or programs guarded by TCC; services not listed need none
// (web, weather and maps reach the network, which TCC does not guard; so
// does location on macOS, where the position comes only from [location]
// ip_url: CoreLocation is out of reach without cgo, docs/tools.md).
var serviceNeeds = map[string][]Need{
	"capture": {
		{Grant: ScreenRecording, For: "capture: screenshots"},
		{Grant: Microphone, For: "capture: audio recordings"},
	},
}

// Needs lists the permissions the configuration needs, in a fixed order.
// The protected files of the data sources are named as Target, so the
// probe of Full Disk Access reads the very file Tidings reads.
func Needs(f Facts) []Need {
	var out []Need
	if f.IMessage != "" {
		out = append(out, Need{Grant: FullDiskAccess, Target: f.IMessage, For: "messages: reading chat.db"})
	}
	book := ""
	if f.Home != "" {
		book = filepath.Join(f.Home, "Library", "Application Support", "AddressBook")
	}
	for _, c := range f.Contacts {
		if book != "" && (c == book || strings.HasPrefix(c, book+string(filepath.Separator))) {
			out = append(out, Need{Grant: Contacts, Target: c, For: "contacts: reading the AddressBook folder"})
		}
	}
	if f.SendEnabled {
		out = append(out, Need{Grant: Automation, Target: MessagesApp, For: "send: sending through Messages.app"})
	}
	for _, s := range f.Services {
		out = append(out, serviceNeeds[s]...)
	}
	return out
}

// Prober answers one need on the platform where TCC exists.
type Prober interface {
	Probe(ctx context.Context, n Need) Result
}

// notApplicable is the one sentence every permission gets off macOS.
const notApplicable = "macOS privacy permissions (TCC) do not exist on this system; access is governed by ordinary file permissions, shown under sources"

// Check reports each need: not_applicable off macOS (goos != "darwin");
// otherwise p's answer, or check_blocked when p does not answer within
// wait. A probe that overruns is abandoned, not waited for.
func Check(ctx context.Context, goos string, needs []Need, p Prober, wait time.Duration) []Result {
	out := make([]Result, 0, len(needs))
	for _, n := range needs {
		if goos != "darwin" || p == nil {
			out = append(out, Result{Need: n, State: NotApplicable, Detail: notApplicable})
			continue
		}
		out = append(out, bounded(ctx, n, p, wait))
	}
	return out
}

func bounded(ctx context.Context, n Need, p Prober, wait time.Duration) Result {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ch := make(chan Result, 1) // buffered: an abandoned probe can still finish
	go func() { ch <- p.Probe(ctx, n) }()
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		return Result{Need: n, State: CheckBlocked, How: "status probe",
			Detail: "the probe did not answer within " + wait.String() + ": a consent prompt may be waiting on screen; answer it, then check again"}
	}
}

// ReadProbe is Full Disk Access's (and the Contacts folder's) only
// honest test: open the protected path and read from it (a folder: list
// one entry). open is os.Open in production. A permission error means the
// grant is missing; success means it is present for the program running
// Tidings; a missing path says nothing either way.
func ReadProbe(n Need, open func(string) (*os.File, error)) Result {
	r := Result{Need: n, How: "read probe of " + n.Target + " (macOS has no status API for this permission)"}
	switch err := readWith(n.Target, open); {
	case err == nil:
		r.State = Granted
		r.Detail = "the protected path opened and read"
	case errors.Is(err, fs.ErrPermission):
		r.State = Denied
		r.Detail = "macOS refused to read it: grant the permission to the program that starts Tidings (the MCP client or terminal) in System Settings > Privacy & Security, then restart it"
	case errors.Is(err, fs.ErrNotExist):
		r.State = Unknown
		r.Detail = "the path does not exist, so reading it tells nothing about the permission"
	default:
		r.State = Unknown
		r.Detail = "the read failed for another reason, so it tells nothing about the permission"
	}
	return r
}

// Read opens path and reads one byte of it (a folder: one entry); the
// error is the open's or the read's, nil for a readable path. It is how
// the system service tells a readable data source from one it cannot read.
func Read(path string) error { return readWith(path, os.Open) }

func readWith(path string, open func(string) (*os.File, error)) error {
	f, err := open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return readOne(f)
}

// readOne reads one byte of a file or one entry of a folder; an empty
// one reads fine.
func readOne(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		_, err = f.ReadDir(1)
	} else {
		_, err = f.Read(make([]byte, 1))
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
