package service_test

import (
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// TestCountsAgreeWithTheirNoun: a sentence that counts one thing says it in
// the singular ("they wrote 1 message", not "1 messages").
func TestCountsAgreeWithTheirNoun(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{})
	st, err := env.Service.ResponseStats(t.Context(), service.StatsParams{Chat: servicetest.NoCardPhone, Hours: 24})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Note, "(they wrote 1 message)") {
		t.Errorf("note = %q, want \"(they wrote 1 message)\"", st.Note)
	}
}
