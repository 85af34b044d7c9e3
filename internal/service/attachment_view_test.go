package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// TestAttachmentFilesAreNotFollowedOutOfTheMessagesFolders: an attachment
// whose file (or a folder on its way) is a symbolic link is refused by
// every reader of attachment files — save_attachment, the bridge's
// get_attachment_image and get_attachment —, so a link planted in the
// Attachments folder cannot make Tidings read a picture from elsewhere.
func TestAttachmentFilesAreNotFollowedOutOfTheMessagesFolders(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, env *servicetest.Env)
	}{
		{"the file is a symlink", func(t *testing.T, env *servicetest.Env) {
			file := filepath.Join(env.Dir, "Attachments", "a1-climbgnp.exe.png")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(outside, "elsewhere.png")
			if err := os.WriteFile(target, data, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(file)
			if err := os.Symlink(target, file); err != nil {
				t.Fatal(err)
			}
		}},
		{"the folder is a symlink", func(t *testing.T, env *servicetest.Env) {
			att := filepath.Join(env.Dir, "Attachments")
			moved := filepath.Join(outside, "moved")
			if err := os.Rename(att, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, att); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
			tt.plant(t, env)
			_, err := env.Service.SaveAttachment(ctx, service.SaveParams{AttachmentID: "1", Destination: filepath.Join(env.Files, "x.png"), AllowedDirs: []string{env.Files}})
			if err == nil {
				t.Error("save_attachment read through the link")
			}
			if _, err := env.Service.AttachmentImage(ctx, service.AttachmentParams{AttachmentID: "1"}); err == nil {
				t.Error("get_attachment_image read through the link")
			}
			_, err = env.Service.ViewAttachment(ctx, service.ViewParams{AttachmentID: "1", Size: "preview"})
			var se *service.Error
			if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), "link") {
				t.Errorf("get_attachment through the link: %v", err)
			}
		})
	}
}
