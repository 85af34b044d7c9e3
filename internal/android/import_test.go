package android

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/model"
)

func importString(t *testing.T, doc string, opts ImportOptions) (Result, []model.Conversation, []model.Message) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "export.xml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	res, convs, msgs, err := importAll(t, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res, convs, msgs
}

const me = "+14155550100"

func mms(box, address string, addrs ...string) string {
	var b strings.Builder
	b.WriteString(`<mms date="1795000000000" msg_box="` + box + `" address="` + address + `"><parts><part ct="text/plain" text="hi"/></parts><addrs>`)
	for i := 0; i+1 < len(addrs); i += 2 {
		b.WriteString(`<addr address="` + addrs[i] + `" type="` + addrs[i+1] + `"/>`)
	}
	b.WriteString(`</addrs></mms>`)
	return b.String()
}

func TestDetectOwner(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"sent from real number", mms("2", "+16505550199", me, "137", "+16505550199", "151"), []string{me}},
		{"sole recipient of a received MMS", mms("1", "+16505550199", "+16505550199", "137", "(415) 555-0100", "151"), []string{me}},
		{"intersection of received groups", mms("2", "+1650~+1212", "insert-address-token", "137", "+16505550199", "151", "+12125550111", "151") +
			mms("1", "+16505550199~+12125550111", "+16505550199", "137", me, "151", "+12125550111", "151") +
			mms("1", "+13125550122~+12125550111", "+13125550122", "137", me, "151", "+12125550111", "130") +
			mms("1", "+13125550122~+16505550199", "+16505550199", "137", me, "151", "+13125550122", "151"),
			[]string{me}},
		{"ambiguous intersection gives nothing", mms("1", "+16505550199~+12125550111", "+16505550199", "137", me, "151", "+12125550111", "151"), nil},
		{"counter-evidence wins", mms("1", "+16505550199", "+16505550199", "137", "+12125550111", "151") +
			mms("1", "+12125550111", "+12125550111", "137", me, "151") + mms("1", "+12125550111", "+12125550111", "137", me, "151"),
			[]string{me}},
		{"dual SIM", mms("2", "+16505550199", me, "137", "+16505550199", "151") + mms("2", "+16505550199", "+14155550111", "137", "+16505550199", "151"),
			[]string{me, "+14155550111"}},
		{"only SMS", `<sms address="+16505550199" date="1795000000000" type="2" body="x"/>`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DetectOwner(context.Background(), strings.NewReader(wrap(tt.body)), "US")
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("owner %v, want %v", got, tt.want)
			}
		})
	}
}

// TestGroupKeys: a group thread is keyed by the participants other than
// the owner, whatever their format or order and whoever sent; with the
// owner unknown, the owner stays in the set (documented limitation).
func TestGroupKeys(t *testing.T) {
	doc := wrap(mms("1", "+16505550199~(212) 555-0111", "+16505550199", "137", me, "151", "2125550111", "151") +
		mms("2", "+12125550111~+16505550199", "insert-address-token", "137", "+1 650 555 0199", "151", "+12125550111", "151") +
		mms("1", "+16505550199", "+16505550199", "137", me, "151"))
	_, convs, msgs := importString(t, doc, ImportOptions{Region: "US"})
	group := ConversationID([]string{"+12125550111", "+16505550199"})
	if msgs[0].ConversationIDs[0] != group || msgs[1].ConversationIDs[0] != group {
		t.Errorf("group messages in %v / %v, want %s", msgs[0].ConversationIDs, msgs[1].ConversationIDs, group)
	}
	if msgs[0].Sender != "+16505550199" || msgs[1].FromMe != true || msgs[1].Sender != "" {
		t.Errorf("senders %q %q", msgs[0].Sender, msgs[1].Sender)
	}
	if len(convs) != 2 || convs[0].Kind != model.KindGroup || convs[1].Kind != model.KindDirect {
		t.Errorf("conversations %+v", convs)
	}

	// Told the owner explicitly: same keys, no detection pass needed.
	res, _, msgs2 := importString(t, doc, ImportOptions{Region: "US", Owner: []string{"415-555-0100"}})
	if res.OwnerDetected || !slices.Equal(res.Owner, []string{me}) || msgs2[0].ConversationIDs[0] != group {
		t.Errorf("explicit owner: %+v", res)
	}
}

