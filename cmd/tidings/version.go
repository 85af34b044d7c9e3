package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// BuildInfo is what `tidings version` reports: enough to tell two binaries
// apart in a bug report and to match one to its release.
type BuildInfo struct {
	// Version is the release version: -X main.Version from scripts/release,
	// else the module version `go install …@vX` recorded, else Version's
	// development default.
	Version   string
	Module    string // module version as the Go toolchain recorded it ("(devel)" from a clone)
	Commit    string // vcs.revision, "+dirty" when the tree had changes
	Date      string // vcs.time (the commit's time, so builds are reproducible)
	GoVersion string
	Platform  string
}

func readBuildInfo(read func() (*debug.BuildInfo, bool)) BuildInfo {
	info := BuildInfo{Version: Version}
	bi, ok := read()
	if !ok {
		return info
	}
	info.Module, info.GoVersion = bi.Main.Version, bi.GoVersion
	var goos, goarch, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.Date = s.Value
		case "vcs.modified":
			modified = s.Value
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if modified == "true" && info.Commit != "" {
		info.Commit += "+dirty"
	}
	if goos != "" {
		info.Platform = goos + "/" + goarch
	}
	if Version == defaultVersion && info.Module != "" && info.Module != "(devel)" {
		info.Version = strings.TrimPrefix(info.Module, "v")
	}
	return info
}

func (b BuildInfo) write(w io.Writer) {
	fmt.Fprintf(w, "tidings %s\n", b.Version)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %-7s %s\n", k, v)
		}
	}
	row("module", b.Module)
	row("commit", b.Commit)
	row("date", b.Date)
	row("go", b.GoVersion)
	row("os/arch", b.Platform)
}
