package triage

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testfixture"
)

// The labelled set's file format (testdata/labelled.json).
type labelledFile struct {
	Now   time.Time `json:"now"`
	Owner struct {
		Handles []string `json:"handles"`
		Names   []string `json:"names"`
	} `json:"owner"`
	Threads []labelledThread `json:"threads"`
}

type labelledThread struct {
	ID        string `json:"id"`
	Label     Bucket `json:"label"`
	Rationale string `json:"rationale"`
	Chat      struct {
		ChatID       string        `json:"chat_id"`
		Kind         string        `json:"kind"`
		Known        bool          `json:"known"`
		Name         string        `json:"name"`
		Participants []Participant `json:"participants"`
	} `json:"chat"`
	Messages []fixtureMessage `json:"messages"`
}

type fixtureMessage struct {
	ID          string `json:"id"`
	Ago         string `json:"ago"`
	From        string `json:"from"`
	Text        string `json:"text"`
	Error       int    `json:"error"`
	Unsent      bool   `json:"unsent"`
	ReplyTo     string `json:"reply_to"`
	Mention     string `json:"mention"`
	Link        string `json:"link"`
	OTC         bool   `json:"otc"`
	Attachments int    `json:"attachments"`
	Reactions   []struct {
		From string `json:"from"`
		Type string `json:"type"`
		Ago  string `json:"ago"`
	} `json:"reactions"`
}

func loadLabelled(t testing.TB, path string) (labelledFile, []Thread, Options) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f labelledFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	opts := Options{Now: f.Now, Owner: Owner{Handles: f.Owner.Handles, Names: f.Owner.Names}}
	threads := make([]Thread, len(f.Threads))
	for i, lt := range f.Threads {
		th, err := lt.thread(f)
		if err != nil {
			t.Fatalf("%s: %v", lt.ID, err)
		}
		threads[i] = th
	}
	return f, threads, opts
}

func (lt labelledThread) thread(f labelledFile) (Thread, error) {
	c := lt.Chat
	th := Thread{ChatID: c.ChatID, Kind: model.ConversationKind(c.Kind), Known: c.Known, Participants: c.Participants,
		Label: c.Name, ContactName: c.Name}
	if th.Kind == "" {
		th.Kind = model.KindDirect
	}
	if th.Kind == model.KindGroup {
		th.DisplayName, th.ContactName = c.Name, ""
	} else if len(th.Participants) == 0 {
		th.Participants = []Participant{{Handle: c.ChatID, Name: c.Name}}
	}
	handleOf := func(from string) (string, bool, error) {
		switch {
		case from == "me":
			return "", true, nil
		case from == "them" && th.Kind != model.KindGroup:
			return c.ChatID, false, nil
		}
		for _, p := range th.Participants {
			if strings.EqualFold(firstWord(p.Name), from) || p.Name == from {
				return p.Handle, false, nil
			}
		}
		return "", false, fmt.Errorf("unknown sender %q", from)
	}
	for j, fm := range lt.Messages {
		ago, err := testfixture.ParseAgo(fm.Ago)
		if err != nil {
			return th, err
		}
		sender, me, err := handleOf(fm.From)
		if err != nil {
			return th, err
		}
		id := fm.ID
		if id == "" {
			id = fmt.Sprintf("%s/m%d", lt.ID, j+1)
		}
		m := Message{ID: id, Time: f.Now.Add(-ago), FromMe: me, Sender: sender, Kind: model.MsgText, Text: fm.Text,
			Error: fm.Error, Unsent: fm.Unsent, ReplyTo: fm.ReplyTo, Attachments: fm.Attachments}
		if fm.Mention != "" {
			h := fm.Mention
			if h == "me" {
				h = f.Owner.Handles[0]
			}
			m.Runs = append(m.Runs, model.Run{Part: 0, Mention: h})
		}
		if fm.Link != "" {
			m.Runs = append(m.Runs, model.Run{Part: 0, Link: fm.Link})
		}
		if fm.OTC {
			m.Runs = append(m.Runs, model.Run{Part: 0, OneTimeCode: true})
		}
		for _, r := range fm.Reactions {
			rago, err := testfixture.ParseAgo(r.Ago)
			if err != nil {
				return th, err
			}
			rs, rme, err := handleOf(r.From)
			if err != nil {
				return th, err
			}
			m.Reactions = append(m.Reactions, Reaction{FromMe: rme, Sender: rs, Type: model.ReactionType(r.Type), Time: f.Now.Add(-rago)})
		}
		th.Messages = append(th.Messages, m)
	}
	if th.Kind == model.KindDirect {
		_, th.SenderKind = contacts.Normalize(c.ChatID, "US")
	}
	return th, nil
}
