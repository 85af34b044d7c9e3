// Package androidgen writes synthetic "SMS Backup & Restore" exports for
// tests and benchmarks: a deterministic, realistic mix of SMS and MMS (one-
// to-one and group, text and media parts, SMIL, addresses in mixed
// formats, entities, emoji as surrogate references), with every attribute
// the app writes. Numbers are in the fictional 555-01xx range.
package androidgen

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config shapes an export. Zero fields take the defaults.
type Config struct {
	// Messages is the number of records (SMS + MMS).
	Messages int
	// Seed makes the output reproducible (same seed, same bytes).
	Seed uint64
	// MMSFraction of records are MMS (default 0.15).
	MMSFraction float64
	// GroupFraction of MMS go to a group thread (default 0.3).
	GroupFraction float64
	// MediaFraction of MMS carry a media part (default 0.6).
	MediaFraction float64
	// MediaBytes is the mean decoded size of a media part (default 2 KiB;
	// sizes vary from half to one and a half times it).
	MediaBytes int
	// Contacts is the number of people (default 400); Groups the number
	// of group threads (default 40).
	Contacts int
	Groups   int
	// Start is the first message's time (default 2019-01-01 UTC).
	Start time.Time
	// Owner is the phone's own number (default +1 415-555-0100).
	Owner string
	// Unread makes the last Unread records incoming SMS left unread
	// (read="0"); FailedEvery marks every FailedEvery-th outgoing SMS as
	// failed (type 5). Zero (the default) leaves the output unchanged.
	Unread      int
	FailedEvery int
}

// Summary describes what Write produced.
type Summary struct {
	SMS, MMS, GroupMMS, MediaParts int
	// MediaBytes is the decoded size of all media payloads.
	MediaBytes int64
	// Threads is the number of distinct conversations used.
	Threads int
	// Bytes is the size of the export.
	Bytes int64
	// Last is the last message's time.
	Last time.Time
	// Unread and Failed count the unread incoming and failed outgoing SMS.
	Unread, Failed int
}

type person struct {
	e164  string
	forms []string // how the number appears in the export
	name  string
}

var firstNames = strings.Fields("Alice Bob Carol Dan Eve Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy Rupert Sybil Trent Victor Walter Zoé Amélie Jürgen Søren Łukasz Chloé Mateo Aiko Priya Kofi Ingrid")
var lastNames = strings.Fields("Martin Stone Diaz Wu Lee Moreau Novak Okafor Silva Tanaka Berg Rossi Kowalski Haddad Nguyen Schmidt Dubois Costa Jensen Müller")

// words is a small vocabulary; bodies are drawn from it so full-text
// search has realistic term frequencies.
var words = strings.Fields(`the a to and of I you it is in for on that this be have are with at we can
not do so but just what will my your me get if all was like know when about up out one go time
now good see think there then how no yes ok okay thanks thank love call later today tomorrow tonight
dinner lunch coffee meeting home work office train bus car late early soon back here where who
why sure maybe please sorry great awesome nice cool fine happy birthday weekend saturday sunday
monday friday morning evening night week month year picture photo video link address number
phone text message email plan trip flight hotel beach park movie game party school kids dog cat
doctor appointment store groceries milk bread wine cheese pizza ready leaving arrived parking
traffic weather rain sun snow cold hot remember forgot keys wallet ticket concert gym run walk`)

var emoji = []string{"😀", "😂", "❤️", "👍", "🎉", "🙏", "😍", "🍷", "☕", "🌅", "👍🏽"}

