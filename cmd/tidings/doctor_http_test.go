package main

import (
	"context"
	"testing"

	"github.com/tidings-mcp/tidings/internal/config"
)

// TestDoctorHTTPTokenRule: doctor applies the same token rule as serve
// (mcpserver.CheckToken): a TIDINGS_HTTP_TOKEN under 16 characters fails,
// on any bind.
func TestDoctorHTTPTokenRule(t *testing.T) {
	tests := []struct {
		addr, token, want string
	}{
		{"0.0.0.0:7740", "x", "fail"},
		{"127.0.0.1:7740", "123456789012345", "fail"},
		{"0.0.0.0:7740", "", "fail"},
		{"0.0.0.0:7740", "0123456789abcdef", "ok"},
		{"127.0.0.1:7740", "", "ok"},
	}
	for _, tc := range tests {
		got := checkHTTP(context.Background(), &config.Config{HTTP: tc.addr, HTTPToken: tc.token})
		if len(got) != 1 || got[0].Status != tc.want {
			t.Errorf("%s token %q: %+v, want %s", tc.addr, tc.token, got, tc.want)
		}
	}
}
