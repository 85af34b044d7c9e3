// Package imessageindex adapts chat.db and sms.db readers
// (internal/imessage) to the index's Source contract (internal/index). It
// is a separate package so the index imports no source
// (docs/architecture.md), as internal/android/androidindex does for
// Android exports.
package imessageindex

import (
	"context"
	"path/filepath"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
)

// imessageRows adapts an imessage.Reader to index.RowReader.
type imessageRows struct{ *imessage.Reader }

func (r imessageRows) Deleted(ctx context.Context, after int64, fn func(int64, string) error) error {
	return r.Reader.Deleted(ctx, after, func(d imessage.Deletion) error { return fn(d.RowID, d.GUID) })
}

// Source returns the Source for a chat.db or sms.db reader. kind
// names the key's prefix ("imessage" for a live chat.db, "ios-backup" for
// a backup's sms.db) so two copies of one history stay distinct; now is the
// clock.
func Source(r *imessage.Reader, kind string, now func() time.Time) *index.RowSource {
	return &index.RowSource{SourceKey: kind + ":" + filepath.Clean(r.Path()), SourceKind: model.SourceIMessage, Reader: imessageRows{r}, Now: now}
}
