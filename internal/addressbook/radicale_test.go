package addressbook

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
func startRadicale(t *testing.T) *radicale {
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

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *radicale) do(t *testing.T, user, method, path, ctype, body string, want ...int) {
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

// mkaddressbook creates /user/slug/ as a CardDAV address book (an
// extended MKCOL with the addressbook resource type, RFC 5689).
func (r *radicale) mkaddressbook(t *testing.T, user, slug, name string) {
	t.Helper()
	body := `<?xml version="1.0" encoding="utf-8"?>
<D:mkcol xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav"><D:set><D:prop>
<D:resourcetype><D:collection/><C:addressbook/></D:resourcetype>
<D:displayname>` + name + `</D:displayname>
</D:prop></D:set></D:mkcol>`
	r.do(t, user, "MKCOL", "/"+user+"/"+slug+"/", "application/xml", body, http.StatusCreated)
}

func (r *radicale) put(t *testing.T, user, path, vcf string) {
	t.Helper()
	r.do(t, user, http.MethodPut, path, "text/vcard; charset=utf-8", vcf, http.StatusCreated, http.StatusNoContent)
}

// backend returns a CardDAV backend for user, discovering from the root.
func (r *radicale) backend(t *testing.T, name, user string) *CardDAV {
	t.Helper()
	pw := r.users[user]
	d, err := NewCardDAV(DAVConfig{Account: name, URL: r.URL + "/", Username: user,
		Password: func(context.Context) (account.Secret, error) { return account.NewSecret(pw), nil }})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