// Write writes an export to w.
func Write(w io.Writer, cfg Config) (Summary, error) {
	if cfg.Messages < 0 {
		return Summary{}, fmt.Errorf("androidgen: negative message count")
	}
	if cfg.MMSFraction == 0 {
		cfg.MMSFraction = 0.15
	}
	if cfg.GroupFraction == 0 {
		cfg.GroupFraction = 0.3
	}
	if cfg.MediaFraction == 0 {
		cfg.MediaFraction = 0.6
	}
	if cfg.MediaBytes == 0 {
		cfg.MediaBytes = 2048
	}
	if cfg.Contacts <= 0 {
		cfg.Contacts = 400
	}
	if cfg.Groups <= 0 {
		cfg.Groups = 40
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if cfg.Owner == "" {
		cfg.Owner = "+14155550100"
	}
	// Media draws come from their own stream, so two exports that differ
	// only in MediaBytes hold the same messages.
	g := &gen{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), mrng: rand.New(rand.NewPCG(cfg.Seed, 0x3ed1a)), cw: &countWriter{w: w}}
	g.bw = bufio.NewWriterSize(g.cw, 256<<10)
	g.setup()
	if err := g.run(); err != nil {
		return Summary{}, err
	}
	if err := g.bw.Flush(); err != nil {
		return Summary{}, err
	}
	g.sum.Bytes = g.cw.n
	g.sum.Threads = len(g.threads)
	return g.sum, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type gen struct {
	cfg     Config
	rng     *rand.Rand
	mrng    *rand.Rand
	cw      *countWriter
	bw      *bufio.Writer
	people  []person
	groups  [][]int
	media   string // base64 block media payloads are sliced from
	sum     Summary
	threads map[string]bool
	nOut    int // outgoing SMS written (FailedEvery)
	now     time.Time
}

func (g *gen) setup() {
	g.threads = map[string]bool{}
	for i := range g.cfg.Contacts {
		// 555-01xx is reserved for fiction in NANP; spread over area codes.
		area := []string{"415", "650", "212", "312", "718", "617", "206", "512"}[i%8]
		line := fmt.Sprintf("%04d", 100+i%9900)
		sub := fmt.Sprintf("555%s", line[len(line)-4:])
		if "+1"+area+sub == g.cfg.Owner {
			sub = "5550099" // never the owner's own number
		}
		e164 := "+1" + area + sub
		p := person{e164: e164, forms: []string{e164, "(" + area + ") " + sub[:3] + "-" + sub[3:], area + sub, "+1 " + area + "-" + sub[:3] + "-" + sub[3:]}}
		if g.rng.IntN(10) < 8 {
			p.name = firstNames[g.rng.IntN(len(firstNames))] + " " + lastNames[g.rng.IntN(len(lastNames))]
		}
		g.people = append(g.people, p)
	}
	for range g.cfg.Groups {
		n := 2 + g.rng.IntN(5)
		var members []int
		for len(members) < n {
			m := g.rng.IntN(len(g.people))
			dup := false
			for _, x := range members {
				dup = dup || x == m
			}
			if !dup {
				members = append(members, m)
			}
		}
		g.groups = append(g.groups, members)
	}
	raw := make([]byte, 3*g.cfg.MediaBytes/2+3)
	for i := range raw {
		raw[i] = byte(g.mrng.Uint32())
	}
	g.media = base64.StdEncoding.EncodeToString(raw)
	g.now = g.cfg.Start
}

func (g *gen) w(s string) { g.bw.WriteString(s) }

// attr writes name="value" with XML escaping as the app does it: entities
// for markup, numeric references for newlines, and (as the app's "emoji"
// option does) UTF-16 surrogate pairs as two references.
func (g *gen) attr(name, value string) {
	g.w(" ")
	g.w(name)
	g.w(`="`)
	for _, r := range value {
		switch {
		case r == '&':
			g.w("&amp;")
		case r == '<':
			g.w("&lt;")
		case r == '>':
			g.w("&gt;")
		case r == '"':
			g.w("&quot;")
		case r == '\'':
			g.w("&apos;")
		case r == '\n':
			g.w("&#10;")
		case r > 0xFFFF:
			r -= 0x10000
			g.w("&#" + strconv.Itoa(int(0xD800+(r>>10))) + ";&#" + strconv.Itoa(int(0xDC00+(r&0x3FF))) + ";")
		default:
			g.bw.WriteRune(r)
		}
	}
	g.w(`"`)
}

func (g *gen) body() string {
	n := 2 + g.rng.IntN(24)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.rng.IntN(len(words))])
	}
	switch g.rng.IntN(12) {
	case 0:
		b.WriteString(" " + emoji[g.rng.IntN(len(emoji))])
	case 1:
		b.WriteString(" & more\nsee you")
	case 2:
		b.WriteString(` "quoted" <3`)
	}
	return b.String()
}

