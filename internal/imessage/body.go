package imessage

import (
	"github.com/tidings-mcp/tidings/internal/imessage/typedstream"
	"github.com/tidings-mcp/tidings/internal/model"
)

// decodeBody decodes an attributedBody with the typedstream decoder and
// converts its runs. A body that is one plain run over the whole text (part
// 0 or none, no attributes of interest) yields no runs: the text says it
// all, and the common case then allocates nothing for runs.
func decodeBody(blob []byte) (string, []model.Run, error) {
	text, runs, err := typedstream.AttributedBody(blob)
	if err != nil {
		return "", nil, err
	}
	if len(runs) == 0 || (len(runs) == 1 && runs[0].Part <= 0 && plainRun(&runs[0])) {
		return text, nil, nil
	}
	out := make([]model.Run, len(runs))
	for i := range runs {
		r := &runs[i]
		out[i] = model.Run{
			Start:         r.Start,
			End:           r.End,
			Part:          r.Part,
			AttachmentID:  r.AttachmentGUID,
			Filename:      r.Filename,
			Mention:       r.Mention,
			Link:          r.Link,
			OneTimeCode:   r.OneTimeCode,
			Detected:      r.Detected,
			Styles:        r.Styles,
			Transcription: r.Transcription,
		}
	}
	return text, out, nil
}

// plainRun reports whether a run carries nothing but (at most) a part index.
func plainRun(r *typedstream.Run) bool {
	return r.AttachmentGUID == "" && r.Filename == "" && r.Mention == "" && r.Link == "" && !r.OneTimeCode &&
		len(r.Detected) == 0 && len(r.Styles) == 0 && r.Transcription == ""
}
