package clients

import (
	"bytes"
	"encoding/json"
)

// jsonMarshal encodes without HTML escaping: a command path with & or <
// must reach the file as written.
func jsonMarshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}
