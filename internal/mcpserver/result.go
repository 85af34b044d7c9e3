package mcpserver

import (
	"encoding/json"
	"fmt"
)

// MaxResultBytes is the budget for one tool result's JSON. Clients move
// bigger results into files or drop them (docs/architecture.md, "Results
// stay under MaxResultBytes"), so list-shaped results are cut to fit and
// say so.
const MaxResultBytes = 40 << 10

// Page describes how a list in a result was cut. Embed it in list outputs
// (`Page` with `json:"page"`) so every cut is visible to the model.
type Page struct {
	Returned   int    `json:"returned"`
	Total      int    `json:"total,omitempty" jsonschema:"items available before cutting, when known"`
	Truncated  bool   `json:"truncated"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"pass back to continue where this page stopped"`
	Note       string `json:"note,omitempty"`
}

// FitItems returns how many leading items fit in budget bytes of JSON
// together with reserve bytes for the rest of the result. It always keeps
// at least one item when there is one, so a single oversize item is still
// returned (its producer should shorten it) rather than looping forever.
func FitItems[T any](items []T, budget, reserve int) (int, error) {
	used := reserve + 2 // brackets
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return 0, fmt.Errorf("measure result item %d: %w", i, err)
		}
		used += len(b) + 1 // comma
		if used > budget && i > 0 {
			return i, nil
		}
	}
	return len(items), nil
}

// Cut keeps the items that fit in MaxResultBytes (with reserve bytes for
// the rest of the result) and returns them with a Page describing the cut.
// next builds the cursor from the index of the first item left out.
func Cut[T any](items []T, reserve int, next func(firstDropped int) string) ([]T, Page, error) {
	n, err := FitItems(items, MaxResultBytes, reserve)
	if err != nil {
		return nil, Page{}, err
	}
	p := Page{Returned: n, Total: len(items)}
	if n < len(items) {
		p.Truncated = true
		if next != nil {
			p.NextCursor = next(n)
		}
		p.Note = fmt.Sprintf("showing %d of %d items to stay under %d KB; pass next_cursor to continue", n, len(items), MaxResultBytes>>10)
	}
	return items[:n], p, nil
}
