package android

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// groupMMS is a received group MMS (msg_box 1) from `from`, to the owner
// and the others of address, with contact_name as the app writes it.
func groupMMS(ms int64, address, names, from string) string {
	return fmt.Sprintf(`<mms date="%d" msg_box="1" m_type="132" address="%s" contact_name="%s" read="1">`+
		`<parts><part seq="0" ct="text/plain" chset="106" text="hi all %d" /></parts>`+
		`<addrs><addr address="%s" type="137" charset="106" /><addr address="+14155550100" type="151" charset="106" /></addrs></mms>`,
		ms, address, names, ms, from)
}

func sms(ms int64, address, name string) string {
	return fmt.Sprintf(`<sms address="%s" date="%d" type="1" body="hello %d" read="1" status="-1" contact_name="%s" />`, address, ms, ms, name)
}

func export(t *testing.T, records ...string) string {
	t.Helper()
	body := `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>` + "\n<smses count=\"1\">\n"
	for _, r := range records {
		body += r + "\n"
	}
	p := filepath.Join(t.TempDir(), "export.xml")
	if err := os.WriteFile(p, []byte(body+"</smses>\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGroupMMSNamesEverySender pins docs/android.md "Contact names": a
// group MMS's contact_name lists the names of its address list in the
// same order, so every member gets their name from it (some people write
// only in groups); a list entry that is not a name — "(Unknown)", "null",
// a raw number — names nobody, and a list whose length does not match the
// addresses (a name with a comma in it) is not guessed at. A raw number
// given as a 1:1 contact_name is no name either.
func TestGroupMMSNamesEverySender(t *testing.T) {
	path := export(t,
		groupMMS(1764819672000, "+14155550107~(617) 555-0104~+15035550133~5105550143", "Mom, Chris (bro), Aunt Linda, (Unknown)", "+15035550133"),
		groupMMS(1764819673000, "+19255550127~+19255550171~+19255550199", "Coach Dev, Rachel Moss, +19255550199", "+19255550171"),
		groupMMS(1764819674000, "+12125550111~+12125550112", "Ruiz, Carmen, Bo", "+12125550111"),
		sms(1764819675000, "+13125550177", "+1 312-555-0177"),
		sms(1764819676000, "+13125550178", "(Unknown)"),
	)
	want := []string{
		"android:+14155550107=Mom", "android:+16175550104=Chris (bro)", "android:+15035550133=Aunt Linda",
		"android:+19255550127=Coach Dev", "android:+19255550171=Rachel Moss",
	}
	for name, read := range map[string]func() ([]string, error){
		"ReadContacts": func() ([]string, error) {
			cards, err := ReadContacts(context.Background(), path, "US")
			var out []string
			for _, c := range cards {
				out = append(out, c.ID+"="+c.FullName)
			}
			return out, err
		},
		"ReadFile": func() ([]string, error) {
			res, err := ReadFile(context.Background(), path, ImportOptions{Region: "US", Owner: []string{"+14155550100"}}, Sink{})
			var out []string
			for _, c := range res.Contacts {
				out = append(out, c.ID+"="+c.FullName)
			}
			return out, err
		},
	} {
		got, err := read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		slices.Sort(got)
		w := slices.Clone(want)
		slices.Sort(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: cards\n got %v\nwant %v", name, got, w)
		}
	}
}