func TestNoteToSelf(t *testing.T) {
	doc := wrap(mms("2", me, me, "137", me, "151") + mms("2", "+16505550199", me, "137", "+16505550199", "151"))
	_, convs, _ := importString(t, doc, ImportOptions{Region: "US"})
	if convs[0].Identifier != me || convs[0].Kind != model.KindDirect {
		t.Errorf("note to self: %+v", convs[0])
	}
}

// TestNationalNumbersTakeTheConfiguredRegion: a national number
// ("06 12 34 56 78") is read in the configured region: with FR it joins its
// +33 form in one conversation, with US it stays apart (it is no US
// number), and an unknown region is refused.
func TestNationalNumbersTakeTheConfiguredRegion(t *testing.T) {
	doc := wrap(`<sms address="06 12 34 56 78" date="1795000000000" type="1" body="a"/><sms address="+33612345678" date="1795000001000" type="2" body="b"/>`)
	_, convs, _ := importString(t, doc, ImportOptions{Region: "FR"})
	if len(convs) != 1 || convs[0].Identifier != "+33612345678" {
		t.Errorf("FR: %+v", convs)
	}
	_, convs, _ = importString(t, doc, ImportOptions{Region: "US"})
	if len(convs) != 2 {
		t.Errorf("US: a French national number has no country; got %+v", convs)
	}
	if _, _, _, err := importAll(t, filepath.Join("testdata", "full.xml"), ImportOptions{Region: "XX"}); err == nil {
		t.Errorf("unknown region accepted")
	}
}

