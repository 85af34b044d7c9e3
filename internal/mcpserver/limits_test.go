package mcpserver

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/service"
)

// TestSchemasStateTheServiceLimits: the bounds a tool's schema tells the
// model ("1-200 (default 20)") are the service's limits
// (internal/service/limits.go), the one home the handlers' clamps and the
// bridge read too — so a schema cannot promise a page the service cuts.
func TestSchemasStateTheServiceLimits(t *testing.T) {
	for _, tc := range []struct {
		in    any
		field string
		want  string
	}{
		{ListConversationsInput{}, "Limit", fmt.Sprintf("1-%d (default %d)", service.MaxListLimit, service.DefaultListLimit)},
		{GetMessagesInput{}, "Limit", fmt.Sprintf("1-%d (default %d)", service.MaxMessagesLimit, service.DefaultMessagesLimit)},
		{SearchMessagesInput{}, "Limit", fmt.Sprintf("1-%d (default %d)", service.MaxSearchLimit, service.DefaultSearchLimit)},
		{SearchMessagesInput{}, "Context", fmt.Sprintf("0-%d (default 0)", service.MaxSearchContext)},
		{ReviewMessagesInput{}, "Context", fmt.Sprintf("1-%d (default %d)", service.MaxReviewContext, service.DefaultReviewContext)},
	} {
		typ := reflect.TypeOf(tc.in)
		f, ok := typ.FieldByName(tc.field)
		if !ok {
			t.Fatalf("%s has no field %s", typ.Name(), tc.field)
		}
		if desc := f.Tag.Get("jsonschema"); !strings.Contains(desc, tc.want) {
			t.Errorf("%s.%s: schema says %q, want it to state %q", typ.Name(), tc.field, desc, tc.want)
		}
	}
}
