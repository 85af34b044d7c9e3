package imessage

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"howett.net/plist"

	"github.com/tidings-mcp/tidings/internal/imessage/typedstream"
	"github.com/tidings-mcp/tidings/internal/model"
)

// longText is a body far past the 127-byte mark where heuristic decoders
// truncate, with multi-byte characters on the way.
var longText = strings.Repeat("Sed nibh lorem, ünïcödé ✓ and emoji 🎉 — ", 200)

// Bodies of the attributedBody rows.
var (
	link  = "Hey Carol, tix are here: https://tix.example.com/42"
	otc   = "Your Acme code is 482913. Don't share it."
	multi = "\ufffcLook at this 🐟"
)

// base is the time of the first fixture message; later ones add minutes.
var base = time.Date(2024, 3, 5, 14, 30, 0, 0, time.UTC) // literal date: fixture rows read back, no clock

func at(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }

// scenario records what populate inserted.
type scenario struct {
	direct, group, twoPeople, styleOnly int64 // chat ROWIDs
	alice, bob, carol, dave             int64 // handle ROWIDs
	attJPEG, attSticker                 int64 // attachment ROWIDs
}

const (
	gDirect    = "iMessage;-;+15551230001"
	gGroup     = "iMessage;+;chat123456789"
	gTwoPeople = "SMS;-;+15551230002"
	gStyleOnly = "legacy-chat-7"
)

