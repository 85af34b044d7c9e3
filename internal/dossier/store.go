package dossier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Store keeps dossiers between calls. The index implements it on its
// dossiers table (key, conv, data, upto, updated).
type Store interface {
	// LoadDossier returns the stored JSON of a dossier, or nil and no
	// error when there is none.
	LoadDossier(ctx context.Context, key string) ([]byte, error)
	// SaveDossier stores the JSON, replacing any previous version.
	// conversations are the conversation ids the dossier was built from,
	// so purging one of them can delete the dossier (it is then rebuilt
	// from what remains).
	SaveDossier(ctx context.Context, key string, conversations []string, upTo Cursor, data []byte) error
}

// Feed delivers a subject's messages: the messages of their direct
// conversations (and optionally their own group messages, Group set)
// strictly after a cursor, oldest first. The zero cursor means all.
type Feed interface {
	Messages(ctx context.Context, subject Subject, after Cursor, fn func(Message) error) error
}

// Marshal serialises a dossier for a Store.
func (d *Dossier) Marshal() ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("dossier %s: encode: %w", d.Subject.Key, err)
	}
	return b, nil
}

// Unmarshal reads a stored dossier. A dossier of another Version is an
// error wrapping ErrRebuild.
func Unmarshal(data []byte) (*Dossier, error) {
	var d Dossier
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("dossier: decode: %w", err)
	}
	if d.Version != Version {
		return nil, fmt.Errorf("dossier: stored version %d, want %d: %w", d.Version, Version, ErrRebuild)
	}
	if d.State.Topics == nil {
		d.State.Topics = map[string]*Topic{}
	}
	return &d, nil
}

// RefreshOptions configure Refresh.
type RefreshOptions struct {
	Options
	// Rebuild ignores the stored state (after an edit, unsend or deletion
	// of a message it already holds).
	Rebuild bool
}

// Refresh brings a subject's stored dossier up to date: it loads it,
// folds in the messages the feed has after its cursor, and saves it when
// anything changed. A missing, unreadable or outdated state, or messages
// that arrive before the cursor, lead to a full rebuild. It returns the
// dossier and whether it was rebuilt.
func Refresh(ctx context.Context, store Store, feed Feed, subject Subject, opts RefreshOptions) (*Dossier, bool, error) {
	var d *Dossier
	if !opts.Rebuild {
		data, err := store.LoadDossier(ctx, subject.Key)
		if err != nil {
			return nil, false, fmt.Errorf("load dossier %s: %w", subject.Key, err)
		}
		if data != nil {
			if d, err = Unmarshal(data); err != nil && !errors.Is(err, ErrRebuild) {
				// A corrupt state is rebuilt, not fatal: the messages are
				// the source of truth.
				d = nil
			}
		}
	}
	rebuilt := d == nil
	if d != nil {
		msgs, err := collect(ctx, feed, subject, d.UpTo)
		if err != nil {
			return nil, false, err
		}
		if len(msgs) == 0 && d.Subject.Key == subject.Key {
			return d, false, nil
		}
		if err := d.Update(subject, msgs, opts.Options); err != nil {
			if !errors.Is(err, ErrRebuild) {
				return nil, false, err
			}
			d, rebuilt = nil, true
		}
	}
	if d == nil {
		msgs, err := collect(ctx, feed, subject, Cursor{})
		if err != nil {
			return nil, false, err
		}
		d = Build(subject, msgs, opts.Options)
	}
	data, err := d.Marshal()
	if err != nil {
		return nil, false, err
	}
	var convs []string
	for _, c := range d.Background.Conversations {
		convs = append(convs, c.Name)
	}
	if err := store.SaveDossier(ctx, subject.Key, convs, d.UpTo, data); err != nil {
		return nil, false, fmt.Errorf("save dossier %s: %w", subject.Key, err)
	}
	return d, rebuilt, nil
}

func collect(ctx context.Context, feed Feed, subject Subject, after Cursor) ([]Message, error) {
	var msgs []Message
	err := feed.Messages(ctx, subject, after, func(m Message) error {
		msgs = append(msgs, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read messages for dossier %s: %w", subject.Key, err)
	}
	return msgs, nil
}
