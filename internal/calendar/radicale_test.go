package calendar

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/account"
)

// radicale is a Radicale started for one test on a free 127.0.0.1 port,
// with htpasswd users and filesystem storage in a temp dir
// (docs/testing.md, "Real servers").
type radicale struct {
	URL   string
	users map[string]string
}

// startRadicale starts Debian's radicale; it skips when radicale is
// absent, unless CI is set (then it fails: ./scripts/system-packages
// installs it).
func startRadicale(t testing.TB) *radicale {
	t.Helper()
	bin, err := exec.LookPath("radicale")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("radicale is not installed (./scripts/system-packages installs it)")
		}
		t.Skip("radicale is not installed (./scripts/system-packages installs it)")
	}
	dir := t.TempDir()
	users := map[string]string{"alice": "alice-secret", "bob": "bob-secret"}
	var ht strings.Builder
	for u, p := range users {
		ht.WriteString(u + ":" + p + "\n")
	}
	must(t, os.WriteFile(filepath.Join(dir, "users"), []byte(ht.String()), 0o600))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	conf := fmt.Sprintf(`[server]
hosts = %s
[auth]
type = htpasswd
htpasswd_filename = %s
htpasswd_encryption = plain
delay = 0
[rights]
type = owner_only
[storage]
filesystem_folder = %s
[web]
type = none
[logging]
level = warning
`, addr, filepath.Join(dir, "users"), filepath.Join(dir, "collections"))
	cfg := filepath.Join(dir, "config")
	must(t, os.WriteFile(cfg, []byte(conf), 0o600))
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Env = append(os.Environ(), "RADICALE_CONFIG="+cfg)
	logf, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	r := &radicale{URL: "http://" + addr, users: users}
	// Wait for the port: bounded by attempts, not by a timing threshold
	// on the result.
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i == 300 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("radicale did not start: %v\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *radicale) do(t testing.TB, user, method, path, ctype, body string, want ...int) {
	t.Helper()
	req, err := http.NewRequest(method, r.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, r.users[user])
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, w := range want {
		if resp.StatusCode == w {
			return
		}
	}
	t.Fatalf("%s %s: HTTP %d %s", method, path, resp.StatusCode, b)
}

// mkcalendar creates /user/slug/ holding comp (VEVENT or VTODO).
func (r *radicale) mkcalendar(t testing.TB, user, slug, name, comp string) {
	t.Helper()
	body := `<?xml version="1.0" encoding="utf-8"?>
<C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>
<D:displayname>` + name + `</D:displayname>
<C:supported-calendar-component-set><C:comp name="` + comp + `"/></C:supported-calendar-component-set>
</D:prop></D:set></C:mkcalendar>`
	r.do(t, user, "MKCALENDAR", "/"+user+"/"+slug+"/", "application/xml", body, http.StatusCreated)
}

func (r *radicale) put(t testing.TB, user, path, ics string) {
	t.Helper()
	r.do(t, user, http.MethodPut, path, "text/calendar; charset=utf-8", ics, http.StatusCreated, http.StatusNoContent)
}

// backend returns a CalDAV backend for user, discovering from the root.
func (r *radicale) backend(t testing.TB, name, user string) *CalDAV {
	t.Helper()
	pw := r.users[user]
	d, err := NewCalDAV(DAVConfig{Account: name, URL: r.URL + "/", Username: user,
		Password: func(context.Context) (account.Secret, error) { return account.NewSecret(pw), nil }})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
