package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// androidFixture copies internal/android/testdata/full.xml (a hand-written
// SMS Backup & Restore export: Alice's SMS/MMS thread, Bob, a 4-person
// group MMS, short codes, an e-mail sender) into a temp folder.
func androidFixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "android", "testdata", "full.xml"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "sms-backup.xml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeAndroidOnly: an MCP client over `tidings serve --android-xml`
// (no chat.db, no contacts file) sees the export's threads, finds an MMS
// caption, reads Alice's thread by a phone number in another format (with
// attachment metadata and no file location), and looks her up by the name
// the export carries.
func TestServeAndroidOnly(t *testing.T) {
	xml := androidFixture(t)
	// The export in testdata holds literal dates; the clock is pinned to a
	// literal date near them (they never meet the real clock).
	c := startClient(t, map[string]string{"TIDINGS_NOW": "2026-11-30T12:00:00Z"}, "--android-xml", xml)

	list := c.waitFor("list_conversations", map[string]any{"limit": 50}, func(r callResult) bool {
		return !r.IsErr && r.Out["count"].(float64) > 0
	}).Out
	if list["total"] != 8.0 {
		t.Errorf("total = %v, want the export's 8 threads", list["total"])
	}
	alice := listed(list, "Alice M. Martin")
	if alice == nil || alice["kind"] != "direct" || alice["chat_id"] != "+14155550123" || alice["message_count"] != 9.0 {
		t.Errorf("Alice's thread = %v\nlist: %s", alice, clip([]byte(mustJSON(list))))
	}
	var group map[string]any
	for _, cv := range list["conversations"].([]any) {
		if cm := cv.(map[string]any); cm["kind"] == "group" {
			group = cm
		}
	}
	if group == nil || group["participant_count"] != 4.0 || group["message_count"] != 2.0 {
		t.Errorf("group thread = %v", group)
	}

	res := c.mustCall("search_messages", map[string]any{"query": "terrace"})
	hits, _ := res["hits"].([]any)
	if len(hits) == 0 {
		t.Fatalf("search terrace: %s", clip([]byte(mustJSON(res))))
	}
	h := hits[0].(map[string]any)
	// The caption followed U+FFFC, the photo's place in the MMS, which
	// the output boundary strips (TestNoObjectReplacementCharacter).
	if h["text"] != "<untrusted_external_content>The view from the terrace 🌅</untrusted_external_content>" ||
		h["conversation"].(map[string]any)["id"] != alice["id"] || h["sender"] != "Alice M. Martin" {
		t.Errorf("terrace hit = %v", h)
	}

	r := c.call("get_conversation_messages", map[string]any{"chat": "(415) 555-0123", "limit": 50})
	if r.IsErr {
		t.Fatalf("get_conversation_messages: %s", r.Text)
	}
	msgs := r.Out["messages"].([]any)
	if len(msgs) != 9 || r.Out["contact"] != "Alice M. Martin" {
		t.Fatalf("Alice's messages: %d, contact %v", len(msgs), r.Out["contact"])
	}
	first, last := msgs[0].(map[string]any), msgs[8].(map[string]any)
	if !strings.Contains(first["text"].(string), "Dinner at 7?") || last["text"] != "<untrusted_external_content>Thanks for tonight!</untrusted_external_content>" {
		t.Errorf("first %v, last %v", first["text"], last["text"])
	}
	var photo map[string]any
	for _, m := range msgs {
		if atts, _ := m.(map[string]any)["attachments"].([]any); len(atts) > 0 {
			photo = atts[0].(map[string]any)
		}
	}
	if photo == nil || photo["filename"] != "IMG_2041.jpg" || photo["mime_type"] != "image/jpeg" || photo["size"] != 160.0 || photo["id"] == "" {
		t.Errorf("photo attachment = %v", photo)
	}
	for _, leak := range []string{`"path"`, "/9j/4AAQ", "data:"} {
		if strings.Contains(string(r.Raw), leak) || strings.Contains(r.Text, leak) {
			t.Errorf("the messages carry %q (a file location or the bytes)", leak)
		}
	}

	lk := c.mustCall("lookup_contacts", map[string]any{"name": "Alice"})
	ms := lk["matches"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["name"] != "Alice M. Martin" || ms[0].(map[string]any)["phone_last10"] != "4155550123" {
		t.Errorf("lookup_contacts Alice = %v", lk)
	}
}

// androidCamille writes an export holding an SMS thread with Camille
// Durand (the fixture chat.db's iMessage contact): one message before her
// iMessages, one between them, one after.
func androidCamille(t *testing.T) string {
	t.Helper()
	ms := func(ago time.Duration) int64 { return servicetest.Now.Add(-ago).UnixMilli() }
	var b strings.Builder
	b.WriteString("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<smses count=\"3\">\n")
	for _, m := range []struct {
		ago  time.Duration
		typ  int
		body string
	}{
		{30 * time.Hour, 1, "SMS avant: tu as reçu mon iMessage ?"},
		{19*time.Hour + 30*time.Minute, 2, "SMS entre les deux: oui je réponds par SMS"},
		{2 * time.Hour, 1, "SMS après: à samedi alors"},
	} {
		fmt.Fprintf(&b, `<sms protocol="0" address="06 39 98 11 11" date="%d" type="%d" body="%s" read="1" status="-1" contact_name="Camille Durand" />`+"\n",
			ms(m.ago), m.typ, m.body)
	}
	b.WriteString("</smses>\n")
	p := filepath.Join(t.TempDir(), "camille.xml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeMergesPersonAcrossSources: a person with an iMessage thread in
// chat.db and an SMS thread in an Android export is one conversation when
// asked by name or by number (any format): get_conversation_messages
// returns both threads' messages in one chronological page and lists both
// threads; asked by a conversation id, only that thread.
func TestServeMergesPersonAcrossSources(t *testing.T) {
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	home := filepath.Join(t.TempDir(), "tidings")
	servicetest.WritePolicy(t, home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
	c := startClient(t, map[string]string{"TIDINGS_HOME": home, "TIDINGS_NOW": servicetest.Now.Format(time.RFC3339), "TIDINGS_REGION": "FR"},
		"--imessage", chatDB, "--contacts", vcf, "--android-xml", androidCamille(t))
	want := []string{"SMS avant", "Salut ! On se voit à Lyon samedi ?", "SMS entre les deux", "Oui, samedi midi.", "SMS après"}
	for _, chat := range []string{"Camille Durand", "Camille", "+33 6 39 98 11 11", "06 39 98 11 11", "+33639981111"} {
		t.Run(chat, func(t *testing.T) {
			r := c.waitFor("get_conversation_messages", map[string]any{"chat": chat}, func(r callResult) bool {
				ms, _ := r.Out["messages"].([]any)
				return !r.IsErr && len(ms) == len(want)
			})
			convs := r.Out["conversations"].([]any)
			services := map[string]bool{}
			for _, cv := range convs {
				services[strings.SplitN(cv.(map[string]any)["id"].(string), ";", 2)[0]] = true
			}
			if len(convs) != 2 || r.Out["contact"] != "Camille Durand" {
				t.Errorf("conversations = %v, contact %v", convs, r.Out["contact"])
			}
			for i, m := range r.Out["messages"].([]any) {
				if text := m.(map[string]any)["text"].(string); !strings.Contains(text, want[i]) {
					t.Errorf("message %d = %q, want %q (one chronological page across both threads)", i, text, want[i])
				}
			}
		})
	}
	// Search by person covers both sources too.
	res := c.mustCall("search_messages", map[string]any{"query": "samedi", "contact": "Camille Durand", "mode": "fulltext"})
	threads := map[string]bool{}
	for _, h := range res["hits"].([]any) {
		threads[h.(map[string]any)["conversation"].(map[string]any)["id"].(string)] = true
	}
	if len(threads) != 2 {
		t.Errorf("search by contact covers threads %v, want the iMessage and the SMS thread", threads)
	}
	// One thread by its id: only that thread.
	r := c.mustCall("get_conversation_messages", map[string]any{"chat": "iMessage;-;" + servicetest.FrenchPhone})
	if ms := r["messages"].([]any); len(ms) != 2 || len(r["conversations"].([]any)) != 1 {
		t.Errorf("by conversation id: %s", clip([]byte(mustJSON(r))))
	}
}
