package maps

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"time"
)

// OpenWait bounds how long maps_open waits for the opener to exit. An
// opener that is still running then is left to finish (some xdg-open
// back-ends wait for the browser); the call reports that it was started.
const OpenWait = 10 * time.Second

// Opener runs the system's URL opener: `open` on macOS, `xdg-open`
// elsewhere, found on PATH when the service is built, run with argv (never
// a shell) on an https link the service built.
type Opener struct {
	Path string // absolute path of the opener
}

// OpenerName is the opener's program name for goos.
func OpenerName(goos string) string {
	if goos == "darwin" {
		return "open"
	}
	return "xdg-open"
}

// FindOpener looks the opener up on PATH; the error is the one sentence
// get_status gives as maps_open's reason.
func FindOpener(goos string) (*Opener, error) {
	name := OpenerName(goos)
	p, err := exec.LookPath(name)
	if err != nil {
		if goos == "darwin" {
			return nil, fmt.Errorf("no %s command on PATH", name)
		}
		return nil, fmt.Errorf("no %s on PATH: install xdg-utils", name)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return &Opener{Path: p}, nil
}

// Open runs the opener on link, which must be an https URL. An opener
// still running after OpenWait (or when ctx ends) counts as started.
func (o *Opener) Open(ctx context.Context, link string) error {
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return errors.New("refusing to open a link that is not https") // unreachable from the tools: they build https links
	}
	cmd := exec.Command(o.Path, link) // argv, no shell; output discarded
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s could not be started", filepath.Base(o.Path))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(OpenWait)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return fmt.Errorf("%s could not open the map (exit status %d)", filepath.Base(o.Path), ee.ExitCode())
			}
			return fmt.Errorf("%s failed", filepath.Base(o.Path))
		}
		return nil
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return nil
	}
}
