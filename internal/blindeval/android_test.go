package blindeval

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/android"
	"github.com/tidings-mcp/tidings/internal/android/androidindex"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"
)

type androidScore struct {
	full, reimport           float64 // share of expected_names.json entries shown right
	groupFull, groupReimport float64 // the same over group-MMS senders with a name
}

// received is one message from someone else in an export: its
// expected_names.json key (sender address as written | date ms), its
// message id and whether it came in a group MMS.
type received struct {
	key, id string
	group   bool
}

// readReceived lists the received messages of an export with the ids the
// importer gives them (android.SMSID, android.MMSID) and the newest date.
func readReceived(t *testing.T, path string) ([]received, time.Time) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := android.NewReader(f, nil)
	var out []received
	var newest time.Time
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch r := rec.(type) {
		case *android.SMS:
			newest = later(newest, r.Date)
			if r.Type == android.TypeInbox {
				out = append(out, received{key: r.Address + "|" + strconv.FormatInt(r.Date.UnixMilli(), 10), id: android.SMSID(r)})
			}
		case *android.MMS:
			newest = later(newest, r.Date)
			if r.MsgBox != 1 {
				continue
			}
			for _, a := range r.Addrs {
				if a.Type == android.AddrFrom {
					out = append(out, received{key: a.Address + "|" + strconv.FormatInt(r.Date.UnixMilli(), 10), id: android.MMSID(r),
						group: strings.Contains(r.Address, "~")})
				}
			}
		}
	}
	return out, newest
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// scoreAndroid imports full.xml the way `tidings index --android-xml`
// does (androidindex source, then its contact names into the index and the
// contact book), reads every received message back through the query
// layer (its sender label) and compares it with expected_names.json; then
// imports older.xml into the same index, as a later run given the older
// export, and scores again.
func scoreAndroid(t *testing.T, half string) androidScore {
	ctx := context.Background()
	dir := filepath.Join("testdata", half, "android")
	var want struct {
		Messages map[string]*string `json:"messages"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "expected_names.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	full, _ := filepath.Abs(filepath.Join(dir, "full.xml"))
	older, _ := filepath.Abs(filepath.Join(dir, "older.xml"))
	recs, newest := readReceived(t, full)
	byKey := map[string]received{}
	for _, r := range recs {
		byKey[r.key] = r
	}
	if len(want.Messages) == 0 {
		t.Fatal("expected_names.json is empty")
	}
	for k := range want.Messages {
		if _, ok := byKey[k]; !ok {
			t.Fatalf("expected_names.json names %q, which is no received message of full.xml", k)
		}
	}
	now := func() time.Time { return newest.Add(24 * time.Hour) }
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, policy.ContactsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	store, err := policy.NewStore(home, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gate := service.NewGate(store)
	ix, err := index.Open(ctx, filepath.Join(home, "index.db"), index.Options{Policy: gate, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })

	score := func(path string) (all, group float64) {
		src := androidindex.New([]string{path}, "US")
		if _, err := ix.Sync(ctx, index.SyncOptions{}, src); err != nil {
			t.Fatal(err)
		}
		book := &service.FileBook{Region: "US", Sources: []service.CardSource{src}, SourceFiles: []string{path}, OnLoad: pushCards(ix)}
		svc, err := service.New(service.Options{Index: ix, Gate: gate, Contacts: book, Now: now, Region: "US"})
		if err != nil {
			t.Fatal(err)
		}
		senders := map[string][2]string{} // message id → sender label, handle
		list, err := ix.ListConversations(ctx, index.ListOptions{Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list.Conversations {
			prm := service.MessagesParams{ConversationID: c.ID, Limit: service.MaxMessagesLimit}
			for {
				page, err := svc.Messages(ctx, prm)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range page.Messages {
					senders[m.ID] = [2]string{m.Sender, m.SenderHandle}
				}
				if !page.More || page.NextCursor == "" {
					break
				}
				prm.Cursor = page.NextCursor
			}
		}
		var ok, groupOK, groupN int
		for k, name := range want.Messages {
			r := byKey[k]
			s, found := senders[r.id]
			if !found {
				t.Fatalf("message %s (%s) is not in the index", k, r.id)
			}
			right := false
			if name == nil {
				right = unnamed(s[0], s[1])
			} else {
				right = s[0] == *name
			}
			if right {
				ok++
			} else if detail(half) {
				t.Logf("android %s: %s want %v, got %q", filepath.Base(path), k, deref(name), s[0])
			}
			if r.group && name != nil {
				groupN++
				if right {
					groupOK++
				}
			}
		}
		if groupN == 0 {
			t.Fatal("no named group-MMS sender in expected_names.json")
		}
		return float64(ok) / float64(len(want.Messages)), float64(groupOK) / float64(groupN)
	}
	var s androidScore
	s.full, s.groupFull = score(full)
	s.reimport, s.groupReimport = score(older)
	return s
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}