// TestMessageIDs: ids depend on what identifies a message, not on flags
// and metadata that change between exports.
func TestMessageIDs(t *testing.T) {
	base := `<sms address="+14155550123" date="1795000000000" type="1" body="hello" read="0" status="-1" contact_name="A" sub_id="1" readable_date="x"/>`
	same := []string{
		`<sms body="hello" type="1" date="1795000000000" address="+14155550123" read="1" status="0" contact_name="Alice B" sub_id="2" readable_date="y" locked="1"/>`,
		`<sms address=" +14155550123 " date="1795000000000" type="1" body="hello"/>`,
		`<sms address="+14155550123" date="1795000000" type="1" body="hello"/>`, // the same instant in seconds
	}
	different := []string{
		`<sms address="+14155550123" date="1795000000001" type="1" body="hello"/>`,
		`<sms address="+14155550123" date="1795000000000" type="2" body="hello"/>`,
		`<sms address="+14155550123" date="1795000000000" type="1" body="hello!"/>`,
		`<sms address="4155550123" date="1795000000000" type="1" body="hello"/>`,
	}
	// id reads a one-record export and returns the record's id.
	id := func(doc string) string {
		recs, _, err := readAll(t, wrap(doc), nil)
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %d records, %v", doc, len(recs), err)
		}
		switch rec := recs[0].(type) {
		case *SMS:
			return SMSID(rec)
		case *MMS:
			return MMSID(rec)
		}
		t.Fatalf("%s: record of type %T", doc, recs[0])
		return ""
	}
	// Box changes among outgoing types keep the id (queued → sent).
	if id(`<sms address="+14155550123" date="1795000000000" type="6" body="hello"/>`) != id(`<sms address="+14155550123" date="1795000000000" type="2" body="hello"/>`) {
		t.Errorf("queued and sent copies of one message differ")
	}

	mmsBase := `<mms date="1795000000" msg_box="1" address="+16505550199~+12125550111" contact_name="x"><parts><part seq="-1" ct="application/smil" text="&lt;smil/&gt;"/><part ct="text/plain" text="hi"/><part ct="image/jpeg" name="a.jpg" data="TWFu"/></parts></mms>`
	mmsSame := []string{
		`<mms contact_name="y" read="1" address="+12125550111~+16505550199" msg_box="1" date="1795000000000"><parts><part ct="text/plain" text="hi"/><part ct="image/jpeg" name="a.jpg" data="TWFuTWFuTWFu"/></parts><addrs><addr address="+1" type="137"/></addrs></mms>`,
		`<mms date="1795000000000" msg_box="1" address="+16505550199~+12125550111~+12125550111"><parts><part ct="application/smil" text="other"/><part ct="TEXT/PLAIN" text="hi"/><part ct="image/jpeg" name="a.jpg"/></parts></mms>`,
	}
	mmsDifferent := []string{
		`<mms date="1795000000" msg_box="2" address="+16505550199~+12125550111"><parts><part ct="text/plain" text="hi"/><part ct="image/jpeg" name="a.jpg"/></parts></mms>`,
		`<mms date="1795000000" msg_box="1" address="+16505550199~+12125550111"><parts><part ct="text/plain" text="hi"/><part ct="image/jpeg" name="b.jpg"/></parts></mms>`,
		`<mms date="1795000000" msg_box="1" address="+16505550199~+12125550111" sub="subject"><parts><part ct="text/plain" text="hi"/><part ct="image/jpeg" name="a.jpg"/></parts></mms>`,
		`<mms date="1795000000" msg_box="1" address="+16505550199"><parts><part ct="text/plain" text="hi"/><part ct="image/jpeg" name="a.jpg"/></parts></mms>`,
	}
	for _, tc := range []struct {
		kind, base      string
		same, different []string
	}{
		{"sms", base, same, different},
		{"mms", mmsBase, mmsSame, mmsDifferent},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			want := id(tc.base)
			for _, d := range tc.same {
				if got := id(d); got != want {
					t.Errorf("%s: id %s, want %s", d, got, want)
				}
			}
			for _, d := range tc.different {
				if got := id(d); got == want {
					t.Errorf("%s: same id as the base message", d)
				}
			}
			prefix := "android:" + tc.kind + ":"
			if !strings.HasPrefix(want, prefix) || len(want) != len(prefix)+24 {
				t.Errorf("id format: %s, want %s and 24 hex digits", want, prefix)
			}
		})
	}
}

