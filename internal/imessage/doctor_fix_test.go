package imessage

import (
	"strings"
	"testing"
)

// On a Mac, a chat.db the process may not read is fixed by Full Disk Access
// for the exact binary, and the fix warns that an upgrade can lose the grant;
// elsewhere it is a plain permission problem.
func TestPermissionFixNamesTheBinaryThatNeedsFullDiskAccess(t *testing.T) {
	for _, tc := range []struct {
		goos, path, exe string
		want, not       []string
	}{
		{"darwin", "/Users/me/Library/Messages/chat.db", "/opt/homebrew/bin/tidings",
			[]string{"Full Disk Access", "/opt/homebrew/bin/tidings", "--open-settings", "upgrade", "signed"}, nil},
		{"darwin", "/Users/me/Library/Messages/chat.db", "",
			[]string{"Full Disk Access", "the app that runs tidings"}, nil},
		{"linux", "/home/me/Library/Messages/chat.db", "/usr/bin/tidings",
			[]string{"can read the file"}, []string{"Full Disk Access"}},
		{"darwin", "/Volumes/backup/sms.db", "/usr/local/bin/tidings",
			[]string{"can read the file"}, []string{"Full Disk Access"}},
	} {
		got := permissionFixFor(tc.goos, tc.path, tc.exe)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %s: fix %q lacks %q", tc.goos, tc.path, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%s %s: fix %q mentions %q", tc.goos, tc.path, got, n)
			}
		}
	}
}