func (g *gen) run() error {
	g.w("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n")
	g.w("<!--File Created By SMS Backup & Restore v10.22.003 (synthetic, androidgen)-->\n")
	g.w("<?xml-stylesheet type=\"text/xsl\" href=\"sms.xsl\"?>\n")
	g.w(`<smses count="` + strconv.Itoa(g.cfg.Messages) + `" backup_set="00000000-0000-4000-8000-` + fmt.Sprintf("%012d", g.cfg.Seed%1e12) + `" backup_date="` + strconv.FormatInt(g.cfg.Start.UnixMilli(), 10) + `" type="full">` + "\n")
	for i := range g.cfg.Messages {
		g.now = g.now.Add(time.Duration(1+g.rng.IntN(180_000)) * time.Millisecond)
		mms := g.rng.Float64() < g.cfg.MMSFraction
		switch {
		case i >= g.cfg.Messages-g.cfg.Unread:
			g.sms(true)
		case mms:
			g.mms()
		default:
			g.sms(false)
		}
	}
	g.w("</smses>\n")
	g.sum.Last = g.now
	return nil
}

func readable(t time.Time) string { return t.Format("Jan 2, 2006 15:04:05") }

func (g *gen) pick() *person {
	return &g.people[int(g.rng.ExpFloat64()*float64(len(g.people))/6)%len(g.people)]
}

// sms writes one SMS; unread forces an incoming one left unread.
func (g *gen) sms(unread bool) {
	p := g.pick()
	g.threads[p.e164] = true
	g.sum.SMS++
	in := g.rng.IntN(2) == 0 || unread
	typ := "2"
	if in {
		typ = "1"
	} else if g.cfg.FailedEvery > 0 {
		if g.nOut++; g.nOut%g.cfg.FailedEvery == 0 {
			typ = "5"
			g.sum.Failed++
		}
	}
	ms := strconv.FormatInt(g.now.UnixMilli(), 10)
	g.w("  <sms")
	g.attr("protocol", "0")
	g.attr("address", p.forms[g.rng.IntN(len(p.forms))])
	g.attr("date", ms)
	g.attr("type", typ)
	g.attr("subject", "null")
	g.attr("body", g.body())
	g.attr("toa", "null")
	g.attr("sc_toa", "null")
	if in {
		g.attr("service_center", "+14155559999")
	} else {
		g.attr("service_center", "null")
	}
	if unread {
		g.attr("read", "0")
		g.sum.Unread++
	} else {
		g.attr("read", "1")
	}
	g.attr("status", "-1")
	g.attr("locked", "0")
	if in {
		g.attr("date_sent", strconv.FormatInt(g.now.UnixMilli()-int64(g.rng.IntN(5000)), 10))
	} else {
		g.attr("date_sent", "0")
	}
	g.attr("sub_id", "1")
	g.attr("readable_date", readable(g.now))
	name := p.name
	if name == "" {
		name = "(Unknown)"
	}
	g.attr("contact_name", name)
	g.w(" />\n")
}

