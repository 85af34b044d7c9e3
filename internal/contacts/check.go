package contacts

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Check is one doctor line: what was checked, whether it is fine, what
// was found, and how to fix it when it is not.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// fdaFix is the macOS fix for a refused AddressBook read.
const fdaFix = "grant Full Disk Access to the program that runs tidings (System Settings → Privacy & Security → " +
	"Full Disk Access; the helper in bridge mode, else your terminal), then run tidings doctor again"

// Checks turns the statuses of a Load into doctor checks: the region, the
// sources found with their card counts, and each unreadable or partly read
// file with its fix (Full Disk Access on macOS, goos "darwin", when the
// system refused the read).
func Checks(statuses []Status, region, goos string) []Check {
	var out []Check
	r := canonRegion(region)
	if ValidRegion(r) {
		out = append(out, Check{Name: "contacts region", OK: true,
			Detail: fmt.Sprintf("numbers without a country code are read as %s numbers", r)})
	} else {
		out = append(out, Check{Name: "contacts region", Detail: fmt.Sprintf("unknown region %q", region),
			Fix: "set TIDINGS_REGION to your two-letter country code, e.g. TIDINGS_REGION=FR"})
	}

	readable, cards := 0, 0
	for _, s := range statuses {
		cards += s.Cards
		if s.Err == nil || s.Cards > 0 {
			readable++
		}
	}
	src := Check{Name: "contacts sources", OK: readable > 0,
		Detail: fmt.Sprintf("%d of %d sources readable, %d cards", readable, len(statuses), cards)}
	if len(statuses) == 0 {
		src.Detail = "no contacts source configured; conversations will show handles instead of names"
	}
	if !src.OK {
		if goos == "darwin" {
			src.Fix = "let tidings read ~/Library/Application Support/AddressBook (" + fdaFix + "), or pass --contacts FILE.vcf"
		} else {
			src.Fix = "pass --contacts FILE.vcf (an export from your phone or Contacts app) or an iPhone backup's AddressBook.sqlitedb"
		}
	}
	out = append(out, src)

	for _, s := range statuses {
		c := Check{Name: "contacts: " + s.Path, OK: s.Err == nil, Detail: fmt.Sprintf("%s, %d cards", s.Kind, s.Cards)}
		if s.Err != nil {
			c.Detail = fmt.Sprintf("%s, %d cards read; %v", s.Kind, s.Cards, s.Err)
			c.Fix = fixFor(s, goos)
		}
		out = append(out, c)
	}
	return out
}

func fixFor(s Status, goos string) string {
	var pe *ParseError
	switch {
	case errors.Is(s.Err, fs.ErrPermission) || strings.Contains(s.Err.Error(), "authorization denied"):
		if goos == "darwin" {
			return fdaFix
		}
		return "make the file readable by this user (check its owner and mode)"
	case errors.Is(s.Err, fs.ErrNotExist), errors.Is(s.Err, ErrNoAddressBook):
		return "check the path; on macOS the Contacts app creates the AddressBook folder when it first runs"
	case errors.As(s.Err, &pe):
		return "the cards listed were read; re-export the file from your contacts app to recover the rest"
	}
	return "check that the file is a contacts database or vCard file and not damaged (open it with the app that made it)"
}
