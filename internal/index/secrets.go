package index

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
)

// Secrets are never searchable, whatever found them. codes.go blanks the
// one-time codes Apple marks; the same holds for everything the output
// boundary's redactor masks (codes found by its rules, card numbers, SSNs,
// keys, account numbers, IBANs, addresses, dates of birth): if they were
// indexed, search would be an oracle — results, scores and candidate
// counts for "4111 1111 1111 1111" would differ from those for a wrong
// guess, though every output masks the number. So the text stored for the
// full-text index, the vocabulary, substring search and the embedder has
// every such span replaced by spaces, and the display text is kept in the
// message's extra record (the output boundary redacts it on the way out).
// Every class is blanked, whatever the redaction configuration says: the
// index does not depend on it, and a class switched off for output shows
// its values without making them searchable.

// indexRedactor finds the spans to blank: every class on.
var indexRedactor = redact.Default()

// mayHoldSecret is the cheap pre-check before the redactor: what it masks
// holds a decimal digit of any script (class Nd: ASCII, full-width,
// Arabic-Indic, Devanagari …, which the redactor reads as ASCII)
// or is a key-like token without one (a vendor token such as "ghp_…" or
// "hf_…", a private key block's base64): a run of at least keyRunMin
// letters, digits and "_-+/=". A text with neither is skipped. Separators
// do not matter here: a card written with en dashes, Unicode spaces or a
// line break between its groups, or a code spaced out digit by digit, still
// holds digits (docs/redaction.md, "Separators").
// TestSecretsNeedDigits checks this over the redactor's evaluation corpus,
// TestSecretSpellingsBlanked over those spellings.
func mayHoldSecret(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			return true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == '+' || c == '/' || c == '=':
			if run++; run >= keyRunMin {
				return true
			}
			continue
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(s[i:])
			if unicode.IsDigit(r) {
				return true
			}
			i += w - 1
		}
		run = 0
	}
	return false
}

// keyRunMin is the shortest run of token characters the pre-check sends
// to the redactor (the shortest digitless key in gitleaks' rules the
// redactor uses is well above it; a private key's base64 lines are 64).
const keyRunMin = 20

// indexedText returns the text stored and indexed for a message whose
// display text is text: one-time-code runs (maskCodes) and every span the
// redactor finds replaced by spaces, so the result has text's length and
// offsets. Text with nothing to blank is returned as is.
func indexedText(text string, runs []model.Run) string {
	masked := maskCodes(text, runs)
	codes := model.OneTimeCodeRanges(text, runs)
	if len(codes) == 0 && !mayHoldSecret(text) {
		return masked
	}
	return blankFindings(text, masked, codes)
}

// blankSecrets returns s with every span the redactor finds replaced by
// spaces (for subjects and transcriptions, which have no runs).
func blankSecrets(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return blankFindings(s, s, nil)
}

// blankFindings runs the redactor over text (codes: its one-time-code
// ranges, so repeats of a code are found too) and blanks the findings in
// dst, which has text's length.
func blankFindings(text, dst string, codes [][2]int) string {
	_, fs := indexRedactor.Redact(text, redact.Hints{OneTimeCodes: codes})
	if len(fs) == 0 {
		return dst
	}
	b := []byte(dst)
	for _, f := range fs {
		s, e := max(f.Start, 0), min(f.End, len(b))
		// Whole characters only (offsets refer to valid UTF-8 text, which
		// fold.Sanitize guarantees; widen defensively).
		for s > 0 && s < len(b) && !isRuneStart(b[s]) {
			s--
		}
		for e > 0 && e < len(b) && !isRuneStart(b[e]) {
			e++
		}
		for i := s; i < e; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

// secretsMaskedKey is the meta key recording that rows stored before
// secrets were blanked have been rewritten.
const secretsMaskedKey = "secrets_masked"

// maskStoredSecrets rewrites, once per index, the messages stored before
// secrets were blanked (secrets.go): their stored text and search_extra
// are blanked, the display text moves to the extra record, their
// full-text rows, document frequencies and lengths are replaced, and
// their vectors are queued for re-embedding. It reads every message once,
// in one transaction, and scrubs the FTS index afterwards (old segments
// still hold the secrets' postings). Callers hold writeMu.
func (ix *Index) maskStoredSecrets(ctx context.Context) error {
	done, err := getMetaInt(ctx, ix.wdb, secretsMaskedKey)
	if err != nil || done == 1 {
		return err
	}
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("mask stored secrets: %w", err)
	}
	defer tx.Rollback() // a no-op once committed
	if err := ix.refreshTx(ctx, tx); err != nil {
		return err
	}
	type row struct {
		id                  int64
		text, extra, search string
		searchable          bool
	}
	var todo []row
	rows, err := tx.QueryContext(ctx, "SELECT id, text, coalesce(extra, ''), coalesce(search_extra, ''), searchable FROM messages")
	if err != nil {
		return fmt.Errorf("mask stored secrets: %w", err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.text, &r.extra, &r.search, &r.searchable); err != nil {
			rows.Close()
			return fmt.Errorf("mask stored secrets: %w", err)
		}
		// Only rows the redactor could change (the extra record holds the
		// display text of rows with a code run).
		if mayHoldSecret(r.text) || mayHoldSecret(r.search) || strings.Contains(r.extra, `"text":`) {
			todo = append(todo, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mask stored secrets: %w", err)
	}
	w := storedRewrite{df: map[string]int32{}}
	for _, r := range todo {
		var x messageExtra
		if r.extra != "" {
			if err := json.Unmarshal([]byte(r.extra), &x); err != nil {
				continue // unreadable: left as it is
			}
		}
		display := r.text
		if x.Text != "" {
			display = x.Text
		}
		stored, search := indexedText(display, x.Runs), blankSecrets(r.search)
		if stored == r.text && search == r.search {
			continue
		}
		extra := r.extra
		if stored != display && x.Text == "" {
			x.Text = display
			b, err := json.Marshal(x)
			if err != nil {
				return fmt.Errorf("mask stored secrets: %w", err)
			}
			extra = string(b)
		}
		var searchArg any
		if search != "" {
			searchArg = search
		}
		if _, err := tx.ExecContext(ctx, "UPDATE messages SET text = ?, extra = ?, search_extra = ? WHERE id = ?", stored, extra, searchArg, r.id); err != nil {
			return fmt.Errorf("mask stored secrets: %w", err)
		}
		if !r.searchable {
			continue
		}
		if err := w.reindex(ctx, tx, r.id, r.text, r.search, stored, search); err != nil {
			return fmt.Errorf("mask stored secrets: %w", err)
		}
	}
	return ix.finishRewrite(ctx, tx, &w, secretsMaskedKey, "secrets removed from the search index")
}