func (g *gen) mms() {
	g.sum.MMS++
	var members []int
	if g.rng.Float64() < g.cfg.GroupFraction {
		members = g.groups[g.rng.IntN(len(g.groups))]
		g.sum.GroupMMS++
	} else {
		members = []int{int(g.rng.ExpFloat64()*float64(len(g.people))/6) % len(g.people)}
	}
	var addrs, names []string
	for _, m := range members {
		addrs = append(addrs, g.people[m].e164)
		names = append(names, g.people[m].name)
	}
	sorted := slices.Sorted(slices.Values(addrs))
	g.threads[strings.Join(sorted, ",")] = true
	in := g.rng.IntN(2) == 0
	box := "2"
	mtype := "128"
	if in {
		box, mtype = "1", "132"
	}
	g.w("  <mms")
	// Half the phones write MMS dates in seconds.
	if g.rng.IntN(2) == 0 {
		// Round up so dates stay strictly increasing (and ids unique).
		if t := g.now.Truncate(time.Second); !t.Equal(g.now) {
			g.now = t.Add(time.Second)
		}
		g.attr("date", strconv.FormatInt(g.now.Unix(), 10))
	} else {
		g.attr("date", strconv.FormatInt(g.now.UnixMilli(), 10))
	}
	g.attr("spam_report", "0")
	g.attr("ct_t", "application/vnd.wap.multipart.related")
	g.attr("msg_box", box)
	g.attr("address", strings.Join(addrs, "~"))
	g.attr("sub_cs", "null")
	g.attr("retr_st", "null")
	g.attr("d_tm", "null")
	g.attr("exp", "null")
	g.attr("locked", "0")
	g.attr("m_id", fmt.Sprintf("mid%016x", g.rng.Uint64()))
	g.attr("st", "null")
	g.attr("retr_txt_cs", "null")
	g.attr("retr_txt", "null")
	g.attr("creator", "com.google.android.apps.messaging")
	g.attr("date_sent", "0")
	g.attr("seen", "1")
	g.attr("m_size", "null")
	g.attr("rr", "129")
	g.attr("sub_id", "1")
	g.attr("rpt_a", "null")
	g.attr("ct_cls", "null")
	g.attr("pri", "129")
	g.attr("sub", "null")
	g.attr("tr_id", fmt.Sprintf("T%x", g.rng.Uint64()))
	g.attr("resp_txt", "null")
	g.attr("ct_l", "null")
	g.attr("m_cls", "personal")
	g.attr("d_rpt", "129")
	g.attr("v", "18")
	g.attr("m_type", mtype)
	g.attr("read", "1")
	g.attr("text_only", "0")
	g.attr("readable_date", readable(g.now))
	g.attr("contact_name", strings.Join(names, ", "))
	g.w(">\n    <parts>\n")
	media := g.rng.Float64() < g.cfg.MediaFraction
	g.w(`      <part seq="-1" ct="application/smil" name="smil.xml" chset="106" cd="null" fn="null" cid="&lt;smil&gt;" cl="smil.xml" ctt_s="null" ctt_t="null" text="&lt;smil&gt;&lt;head&gt;&lt;layout&gt;&lt;root-layout/&gt;&lt;/layout&gt;&lt;/head&gt;&lt;body&gt;&lt;par dur=&quot;5000ms&quot;&gt;&lt;img src=&quot;image.jpg&quot;/&gt;&lt;/par&gt;&lt;/body&gt;&lt;/smil&gt;" />` + "\n")
	if media {
		g.sum.MediaParts++
		size := g.cfg.MediaBytes/2 + g.mrng.IntN(g.cfg.MediaBytes+1)
		size -= size % 3
		g.sum.MediaBytes += int64(size)
		name := fmt.Sprintf("IMG_%08d.jpg", g.sum.MediaParts)
		g.w(`      <part seq="0" ct="image/jpeg" name="` + name + `" chset="null" cd="null" fn="null" cid="&lt;image&gt;" cl="` + name + `" ctt_s="null" ctt_t="null" text="null" data="`)
		g.w(g.media[:size/3*4])
		g.w("\" />\n")
	}
	if !media || g.rng.IntN(2) == 0 {
		g.w(`      <part seq="1" ct="text/plain" name="null" chset="106" cd="null" fn="null" cid="&lt;text_0&gt;" cl="text_0.txt" ctt_s="null" ctt_t="null"`)
		g.attr("text", g.body())
		g.w(" />\n")
	}
	g.w("    </parts>\n    <addrs>\n")
	if in {
		from := members[g.rng.IntN(len(members))]
		g.w(`      <addr address="` + g.people[from].e164 + `" type="137" charset="106" />` + "\n")
		g.w(`      <addr address="` + g.cfg.Owner + `" type="151" charset="106" />` + "\n")
		for _, m := range members {
			if m != from {
				g.w(`      <addr address="` + g.people[m].e164 + `" type="151" charset="106" />` + "\n")
			}
		}
	} else {
		g.w(`      <addr address="insert-address-token" type="137" charset="106" />` + "\n")
		for _, m := range members {
			g.w(`      <addr address="` + g.people[m].e164 + `" type="151" charset="106" />` + "\n")
		}
	}
	g.w("    </addrs>\n  </mms>\n")
}
