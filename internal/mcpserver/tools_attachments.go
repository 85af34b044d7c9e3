package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/service"
)

// SaveAttachmentInput is save_attachment's argument object.
type SaveAttachmentInput struct {
	AttachmentID string `json:"attachment_id" jsonschema:"an attachment id from a message's attachments (get_conversation_messages)"`
	Destination  string `json:"destination" jsonschema:"the exact absolute file path to write, inside one of the folders the profile allows (file_dirs); its folder must exist"`
	Overwrite    bool   `json:"overwrite,omitempty" jsonschema:"replace the file if it exists (default false: an existing file is never replaced)"`
}

// SaveAttachmentOutput is save_attachment's result.
type SaveAttachmentOutput struct {
	service.Saved
}

var saveAttachment = Define(Tool{
	Name:  "save_attachment",
	Title: "Save an image attachment",
	Description: "Copy an image attachment (PNG, JPEG, GIF or HEIC) of a message to a file the caller names, inside the folders the user's profile allows (file_dirs). " +
		"The destination is an exact absolute file path whose folder exists; an existing file is replaced only with overwrite: true. Non-image attachments, paths outside the allowed folders (symbolic links are resolved first) and files that do not decode as images are refused. The file is written atomically with mode 0600.",
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