// populate fills a fixture with one row of every kind the reader must tell
// apart. Rows that need columns a schema lacks are inserted without them,
// as an older OS would have written them.
func populate(f *fixture) *scenario {
	s := &scenario{}
	s.alice = f.insert("handle", "id", "+15551230001", "service", "iMessage", "country", "us")
	s.bob = f.insert("handle", "id", "+15551230002", "service", "SMS", "country", "us")
	s.carol = f.insert("handle", "id", "carol@example.com", "service", "iMessage")
	s.dave = f.insert("handle", "id", "+33612345678", "service", "iMessage", "country", "fr")

	s.direct = f.insert("chat", "guid", gDirect, "style", 45, "chat_identifier", "+15551230001", "service_name", "iMessage")
	s.group = f.insert("chat", "guid", gGroup, "style", 43, "chat_identifier", "chat123456789", "service_name", "iMessage",
		"display_name", "Lake trip 🚣", "is_archived", 1)
	// A '-' guid with two participants: the participants win.
	s.twoPeople = f.insert("chat", "guid", gTwoPeople, "style", 45, "chat_identifier", "+15551230002", "service_name", "SMS")
	// No separators at all: only style tells.
	s.styleOnly = f.insert("chat", "guid", gStyleOnly, "style", 43, "chat_identifier", "legacy-chat-7")
	for _, p := range [][2]int64{{s.direct, s.alice}, {s.group, s.alice}, {s.group, s.carol}, {s.group, s.dave},
		{s.twoPeople, s.bob}, {s.twoPeople, s.dave}} {
		f.insert("chat_handle_join", "chat_id", p[0], "handle_id", p[1])
	}

	msg := func(chat int64, guid string, kv ...any) int64 {
		id := f.insert("message", append([]any{"guid", guid}, kv...)...)
		if chat != 0 {
			f.insert("chat_message_join", "chat_id", chat, "message_id", id, "message_date", 0)
		}
		return id
	}
	msg(s.direct, "M-PLAIN", "text", "Are we still on for Thursday?", "handle_id", s.alice, "service", "iMessage",
		"date", f.date(at(0)), "is_delivered", 1, "is_read", 1, "date_read", f.date(at(2)))
	msg(s.direct, "M-SENT", "text", "Yes! 7pm at Luigi's", "handle_id", s.alice, "service", "iMessage", "is_from_me", 1,
		"date", f.date(at(3)), "is_sent", 1, "is_delivered", 1, "date_delivered", f.date(at(3).Add(2*time.Second)))
	// Per-value date units: a seconds value in a nanosecond-era database.
	msg(s.direct, "M-SECONDS", "text", "old row", "handle_id", s.alice, "date", at(4).Unix()-appleEpoch)
	msg(s.direct, "M-FAILED", "text", "did this send?", "handle_id", s.alice, "is_from_me", 1, "date", f.date(at(5)), "error", 22)
	msg(s.group, "M-GROUP-IN", "text", "Who's bringing the cooler?", "handle_id", s.carol, "date", f.date(at(6)))
	msg(s.group, "M-GROUP-ME", "text", "I will", "handle_id", 0, "is_from_me", 1, "date", f.date(at(7)))
	msg(s.group, "M-GROUP-H0", "text", "handle zero", "handle_id", 0, "is_from_me", 0, "date", f.date(at(8)))

	// Attachments: one JPEG whose mime_type is NULL (derived from the UTI),
	// one sticker.
	attMsg := msg(s.direct, "M-ATTACH", "text", "\ufffc\ufffc", "handle_id", s.alice, "date", f.date(at(9)), "cache_has_attachments", 1)
	s.attJPEG = f.insert("attachment", "guid", "at_0_JPEG", "filename", "~/Library/Messages/Attachments/ab/11/at_0_JPEG/IMG_0042.jpeg",
		"uti", "public.jpeg", "transfer_name", "IMG_0042.jpeg", "total_bytes", 48213, "original_guid", "at_0_JPEG")
	s.attSticker = f.insert("attachment", "guid", "at_1_STICKER", "filename", "~/Library/Messages/StickerCache/x/sticker.heic",
		"uti", "public.heic", "mime_type", "image/heic", "transfer_name", "sticker.heic", "total_bytes", 24560,
		"is_sticker", 1, "original_guid", "at_1_STICKER")
	f.insert("message_attachment_join", "message_id", attMsg, "attachment_id", s.attSticker)
	f.insert("message_attachment_join", "message_id", attMsg, "attachment_id", s.attJPEG)

	// Reactions.
	msg(s.direct, "M-LOVE", "text", "Loved “Are we still on for Thursday?”", "is_from_me", 1, "date", f.date(at(10)),
		"associated_message_guid", "p:0/M-PLAIN", "associated_message_type", 2000)
	msg(s.group, "M-UNLIKE", "text", "Removed a like from “I will”", "handle_id", s.carol, "date", f.date(at(11)),
		"associated_message_guid", "p:1/M-GROUP-ME", "associated_message_type", 3001)
	msg(s.group, "M-EMOJI", "text", "Reacted 🔥 to “I will”", "handle_id", s.dave, "date", f.date(at(12)),
		"associated_message_guid", "M-GROUP-ME", "associated_message_type", 2006, "associated_message_emoji", "🔥")
	msg(s.group, "M-STICKER-TB", "handle_id", s.dave, "date", f.date(at(13)),
		"associated_message_guid", "p:0/M-GROUP-IN", "associated_message_type", 2007)
	msg(s.direct, "M-STICKER-PLACED", "handle_id", s.alice, "date", f.date(at(14)),
		"associated_message_guid", "bp:M-SENT", "associated_message_type", 1000)
	msg(s.group, "M-POLL-VOTE", "handle_id", s.carol, "date", f.date(at(15)),
		"associated_message_guid", "M-GROUP-IN", "associated_message_type", 4000)

	// Inline reply to part 0 of M-PLAIN.
	msg(s.direct, "M-REPLY", "text", "Actually make it 8", "handle_id", s.alice, "date", f.date(at(16)),
		"thread_originator_guid", "M-PLAIN", "thread_originator_part", "0:0:29")

	// Unsent: every part in rp, text emptied.
	unsent, _ := plist.Marshal(map[string]any{"amc": 0, "ust": true, "otr": map[string]any{"0": map[string]any{"lo": 0, "le": 13}},
		"rp": []int{0}}, plist.BinaryFormat)
	msg(s.direct, "M-UNSENT", "handle_id", 0, "is_from_me", 1, "date", f.date(at(17)), "date_retracted", f.date(at(18)),
		"message_summary_info", unsent)
	// Partly unsent: part 1 of two.
	partly, _ := plist.Marshal(map[string]any{"otr": map[string]any{"0": map[string]any{"lo": 0, "le": 5}, "1": map[string]any{"lo": 5, "le": 6}},
		"rp": []int{1}, "ust": true}, plist.BinaryFormat)
	msg(s.direct, "M-PARTLY", "text", "hello", "is_from_me", 1, "date", f.date(at(19)), "date_retracted", f.date(at(20)),
		"message_summary_info", partly)
	// A summary without edit keys must not be decoded as one.
	plain, _ := plist.Marshal(map[string]any{"amc": 0, "ust": true}, plist.BinaryFormat)
	msg(s.direct, "M-SUMMARY-PLAIN", "text", "nothing edited", "handle_id", s.alice, "date", f.date(at(21)), "message_summary_info", plain)

	// Group events.
	msg(s.group, "E-ADD", "handle_id", s.carol, "date", f.date(at(22)), "item_type", 1, "group_action_type", 0, "other_handle", s.dave)
	msg(s.group, "E-REMOVE", "handle_id", 0, "is_from_me", 1, "date", f.date(at(23)), "item_type", 1, "group_action_type", 1, "other_handle", s.dave)
	msg(s.group, "E-RENAME", "handle_id", s.carol, "date", f.date(at(24)), "item_type", 2, "group_title", "Lake trip 🚣")
	msg(s.group, "E-LEFT", "handle_id", s.dave, "date", f.date(at(25)), "item_type", 3, "group_action_type", 0)
	msg(s.group, "E-ICON", "handle_id", s.carol, "date", f.date(at(26)), "item_type", 3, "group_action_type", 1)
	msg(s.group, "E-BG", "handle_id", s.carol, "date", f.date(at(27)), "item_type", 3, "group_action_type", 4)
	msg(s.group, "E-NUMBER", "handle_id", s.dave, "date", f.date(at(28)), "item_type", 1, "group_action_type", 0, "other_handle", s.dave)
	msg(s.direct, "E-LOCATION", "handle_id", s.alice, "date", f.date(at(29)), "item_type", 4, "share_status", 0)

	// App balloons and effects.
	msg(s.direct, "M-APPLEPAY", "text", "\ufffd", "handle_id", s.alice, "date", f.date(at(30)),
		"balloon_bundle_id", "com.apple.messages.MSMessageExtensionBalloonPlugin:0000000000:com.apple.PassbookUIService.PeerPaymentMessagesExtension")
	msg(s.direct, "M-LINK", "text", "https://example.com/menu", "handle_id", s.alice, "date", f.date(at(31)),
		"balloon_bundle_id", "com.apple.messages.URLBalloonProvider")
	msg(s.direct, "M-EFFECT", "text", "Happy birthday!!", "is_from_me", 1, "date", f.date(at(32)),
		"expressive_send_style_id", "com.apple.messages.effect.CKConfettiEffect")

	// One message in two chats; one in none.
	both := msg(s.direct, "M-TWO-CHATS", "text", "sent to both", "is_from_me", 1, "date", f.date(at(33)))
	f.insert("chat_message_join", "chat_id", s.group, "message_id", both, "message_date", 0)
	msg(0, "M-ORPHAN", "text", "orphan", "handle_id", s.bob, "date", f.date(at(34)))
	msg(s.twoPeople, "M-SMS", "text", "Your code is 123456", "handle_id", s.bob, "service", "SMS", "date", f.date(at(35)))

	// Modern rows: text NULL, the body only in attributedBody.
	body := func(text string, runs ...typedstream.Run) []byte {
		b, err := typedstream.EncodeAttributedBody(text, runs)
		if err != nil {
			f.t.Fatal(err)
		}
		return b
	}
	msg(s.group, "B-RUNS", "attributedBody", body(link,
		typedstream.Run{Start: 0, End: 4, Part: 0},
		typedstream.Run{Start: 4, End: 9, Part: 0, Mention: "carol@example.com"},
		typedstream.Run{Start: 9, End: 25, Part: 0},
		typedstream.Run{Start: 25, End: len(link), Part: 0, Link: "https://tix.example.com/42"}),
		"handle_id", s.dave, "date", f.date(at(40)))
	msg(s.twoPeople, "B-OTC", "attributedBody", body(otc,
		typedstream.Run{Start: 0, End: 18, Part: 0},
		typedstream.Run{Start: 18, End: 24, Part: 0, OneTimeCode: true},
		typedstream.Run{Start: 24, End: len(otc), Part: 0}),
		"handle_id", s.bob, "service", "SMS", "date", f.date(at(41)))
	msg(s.direct, "B-MULTIPART", "attributedBody", body(multi,
		typedstream.Run{Start: 0, End: 3, Part: 0, AttachmentGUID: "at_0_JPEG", Filename: "IMG_0042.jpeg"},
		typedstream.Run{Start: 3, End: len(multi), Part: 1}),
		"handle_id", s.alice, "date", f.date(at(42)))
	msg(s.direct, "B-LONG", "attributedBody", body(longText), "handle_id", s.alice, "date", f.date(at(43)))
	msg(s.direct, "B-BROKEN", "attributedBody", []byte("\x04\x0bstreamtyped garbage"), "text", "fallback text",
		"handle_id", s.alice, "date", f.date(at(44)))
	edited, _ := plist.Marshal(map[string]any{"amc": 0, "ust": true, "ep": []int{0},
		"otr": map[string]any{"0": map[string]any{"lo": 0, "le": 14}},
		"ec": map[string]any{"0": []any{
			map[string]any{"d": 731514600.25, "t": body("First message  ")},
			map[string]any{"d": 731514660.5, "t": body("Edited message"), "bcg": "B0000000-0000-0000-0000-000000000001"},
		}}}, plist.BinaryFormat)
	msg(s.direct, "B-EDITED", "attributedBody", body("Edited message"), "is_from_me", 1, "date", f.date(at(45)),
		"date_edited", f.date(at(46)), "message_summary_info", edited)

	// Recently deleted: out of chat_message_join, into the recoverable join.
	if f.cols["chat_recoverable_message_join"] != nil {
		id := msg(0, "M-RECENTLY-DELETED", "text", "oops wrong chat", "is_from_me", 1, "date", f.date(at(36)))
		f.insert("chat_recoverable_message_join", "chat_id", s.direct, "message_id", id, "delete_date", f.date(at(37)))
	}
	return s
}

