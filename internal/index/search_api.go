package index

import (
	"errors"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Mode selects how Search matches.
type Mode string

// Search modes.
const (
	// ModeHybrid fuses fulltext and semantic ranks (reciprocal rank
	// fusion, k = 60). It is the default. Without ready vectors it runs
	// fulltext alone and says so.
	ModeHybrid Mode = "hybrid"
	// ModeFulltext ranks by BM25 over words: stop-words dropped, words
	// matched with their inflections, unknown words matched to close
	// spellings, any word may match (more matching words rank higher),
	// "quoted phrases" must appear, relative dates become filters.
	ModeFulltext Mode = "fulltext"
	// ModeSubstring finds messages containing the query text (case- and
	// diacritic-insensitive), newest first: the bridge's search.
	ModeSubstring Mode = "substring"
	// ModeSemantic ranks by embedding similarity alone.
	ModeSemantic Mode = "semantic"
)

// RRFK is the reciprocal rank fusion constant.
const RRFK = 60

// MaxLimit bounds Query.Limit; MaxDepth bounds how deep ranked results can
// be paged (Cursor).
const (
	DefaultLimit = 10
	MaxLimit     = 100
	MaxDepth     = 500
)

// Query is a search request. Filters combine with AND.
type Query struct {
	// Text is the query: a natural question, words, "a quoted phrase", or
	// for substring mode the exact text to find.
	Text string `json:"text"`
	Mode Mode   `json:"mode,omitempty"`
	// ConversationID restricts to one conversation: its id, its chat
	// identifier, or anything ResolveConversations accepts.
	ConversationID string `json:"conversation_id,omitempty"`
	// Contact restricts to conversations with a person: a name, a phone
	// number in any format, or an email address.
	Contact string `json:"contact,omitempty"`
	// Handles restricts to conversations with any of these handles.
	Handles []string `json:"handles,omitempty"`
	// Days restricts to the last N days; Since and Until to a range
	// (Until exclusive). Relative dates in Text ("last week") narrow
	// further unless LiteralDates is set.
	Days  int       `json:"days,omitempty"`
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// FromMe keeps only messages sent by the owner (true) or by others
	// (false).
	FromMe *bool `json:"from_me,omitempty"`
	// Limit is the page size (default 10, at most 100).
	Limit int `json:"limit,omitempty"`
	// Cursor continues a previous Result (Result.NextCursor).
	Cursor string `json:"cursor,omitempty"`
	// Explain adds each signal's rank and score to every hit.
	Explain bool `json:"explain,omitempty"`
	// LiteralDates keeps date words in Text as ordinary words.
	LiteralDates bool `json:"literal_dates,omitempty"`
}

// Signal is one ranking signal's view of a hit.
type Signal struct {
	// Rank is 1-based within the signal's own ranking.
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
}

// Explanation tells how a hit was ranked.
type Explanation struct {
	Fulltext *Signal `json:"fulltext,omitempty"`
	Semantic *Signal `json:"semantic,omitempty"`
	// Fused is the hybrid score: the sum of 1/(RRFK+rank) over signals.
	Fused float64 `json:"fused,omitempty"`
	// Matched lists the index terms that matched (fulltext).
	Matched []string `json:"matched,omitempty"`
}

// Hit is one search result.
type Hit struct {
	MessageID    string          `json:"message_id"`
	Source       string          `json:"source"`
	Conversation ConversationRef `json:"conversation"`
	Sender       string          `json:"sender,omitempty"`
	SenderName   string          `json:"sender_name,omitempty"`
	FromMe       bool            `json:"from_me"`
	Time         time.Time       `json:"time"`
	// Text is the message's full text, as Message.Text; Runs are its
	// attribute runs (as Message.Runs), so output masks one-time codes in
	// search results exactly as in history. The code ranges themselves are
	// never searched, matched or highlighted (see codes.go).
	Text string      `json:"text"`
	Runs []model.Run `json:"runs,omitempty"`
	// Attachments are the message's attachments, as Message.Attachments.
	Attachments []Attachment `json:"attachments,omitempty"`
	// Kind, IsRead and Error are as in Message: a hit's read state and
	// send failure read as they do in history.
	Kind   model.MessageKind `json:"kind,omitempty"`
	IsRead bool              `json:"is_read,omitempty"`
	Error  int               `json:"error,omitempty"`
	// Snippet is an excerpt of Text around the matches with each match
	// wrapped in SnippetOpen/SnippetClose and one-time codes blanked;
	// Highlights are the matches' byte ranges in Text.
	Snippet    string   `json:"snippet"`
	Highlights [][2]int `json:"highlights,omitempty"`
	// Score is the mode's score (BM25, cosine similarity, fused RRF; 0 in
	// substring mode, where order is by time).
	Score   float64      `json:"score"`
	Explain *Explanation `json:"explain,omitempty"`
}

// Snippet highlight markers.
const (
	SnippetOpen  = "**"
	SnippetClose = "**"
)

// SignalCoverage says how much of the scope a signal examined.
type SignalCoverage struct {
	// Complete is true when every message in scope was examined (for
	// semantic: every one has a vector and all were scored).
	Complete bool `json:"complete"`
	// Candidates is how many messages the signal considered.
	Candidates int `json:"candidates"`
	// Capped lists query terms whose postings were cut at the per-term cap
	// (fulltext): older matches of those words alone were not seen.
	Capped []string `json:"capped,omitempty"`
	// Unembedded counts messages in scope without a vector yet (semantic).
	Unembedded int `json:"unembedded,omitempty"`
	// Approximate is true when vectors were pre-filtered by 1-bit codes
	// and only the best candidates re-ranked exactly (semantic).
	Approximate bool   `json:"approximate,omitempty"`
	Note        string `json:"note,omitempty"`
}

// Coverage holds the coverage of each signal used.
type Coverage struct {
	Fulltext  *SignalCoverage `json:"fulltext,omitempty"`
	Semantic  *SignalCoverage `json:"semantic,omitempty"`
	Substring *SignalCoverage `json:"substring,omitempty"`
	// Searchable is the number of searchable messages in the index.
	Searchable int64 `json:"searchable"`
}

// TermMatch shows how one query word was matched.
type TermMatch struct {
	Word string `json:"word"`
	// Matches are the index terms searched for it, each with how it
	// relates ("exact", "stem", "prefix", "typo").
	Matches []string `json:"matches"`
	// DocFreq is the number of messages containing any match.
	DocFreq int64 `json:"doc_freq"`
}

// Interpretation is what Search understood of a natural query.
type Interpretation struct {
	Terms   []TermMatch `json:"terms,omitempty"`
	Phrases []string    `json:"phrases,omitempty"`
	// DateText is the date phrase applied as a filter (Since, Until): only
	// when the query asks for messages of a time window ("messages from
	// last week", "what did Sam say yesterday"). A named date that
	// describes the topic ("conference in January") is searched as words.
	DateText string    `json:"date_text,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	Until    time.Time `json:"until,omitzero"`
	// SoftDate is a relative date that describes the topic ("dinner last
	// week"): not a filter; messages sent then rank higher.
	SoftDate *SoftDate `json:"soft_date,omitempty"`
	// People are the contacts that query words named (words no message
	// contains, such as "Lukas" in "when is Lukas in town"): results are
	// limited to conversations with them.
	People []string `json:"people,omitempty"`
}

// SoftDate is a date range that ranks, not filters.
type SoftDate struct {
	Text  string    `json:"text"`
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// Result is Search's answer.
type Result struct {
	Query string `json:"query"`
	// Mode is the mode that ran; RequestedMode differs when hybrid or
	// semantic fell back to fulltext (see Notes).
	Mode          Mode  `json:"mode"`
	RequestedMode Mode  `json:"requested_mode"`
	Hits          []Hit `json:"hits"`
	// ScanComplete is true only when every signal examined everything in
	// scope. When false, Coverage says what was left out: a missing hit
	// may exist.
	ScanComplete   bool            `json:"scan_complete"`
	Coverage       Coverage        `json:"coverage"`
	Interpretation *Interpretation `json:"interpretation,omitempty"`
	// NextCursor fetches the next page; empty when there is none.
	NextCursor string   `json:"next_cursor,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// ErrBadQuery is wrapped by errors about invalid search input.
var ErrBadQuery = errors.New("invalid query")
