package androidgen

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/tidings-mcp/tidings/internal/android"
	"github.com/tidings-mcp/tidings/internal/model"
)

func export(t *testing.T, cfg Config) ([]byte, Summary) {
	t.Helper()
	var b bytes.Buffer
	sum, err := Write(&b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Bytes != int64(b.Len()) {
		t.Fatalf("summary says %d bytes, wrote %d", sum.Bytes, b.Len())
	}
	return b.Bytes(), sum
}

func importIDs(t *testing.T, doc []byte) (android.Result, []string, map[string]bool) {
	t.Helper()
	var ids []string
	convs := map[string]bool{}
	res, err := android.Import(context.Background(), bytes.NewReader(doc), android.ImportOptions{Region: "US"}, android.Sink{
		Conversations: func(cs []model.Conversation) error {
			for _, c := range cs {
				convs[c.ID] = true
			}
			return nil
		},
		Message: func(m model.Message) error { ids = append(ids, m.ID); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, ids, convs
}

// TestGeneratedExportIsDeterministicAndReadsBackWhole: the output is
// deterministic, reads back without a skipped record, matches its summary,
// gives every message a distinct id, and differs between media sizes only in
// payloads.
func TestGeneratedExportIsDeterministicAndReadsBackWhole(t *testing.T) {
	cfg := Config{Messages: 3000, Seed: 42, Contacts: 60, Groups: 8}
	a, sum := export(t, cfg)
	b, _ := export(t, cfg)
	if !bytes.Equal(a, b) {
		t.Fatal("same seed, different output")
	}
	res, ids, convs := importIDs(t, a)
	st := res.Stats
	if st.Skipped != 0 || st.Incomplete || st.SMS != sum.SMS || st.MMS != sum.MMS || st.SMS+st.MMS != cfg.Messages {
		t.Fatalf("stats %+v, summary %+v", st, sum)
	}
	if len(convs) != sum.Threads {
		t.Errorf("%d conversations, summary says %d threads", len(convs), sum.Threads)
	}
	if !slices.Equal(res.Owner, []string{"+14155550100"}) {
		t.Errorf("owner %v", res.Owner)
	}
	sorted := slices.Sorted(slices.Values(ids))
	if len(slices.Compact(sorted)) != cfg.Messages {
		t.Errorf("message ids collide")
	}
	if sum.GroupMMS == 0 || sum.MediaParts == 0 || sum.MediaBytes == 0 {
		t.Errorf("summary %+v lacks groups or media", sum)
	}

	big := cfg
	big.MediaBytes = 20000
	c, sumBig := export(t, big)
	if len(c) <= len(a) || sumBig.MediaParts != sum.MediaParts || sumBig.SMS != sum.SMS {
		t.Fatalf("big media: %d vs %d bytes, summary %+v", len(c), len(a), sumBig)
	}
	_, idsBig, _ := importIDs(t, c)
	if !slices.Equal(ids, idsBig) {
		t.Errorf("media size changed the messages (ids differ)")
	}
}

// TestGeneratedExportHasUnreadAndFailedSends: Config.Unread leaves the
// last incoming SMS unread and Config.FailedEvery marks outgoing SMS as
// failed (type 5), and the importer reads them so (is_read, send error:
// docs/tools.md); without them the output is unchanged.
func TestGeneratedExportHasUnreadAndFailedSends(t *testing.T) {
	base := Config{Messages: 2000, Seed: 42, Contacts: 60, Groups: 8}
	plain, _ := export(t, base)
	cfg := base
	cfg.Unread, cfg.FailedEvery = 4, 50
	doc, sum := export(t, cfg)
	if sum.Unread != 4 || sum.Failed == 0 {
		t.Fatalf("summary %+v", sum)
	}
	var unread, failed int
	_, err := android.Import(context.Background(), bytes.NewReader(doc), android.ImportOptions{Region: "US"}, android.Sink{
		Conversations: func([]model.Conversation) error { return nil },
		Message: func(m model.Message) error {
			if !m.FromMe && !m.IsRead && m.Kind != model.MsgGroupEvent {
				unread++
			}
			if m.FromMe && m.Error != 0 {
				failed++
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if unread != sum.Unread || failed != sum.Failed {
		t.Errorf("imported %d unread, %d failed; summary %+v", unread, failed, sum)
	}
	if _, plainSum := export(t, base); plainSum.Unread != 0 || plainSum.Failed != 0 {
		t.Errorf("defaults changed: %+v", plainSum)
	}
	again, _ := export(t, base)
	if !bytes.Equal(plain, again) {
		t.Error("defaults not deterministic")
	}
}