// TestContactsTakeTheNewestRealNameOfEachAddress: the import names each
// address after the contact_name of its newest message; placeholders
// ("(Unknown)", "null") give no contact, short codes and e-mail senders get
// one, and ReadContacts (the metadata-only pass) gives the same cards as
// Import.
func TestContactsTakeTheNewestRealNameOfEachAddress(t *testing.T) {
	doc := wrap(`<sms address="+14155550123" date="1795000000000" type="1" body="a" contact_name="Old Name"/>
<sms address="(415) 555-0123" date="1795000009000" type="2" body="b" contact_name="New Name"/>
<sms address="+14155550123" date="1795000005000" type="1" body="c" contact_name="Middle Name"/>
<sms address="+16505550199" date="1795000000000" type="1" body="d" contact_name="(Unknown)"/>
<sms address="+13125550122" date="1795000000000" type="1" body="e" contact_name="null"/>
<sms address="32665" date="1795000000000" type="1" body="f" contact_name="Bank Alerts"/>
` + mms("1", "+16505550199~+12125550111", "+16505550199", "137", me, "151") + `
<mms date="1795000000000" msg_box="1" address="friend@example.com" contact_name="Pat"/>`)
	res, _, _ := importString(t, doc, ImportOptions{Region: "US"})
	got := map[string]string{}
	for _, c := range res.Contacts {
		if c.Source != model.SourceAndroid {
			t.Errorf("source %q", c.Source)
		}
		got[c.ID] = c.Name()
	}
	want := map[string]string{"android:+14155550123": "New Name", "android:32665": "Bank Alerts", "android:friend@example.com": "Pat"}
	if len(got) != len(want) {
		t.Errorf("contacts %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	// ReadContacts (the metadata-only pass) agrees with the import.
	p := filepath.Join("testdata", "full.xml")
	cards, err := ReadContacts(context.Background(), p, "US")
	if err != nil {
		t.Fatal(err)
	}
	full, _, _, err := importAll(t, p, ImportOptions{Region: "US"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != len(full.Contacts) {
		t.Fatalf("ReadContacts %d cards, Import %d", len(cards), len(full.Contacts))
	}
	for i := range cards {
		if cards[i].ID != full.Contacts[i].ID || cards[i].FullName != full.Contacts[i].FullName {
			t.Errorf("card %d: %+v vs %+v", i, cards[i], full.Contacts[i])
		}
	}
}

func TestImportTruncatedAndCancelled(t *testing.T) {
	res, _, msgs, err := importAll(t, filepath.Join("testdata", "truncated.xml"), ImportOptions{Region: "US"})
	if !errors.Is(err, ErrTruncated) || len(msgs) != 3 || res.Messages != 3 || !res.Stats.Incomplete {
		t.Errorf("truncated: err %v, %d messages, %+v", err, len(msgs), res)
	}
	if !strings.Contains(err.Error(), "truncated.xml") {
		t.Errorf("error %q does not name the file", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = ReadFile(ctx, filepath.Join("testdata", "full.xml"), ImportOptions{Region: "US"}, Sink{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	_, err = ReadFile(context.Background(), filepath.Join("testdata", "missing.xml"), ImportOptions{}, Sink{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestSinkErrorStopsImport(t *testing.T) {
	boom := errors.New("index full")
	n := 0
	_, err := ReadFile(context.Background(), filepath.Join("testdata", "full.xml"), ImportOptions{Region: "US", Batch: 2},
		Sink{Message: func(model.Message) error {
			if n++; n == 3 {
				return boom
			}
			return nil
		}})
	if !errors.Is(err, boom) || n != 3 {
		t.Errorf("err %v after %d messages", err, n)
	}
}

func TestPartFilename(t *testing.T) {
	tests := []struct {
		p    Part
		want string
	}{
		{Part{Name: "IMG.jpg"}, "IMG.jpg"},
		{Part{Name: "null", ContentLoc: "cl.jpg"}, "cl.jpg"},
		{Part{Name: "../../etc/passwd"}, "passwd"},
		{Part{Name: `C:\Users\x\a.png`}, "a.png"},
		{Part{Name: "dir/", Filename: "fn.gif"}, "fn.gif"},
		{Part{Name: ".."}, ""},
	}
	for _, tt := range tests {
		if got := partFilename(tt.p); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.p, got, tt.want)
		}
	}
}

// TestHugeParticipantList: an address attribute listing hundreds of
// participants (within the 4 KiB attribute limit) is bounded, not rejected.
func TestHugeParticipantList(t *testing.T) {
	var addrs []string
	for i := range 450 {
		addrs = append(addrs, "55"+strconv.Itoa(10000+i))
	}
	doc := wrap(`<mms date="1795000000000" msg_box="1" address="` + strings.Join(addrs, "~") + `"><parts><part ct="text/plain" text="spam"/></parts></mms>`)
	_, convs, msgs := importString(t, doc, ImportOptions{Region: "US", Owner: []string{me}})
	if len(msgs) != 1 || len(convs) != 1 {
		t.Fatalf("%d messages, %d conversations", len(msgs), len(convs))
	}
	if len(convs[0].Participants) != maxParticipants {
		t.Fatalf("%d messages, %d conversations, %d participants", len(msgs), len(convs), len(convs[0].Participants))
	}
}
