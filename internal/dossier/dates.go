package dossier

import (
	"time"

	"github.com/tidings-mcp/tidings/internal/dates"
)

// Due is when a commitment is due, read from the words of the message and
// resolved against the message's time in the owner's time zone.
type Due struct {
	// Phrase is the text it was read from ("Thursday at 3", "next week").
	Phrase string `json:"phrase"`
	// Start and End bound the moment or period; after End the commitment
	// is past.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Precision is "time", "day", "days" (a range), "weekend", "week" or
	// "month".
	Precision string `json:"precision"`
}

// dueReading is how a sentence names a due date: counted forward from the
// message, the first kind of date phrase it names winning, a clock time
// setting its hour. The grammar is internal/dates' (docs/dossier.md).
var dueReading = dates.Options{Direction: dates.Future, Pick: dates.FirstKind}

// parseDue reads a due date or time from a lower-cased sentence written at
// ref (in loc). It returns nil when the sentence names no date or time.
func parseDue(s string, ref time.Time, loc *time.Location) *Due {
	ps := dates.Parse(s, ref.In(loc), dueReading)
	if len(ps) == 0 {
		return nil
	}
	p := ps[0]
	return &Due{Phrase: p.Text, Start: p.Range.From, End: p.Range.To, Precision: p.Precision}
}
