package account

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A DAV request carries Basic authentication only when a username is set,
// resolves the secret per request, and is never sent when the secret
// cannot be read.
func TestBasicAuthAuthenticatesOnlyWithAUsername(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	secret := func(context.Context) (Secret, error) { return NewSecret("pw"), nil }
	broken := func(context.Context) (Secret, error) { return Secret{}, errors.New("password_cmd failed") }
	for _, tc := range []struct {
		name    string
		b       BasicAuth
		want    string
		wantErr bool
	}{
		{"username and password", BasicAuth{Username: "me", Password: secret}, "Basic bWU6cHc=", false},
		{"no username", BasicAuth{Password: secret}, "", false},
		{"secret unreadable", BasicAuth{Username: "me", Password: broken}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			tc.b.Client = srv.Client()
			req, _ := http.NewRequest("GET", srv.URL, nil)
			resp, err := tc.b.Do(req)
			if tc.wantErr {
				if err == nil || len(got) != 0 {
					t.Fatalf("err %v, requests %q: want an error and no request", err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("Authorization %q, want %q", got, tc.want)
			}
		})
	}
}
