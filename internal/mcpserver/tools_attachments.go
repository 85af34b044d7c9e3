package mcpserver

import (
	"context"

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
