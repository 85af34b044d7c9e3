package account

import (
	"context"
	"net/http"
)

// BasicAuth is an HTTP client for a DAV account (CalDAV, CardDAV): each
// request gets Basic authentication when Username is set, with the secret
// resolved by Password at that request (so a password_cmd runs only when a
// request needs it), then goes through Client.
type BasicAuth struct {
	Username string
	Password func(ctx context.Context) (Secret, error)
	Client   *http.Client
}

// Do sends req, authenticated when a username is configured.
func (b BasicAuth) Do(req *http.Request) (*http.Response, error) {
	if b.Username != "" && b.Password != nil {
		pw, err := b.Password(req.Context())
		if err != nil {
			return nil, err
		}
		req.SetBasicAuth(b.Username, pw.Reveal())
	}
	return b.Client.Do(req)
}
