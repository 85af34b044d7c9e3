package index

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// cancellingSource cancels the sync's context between a message and the
// conversation list, the way a server shutting down interrupts a sync.
type cancellingSource struct{ cancel context.CancelFunc }

func (s *cancellingSource) Key() string  { return "imessage:/fake/cancelling.db" }
func (s *cancellingSource) Kind() string { return model.SourceIMessage }
func (s *cancellingSource) Sync(ctx context.Context, req SyncRequest, w Writer) error {
	if err := w.Message(model.Message{ID: "c1", ConversationIDs: []string{"iMessage;-;zoe@example.com"},
		Kind: model.MsgText, Time: testNow, Text: "cancelled mid-sync"}); err != nil {
		return err
	}
	s.cancel()
	return w.Conversations([]model.Conversation{{ID: "iMessage;-;zoe@example.com", Identifier: "zoe@example.com",
		Kind: model.KindDirect, Service: "iMessage", Participants: []string{"zoe@example.com"}}})
}

// TestSyncCancelledWhileDrainingReturnsTheError: a sync whose context is
// cancelled while the writer drains its queue (a server shutting down
// during a background sync) returns the cancellation; it does not close the
// flusher's queue a second time (a panic that ended `tidings serve`).
func TestSyncCancelledWhileDrainingReturnsTheError(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{})
	// The writer's hand-off races the cancellation; repeat so both orders
	// occur.
	for i := 0; i < 40; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := ix.Sync(ctx, SyncOptions{}, &cancellingSource{cancel: cancel})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("run %d: %v, want nil or the cancellation", i, err)
			}
		case <-time.After(time.Minute): // a hang guard, not a timing threshold
			t.Fatalf("run %d: the sync never returned", i)
		}
		cancel()
	}
}
