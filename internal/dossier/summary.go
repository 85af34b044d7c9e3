package dossier

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/policy/redact"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// SummaryConfig configures the optional generated summary: an
// OpenAI-compatible chat endpoint (POST …/v1/chat/completions). It is off
// unless URL and Model are set.
type SummaryConfig struct {
	// URL is the API base ("http://127.0.0.1:11434/v1") or the full
	// chat/completions URL. http and https only.
	URL   string
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Timeout bounds one request (default 30 s).
	Timeout time.Duration
	// MaxTokens bounds the answer (default 300).
	MaxTokens int
	// Client is the HTTP client (default: one with Timeout).
	Client *http.Client
}

// Enabled reports whether a summary endpoint is configured.
func (c SummaryConfig) Enabled() bool { return c.URL != "" && c.Model != "" }

// Summary is a short generated text over a dossier. It is never part of
// the extractive findings and always says it was generated.
type Summary struct {
	Text      string    `json:"text"`
	Generated bool      `json:"generated"`
	Model     string    `json:"model"`
	CreatedAt time.Time `json:"created_at"`
	// UpTo is the dossier state the summary was written from.
	UpTo Cursor `json:"up_to"`
	// Cites are the messages whose extracted facts were in the prompt; the
	// summary can rest on nothing else.
	Cites []string `json:"cites"`
}

// Summarizer writes summaries through an OpenAI-compatible endpoint.
type Summarizer struct {
	cfg      SummaryConfig
	endpoint string
	client   *http.Client
	now      func() time.Time
}

// Limits of the exchange with the endpoint.
const (
	maxSummaryResponse = 1 << 20 // bytes read from the endpoint
	maxSummaryText     = 1200    // runes kept of the answer
)

// NewSummarizer validates cfg and returns a Summarizer.
func NewSummarizer(cfg SummaryConfig) (*Summarizer, error) {
	if !cfg.Enabled() {
		return nil, errors.New("dossier summary: URL and model are required")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("dossier summary: %q is not an http(s) URL", cfg.URL)
	}
	endpoint := strings.TrimRight(cfg.URL, "/")
	if !strings.HasSuffix(endpoint, "/chat/completions") {
		endpoint += "/chat/completions"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 300
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{Timeout: cfg.Timeout}
	}
	return &Summarizer{cfg: cfg, endpoint: endpoint, client: client, now: time.Now}, nil
}

const summarySystem = `You write a short factual summary (at most 5 sentences) of a person's relationship with the user, ` +
	`from the extracted facts given. Use only those facts; do not invent. ` +
	sanitize.UntrustedNotice

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens"`
	Temperature float64       `json:"temperature"`
	Stream      bool          `json:"stream"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message chatMessage `json:"message"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Summarize asks the endpoint for a summary of the report. Message text
// in the prompt is redacted and wrapped as untrusted content.
func (s *Summarizer) Summarize(ctx context.Context, r Report) (*Summary, error) {
	prompt, cites := summaryPrompt(r)
	body, err := json.Marshal(chatRequest{Model: s.cfg.Model, MaxTokens: s.cfg.MaxTokens, Messages: []chatMessage{
		{Role: "system", Content: summarySystem},
		{Role: "user", Content: prompt},
	}})
	if err != nil {
		return nil, fmt.Errorf("dossier summary: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("dossier summary: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if s.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.APIKey)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dossier summary: request: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxSummaryResponse+1))
	if err != nil {
		return nil, fmt.Errorf("dossier summary: read answer: %w", err)
	}
	if len(raw) > maxSummaryResponse {
		return nil, errors.New("dossier summary: answer larger than 1 MiB")
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("dossier summary: endpoint answered %s: %s", resp.Status, clip(string(raw), 200))
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return nil, fmt.Errorf("dossier summary: malformed answer: %w", err)
	}
	if cr.Error != nil {
		return nil, fmt.Errorf("dossier summary: endpoint error: %s", clip(cr.Error.Message, 200))
	}
	if len(cr.Choices) == 0 || strings.TrimSpace(cr.Choices[0].Message.Content) == "" {
		return nil, errors.New("dossier summary: the endpoint returned no text")
	}
	text := strings.TrimSpace(cr.Choices[0].Message.Content)
	if utf8.RuneCountInString(text) > maxSummaryText {
		text = string([]rune(text)[:maxSummaryText-1]) + "…"
	}
	model := s.cfg.Model
	if cr.Model != "" {
		model = cr.Model
	}
	return &Summary{Text: text, Generated: true, Model: model, CreatedAt: s.now().UTC(), UpTo: r.UpTo, Cites: cites}, nil
}

// summaryPrompt lists the report's extracted facts. Text written by the
// person (commitment sentences, excerpts) is redacted and wrapped.
func summaryPrompt(r Report) (string, []string) {
	var b strings.Builder
	var cites []string
	cite := func(ids ...string) {
		cites = appendUnique(cites, ids...)
	}
	untrusted := func(s string) string { return sanitize.Wrap(redact.Default().RedactText(s, nil)) }
	fmt.Fprintf(&b, "Person: %s\n", untrusted(r.Subject.Name))
	bg := r.Background
	if bg.FirstContact != nil {
		fmt.Fprintf(&b, "First contact: %s; last contact: %s; messages sent by the user: %d, received: %d.\n",
			bg.FirstContact.Time.Format("2006-01-02"), bg.LastContact.Time.Format("2006-01-02"), bg.Sent, bg.Received)
		cite(bg.FirstContact.ID, bg.LastContact.ID)
	}
	section := func(title string, cs []Commitment) {
		if len(cs) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, c := range cs {
			due := ""
			if c.Due != nil {
				due = " due " + c.Due.Start.Format("2006-01-02 15:04")
			}
			fmt.Fprintf(&b, "- %s by %s (%s%s): %s\n", c.Kind, c.Owner, c.Status, due, untrusted(c.Text))
			cite(c.Sources...)
			cite(c.ResolvedBy...)
		}
	}
	section("Open commitments", r.Active)
	section("Commitments past their date", r.Past)
	section("Settled commitments", r.Resolved)
	if len(r.History.Topics) > 0 {
		var ts []string
		for _, t := range r.History.Topics {
			ts = append(ts, t.Term)
			cite(t.Cites...)
		}
		fmt.Fprintf(&b, "Recurring topics: %s\n", untrusted(strings.Join(ts, ", ")))
	}
	if t := r.History.ResponseTrend; t.Direction != "unknown" {
		fmt.Fprintf(&b, "User's reply speed: %s (%s).\n", t.Direction, t.Explanation)
	}
	if ex := r.History.LastSignificant; ex != nil {
		fmt.Fprintf(&b, "Last significant exchange on %s (%d messages): %s\n", ex.Start.Format("2006-01-02"), ex.Messages, untrusted(ex.Excerpt))
		cite(ex.ExcerptID)
	}
	return b.String(), cites
}
