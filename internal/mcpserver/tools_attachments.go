package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/service"
)

// SaveAttachmentInput is save_attachment's argument object.
type SaveAttachmentInput struct {
	AttachmentID string `json:"attachment_id" jsonschema:"an attachment id from get_conversation_messages"`
	Destination  string `json:"destination" jsonschema:"absolute file path inside file_dirs"`
	Overwrite    bool   `json:"overwrite,omitempty" jsonschema:"replace an existing file (default false)"`
}

// SaveAttachmentOutput is save_attachment's result.
type SaveAttachmentOutput struct {
	service.Saved
}

var saveAttachment = Define(Tool{
	Name:         "save_attachment",
	Title:        "Save an image attachment",
	Description:  "Copy an image attachment (PNG, JPEG, GIF, HEIC) to an absolute file path inside the profile's file_dirs (symbolic links resolved first; the folder must exist). An existing file is replaced only with overwrite: true. Other attachments and files that do not decode as images are refused. Written atomically, mode 0600.",
	Toolset:      ToolsetAttachments,
	ReadOnly:     No,
	Destructive:  Yes, // overwrite: true replaces an existing file
	Idempotent:   Yes, // the same call again leaves the same file
	OpenWorld:    No,
	Instructions: "save_attachment writes an image only to a file path inside the allowed folders; ask the user where to save it if they did not say.",
	WritesFiles:  true,
}, func(d *Deps) mcp.ToolHandlerFor[SaveAttachmentInput, SaveAttachmentOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in SaveAttachmentInput) (*mcp.CallToolResult, SaveAttachmentOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, SaveAttachmentOutput{}, err
		}
		var dirs []string
		if d.Profile != nil {
			dirs = d.Profile.FileDirs
		}
		res, err := svc.SaveAttachment(ctx, service.SaveParams{AttachmentID: in.AttachmentID, Destination: in.Destination, Overwrite: in.Overwrite, AllowedDirs: dirs})
		if err != nil {
			return nil, SaveAttachmentOutput{}, err
		}
		return nil, SaveAttachmentOutput{res}, nil
	}
})

// GetAttachmentInput is get_attachment's argument object.
type GetAttachmentInput struct {
	AttachmentID string `json:"attachment_id" jsonschema:"an attachment id marked viewable in get_conversation_messages or search_messages"`
	Size         string `json:"size,omitempty" jsonschema:"preview (400 px, 100 KB), large (1568 px, 750 KB; default) or full (3.5 MB)"`
}

// GetAttachmentOutput describes the picture sent as image content: the
// service's ViewedImage without its bytes.
type GetAttachmentOutput struct {
	ID           string `json:"id"`
	Filename     string `json:"filename,omitempty"`
	MimeType     string `json:"mime_type"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	Bytes        int    `json:"bytes"`
	Size         string `json:"size"`
	SourceFormat string `json:"source_format"`
	SourceWidth  int    `json:"source_width"`
	SourceHeight int    `json:"source_height"`
	Note         string `json:"note,omitempty"`
}

func getAttachmentSchema() any {
	s := inferSchema[GetAttachmentInput]()
	s.Properties["size"].Enum = []any{"preview", "large", "full"}
	return s
}

// getAttachment returns the picture as MCP image content, the description
// as structured content and its JSON text. Image content is not held to
// MaxResultBytes: its budget is the size's (docs/tools.md).
var getAttachment = Define(Tool{
	Name:  "get_attachment",
	Title: "Show an image attachment",
	Description: "Show an image attachment of a message (photo, screenshot, sticker) as image content you can look at. " +
		"It is re-encoded as JPEG or PNG, upright, without metadata (no location). " +
		"Non-images, photos still in iCloud and undecodable formats get one sentence saying so.",
	Toolset:     ToolsetAttachments,
	InputSchema: getAttachmentSchema(),
	ReadOnly:    Yes,
	Destructive: No,
	Idempotent:  Yes,
	OpenWorld:   No,
}, func(d *Deps) mcp.ToolHandlerFor[GetAttachmentInput, GetAttachmentOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in GetAttachmentInput) (*mcp.CallToolResult, GetAttachmentOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, GetAttachmentOutput{}, err
		}
		img, err := svc.ViewAttachment(ctx, service.ViewParams{AttachmentID: in.AttachmentID, Size: in.Size})
		if err != nil {
			return nil, GetAttachmentOutput{}, err
		}
		out := GetAttachmentOutput{ID: img.ID, Filename: img.Filename, MimeType: img.MimeType, Width: img.Width, Height: img.Height, Bytes: img.Bytes,
			Size: img.Size, SourceFormat: img.SourceFormat, SourceWidth: img.SourceWidth, SourceHeight: img.SourceHeight, Note: img.Note}
		text, err := json.Marshal(out)
		if err != nil {
			return nil, GetAttachmentOutput{}, fmt.Errorf("get_attachment: %w", err)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ImageContent{Data: img.Data, MIMEType: img.MimeType},
			&mcp.TextContent{Text: string(text)},
		}}
		return res, out, nil
	}
})