// readAll reads every message into a map by guid, checking ROWID order and
// that each message is delivered once.
func readAll(t *testing.T, r *Reader) (map[string]model.Message, []string) {
	t.Helper()
	got := map[string]model.Message{}
	var order []string
	var last int64
	err := r.Messages(context.Background(), 0, func(m model.Message) error {
		if m.RowID <= last {
			t.Errorf("ROWID %d after %d: not ascending or duplicated", m.RowID, last)
		}
		last = m.RowID
		if _, dup := got[m.ID]; dup {
			t.Errorf("message %s delivered twice", m.ID)
		}
		got[m.ID] = m
		order = append(order, m.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, order
}

func TestReaderEverySchema(t *testing.T) {
	for _, schema := range schemaFiles {
		t.Run(schema, func(t *testing.T) {
			f := newFixture(t, schema)
			s := populate(f)
			r := f.open(t)
			ctx := context.Background()
			caps := r.Capabilities()
			if caps.MessageColumns != len(f.cols["message"]) {
				t.Errorf("MessageColumns = %d, want %d", caps.MessageColumns, len(f.cols["message"]))
			}
			if caps.Reactions != f.has("message", "associated_message_type") || caps.Edits != f.has("message", "date_edited") ||
				caps.RecentlyDeleted != (f.cols["chat_recoverable_message_join"] != nil) || caps.GroupEvents != f.has("message", "item_type") {
				t.Errorf("capabilities %+v disagree with the schema", caps)
			}
			if stale, why := r.Stale(); stale {
				t.Errorf("stale on a plain file: %s", why)
			}

			convs, err := r.Conversations(ctx)
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]model.Conversation{}
			for _, c := range convs {
				byID[c.ID] = c
			}
			wantConv := map[string]struct {
				kind         model.ConversationKind
				identifier   string
				participants []string
			}{
				gDirect:    {model.KindDirect, "+15551230001", []string{"+15551230001"}},
				gGroup:     {model.KindGroup, "chat123456789", []string{"+15551230001", "+33612345678", "carol@example.com"}},
				gTwoPeople: {model.KindGroup, "+15551230002", []string{"+15551230002", "+33612345678"}},
				gStyleOnly: {model.KindGroup, "legacy-chat-7", []string{}},
			}
			for _, id := range sortedKeys(wantConv) {
				w := wantConv[id]
				c, ok := byID[id]
				if !ok {
					t.Errorf("conversation %s missing", id)
					continue
				}
				if c.Kind != w.kind || c.Identifier != w.identifier || !reflect.DeepEqual(c.Participants, w.participants) || c.Source != model.SourceIMessage {
					t.Errorf("conversation %s = %+v, want kind %s identifier %s participants %v", id, c, w.kind, w.identifier, w.participants)
				}
			}
			if g := byID[gGroup]; f.has("chat", "display_name") && g.DisplayName != "Lake trip 🚣" || !g.Archived {
				t.Errorf("group display name/archived = %q/%v", g.DisplayName, g.Archived)
			}

			got, _ := readAll(t, r)
			m := func(guid string) model.Message {
				t.Helper()
				v, ok := got[guid]
				if !ok {
					t.Fatalf("message %s not read", guid)
				}
				return v
			}

			p := m("M-PLAIN")
			if p.Text != "Are we still on for Thursday?" || p.TextSource != TextColumn || p.Sender != "+15551230001" || p.FromMe ||
				!p.Time.Equal(at(0)) || !p.TimeRead.Equal(at(2)) || !slices.Equal(p.ConversationIDs, []string{gDirect}) || p.Kind != model.MsgText ||
				p.Service != "iMessage" || p.Source != model.SourceIMessage {
				t.Errorf("M-PLAIN = %+v", p)
			}
			if sent := m("M-SENT"); !sent.FromMe || sent.Sender != "" || !sent.IsSent || !sent.IsDelivered || !sent.TimeDelivered.Equal(at(3).Add(2*time.Second)) {
				t.Errorf("M-SENT = %+v", sent)
			}
			if sec := m("M-SECONDS"); !sec.Time.Equal(at(4)) {
				t.Errorf("seconds-valued date read as %v, want %v", sec.Time, at(4))
			}
			if fl := m("M-FAILED"); fl.Error != 22 || !fl.FromMe {
				t.Errorf("M-FAILED = %+v", fl)
			}
			if g := m("M-GROUP-IN"); g.Sender != "carol@example.com" || !slices.Equal(g.ConversationIDs, []string{gGroup}) {
				t.Errorf("M-GROUP-IN = %+v", g)
			}
			if g := m("M-GROUP-H0"); !g.FromMe || g.Sender != "" {
				t.Errorf("handle 0 in a group must be the owner: %+v", g)
			}
			if ms := m("M-TWO-CHATS"); !slices.Equal(ms.ConversationIDs, []string{gGroup, gDirect}) {
				t.Errorf("M-TWO-CHATS conversations = %v, want both", ms.ConversationIDs)
			}
			if o := m("M-ORPHAN"); len(o.ConversationIDs) != 0 || o.ConversationIDs == nil || o.Sender != "+15551230002" {
				t.Errorf("orphan = %+v (want empty, non-nil ConversationIDs)", o)
			}
			if sms := m("M-SMS"); sms.Service != "SMS" || !slices.Equal(sms.ConversationIDs, []string{gTwoPeople}) {
				t.Errorf("M-SMS = %+v", sms)
			}

			// Attachments, in attachment ROWID order, names never paths.
			att := m("M-ATTACH").Attachments
			wantAtt := []model.Attachment{
				{ID: "at_0_JPEG", RowID: s.attJPEG, Filename: "IMG_0042.jpeg", MimeType: "image/jpeg", UTI: "public.jpeg", Size: 48213},
				{ID: "at_1_STICKER", RowID: s.attSticker, Filename: "sticker.heic", MimeType: "image/heic", UTI: "public.heic", Size: 24560, Sticker: true},
			}
			if !f.has("attachment", "total_bytes") {
				wantAtt[0].Size, wantAtt[1].Size = 0, 0
			}
			if !f.has("attachment", "is_sticker") {
				wantAtt[1].Sticker = false
			}
			if !reflect.DeepEqual(att, wantAtt) {
				t.Errorf("attachments =\n %+v\nwant\n %+v", att, wantAtt)
			}

			if caps.Reactions {
				wantR := map[string]model.Reaction{
					"M-LOVE":           {Target: "M-PLAIN", TargetPart: 0, Type: model.ReactLove},
					"M-UNLIKE":         {Target: "M-GROUP-ME", TargetPart: 1, Type: model.ReactLike, Removed: true},
					"M-EMOJI":          {Target: "M-GROUP-ME", Type: model.ReactEmoji},
					"M-STICKER-TB":     {Target: "M-GROUP-IN", Type: model.ReactSticker},
					"M-STICKER-PLACED": {Target: "M-SENT", Type: model.ReactSticker},
					"M-POLL-VOTE":      {Target: "M-GROUP-IN", Type: model.ReactPollVote},
				}
				if caps.ReactionEmoji {
					e := wantR["M-EMOJI"]
					e.Emoji = "🔥"
					wantR["M-EMOJI"] = e
				}
				for _, g := range sortedKeys(wantR) {
					msg := m(g)
					if msg.Kind != model.MsgReaction || msg.Reaction == nil || *msg.Reaction != wantR[g] {
						t.Errorf("%s: kind %s reaction %+v, want %+v", g, msg.Kind, msg.Reaction, wantR[g])
					}
				}
			} else if k := m("M-LOVE").Kind; k != model.MsgText {
				t.Errorf("without reaction columns a tapback row is plain text, got %s", k)
			}

			if caps.Replies {
				if rp := m("M-REPLY"); rp.ReplyTo != "M-PLAIN" || rp.ReplyToPart != 0 {
					t.Errorf("reply = %q part %d", rp.ReplyTo, rp.ReplyToPart)
				}
			}
			if caps.Retractions {
				u := m("M-UNSENT")
				if !u.Unsent || !slices.Equal(u.UnsentParts, []int{0}) || !u.TimeUnsent.Equal(at(18)) || u.TextSource != TextNone {
					t.Errorf("M-UNSENT = %+v", u)
				}
				pu := m("M-PARTLY")
				if pu.Unsent || !slices.Equal(pu.UnsentParts, []int{1}) || pu.Text != "hello" {
					t.Errorf("M-PARTLY = %+v", pu)
				}
				if sp := m("M-SUMMARY-PLAIN"); sp.Edited || sp.Unsent || len(sp.UnsentParts) != 0 {
					t.Errorf("plain summary read as an edit: %+v", sp)
				}
			}

			if caps.GroupEvents {
				wantE := map[string]model.GroupEvent{
					"E-ADD":    {Type: model.GroupMemberAdded, Other: "+33612345678"},
					"E-REMOVE": {Type: model.GroupMemberRemoved, Other: "+33612345678"},
					"E-RENAME": {Type: model.GroupRenamed, Title: "Lake trip 🚣"},
					"E-LEFT":   {Type: model.GroupMemberLeft},
					"E-ICON":   {Type: model.GroupIconChanged},
					"E-BG":     {Type: model.GroupBackgroundChanged},
					"E-NUMBER": {Type: model.GroupNumberChanged, Other: "+33612345678"},
				}
				for _, g := range sortedKeys(wantE) {
					e := m(g)
					if e.Kind != model.MsgGroupEvent || e.GroupEvent == nil || *e.GroupEvent != wantE[g] {
						t.Errorf("%s: kind %s event %+v, want %+v", g, e.Kind, e.GroupEvent, wantE[g])
					}
				}
				if e := m("E-REMOVE"); !e.FromMe {
					t.Errorf("E-REMOVE by the owner: FromMe false")
				}
				if loc := m("E-LOCATION"); loc.Kind != model.MsgOther || loc.Detail != "shared_location" {
					t.Errorf("E-LOCATION = %s/%s", loc.Kind, loc.Detail)
				}
			}
			if caps.Balloons {
				if a := m("M-APPLEPAY"); a.Kind != model.MsgApp || a.App != "com.apple.PassbookUIService.PeerPaymentMessagesExtension" {
					t.Errorf("M-APPLEPAY = %s %q", a.Kind, a.App)
				}
				if a := m("M-LINK"); a.Kind != model.MsgApp || a.App != "com.apple.messages.URLBalloonProvider" || a.Text != "https://example.com/menu" {
					t.Errorf("M-LINK = %s %q %q", a.Kind, a.App, a.Text)
				}
			}
			if caps.Effects {
				if e := m("M-EFFECT"); e.Effect != "com.apple.messages.effect.CKConfettiEffect" {
					t.Errorf("effect = %q", e.Effect)
				}
			}
			if caps.RecentlyDeleted {
				rd := m("M-RECENTLY-DELETED")
				if !rd.RecentlyDeleted || !slices.Equal(rd.ConversationIDs, []string{gDirect}) {
					t.Errorf("recently deleted = %+v", rd)
				}
				if m("M-PLAIN").RecentlyDeleted {
					t.Error("M-PLAIN marked recently deleted")
				}
			}

			// attributedBody rows.
			if b := m("B-RUNS"); b.Text != link || b.TextSource != TextAttributedBody || !reflect.DeepEqual(b.Runs, []model.Run{
				{Start: 0, End: 4}, {Start: 4, End: 9, Mention: "carol@example.com"}, {Start: 9, End: 25},
				{Start: 25, End: len(link), Link: "https://tix.example.com/42"}}) {
				t.Errorf("B-RUNS = %q %s %+v", b.Text, b.TextSource, b.Runs)
			}
			if b := m("B-OTC"); b.Text != otc || len(b.Runs) != 3 || !b.Runs[1].OneTimeCode || b.Text[b.Runs[1].Start:b.Runs[1].End] != "482913" {
				t.Errorf("B-OTC = %q %+v", b.Text, b.Runs)
			}
			if b := m("B-MULTIPART"); b.Text != multi || !reflect.DeepEqual(b.Runs, []model.Run{
				{Start: 0, End: 3, Part: 0, AttachmentID: "at_0_JPEG", Filename: "IMG_0042.jpeg"}, {Start: 3, End: len(multi), Part: 1}}) {
				t.Errorf("B-MULTIPART = %q %+v", b.Text, b.Runs)
			}
			if b := m("B-LONG"); b.Text != longText || b.Runs != nil {
				t.Errorf("B-LONG: %d bytes back of %d, runs %v", len(b.Text), len(longText), b.Runs)
			}
			if b := m("B-BROKEN"); b.Text != "fallback text" || b.TextSource != TextUndecodable {
				t.Errorf("B-BROKEN = %q %s", b.Text, b.TextSource)
			}
			if caps.Edits {
				e := m("B-EDITED")
				wantEdits := []model.Edit{{Part: 0, Time: appleSeconds(731514600.25), Text: "First message  "}, {Part: 0, Time: appleSeconds(731514660.5), Text: "Edited message"}}
				if e.Text != "Edited message" || !e.Edited || !e.TimeEdited.Equal(at(46)) || !reflect.DeepEqual(e.Edits, wantEdits) {
					t.Errorf("B-EDITED = %q edited %v at %v edits %+v", e.Text, e.Edited, e.TimeEdited, e.Edits)
				}
			}

			// Attachment lookup resolves the path, only there.
			a, err := r.Attachment(ctx, s.attJPEG)
			if err != nil {
				t.Fatal(err)
			}
			// A database outside ~/Library/Messages is a copy: "~/Library/Messages/…"
			// resolves next to it, never into the live user's folder.
			if want := filepath.Join(filepath.Dir(f.path), "Attachments", "ab", "11", "at_0_JPEG", "IMG_0042.jpeg"); a.Path != want {
				t.Errorf("attachment path = %q, want %q", a.Path, want)
			}
			if a.Filename != "IMG_0042.jpeg" || a.RowID != s.attJPEG {
				t.Errorf("attachment = %+v", a)
			}
			if _, err := r.Attachment(ctx, 999999); !errors.Is(err, ErrNotFound) {
				t.Errorf("missing attachment: err = %v, want ErrNotFound", err)
			}
			if _, err := r.MessageByGUID(ctx, "nope"); !errors.Is(err, ErrNotFound) {
				t.Errorf("missing message: err = %v, want ErrNotFound", err)
			}
			if one, err := r.MessageByGUID(ctx, "M-ATTACH"); err != nil || len(one.Attachments) != 2 {
				t.Errorf("MessageByGUID(M-ATTACH) = %+v, %v", one, err)
			}
		})
	}
}
