// Command release builds Tidings' release artefacts into a folder
// (docs/releases.md). scripts/release runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/release"
)

func main() {
	out := flag.String("out", "dist", "output folder")
	version := flag.String("version", "", "release version (default: git describe, without a leading v)")
	urlBase := flag.String("url-base", "", "where the archives will be downloadable (default: the GitHub release of the version)")
	targets := flag.String("targets", "", "comma-separated GOOS/GOARCH subset (default: all four)")
	flag.Parse()
	if err := run(*out, *version, *urlBase, *targets); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func git(args ...string) string {
	b, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func run(out, version, urlBase, targets string) error {
	if version == "" {
		version = strings.TrimPrefix(git("describe", "--tags", "--always", "--dirty"), "v")
		if version == "" {
			version = "0.0.0-dev"
		}
	}
	epoch := time.Unix(0, 0)
	if s := git("log", "-1", "--format=%ct"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			epoch = time.Unix(n, 0)
		}
	}
	if urlBase == "" {
		urlBase = "https://github.com/tidings-mcp/tidings/releases/download/v" + version
	}
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	o := release.Options{Repo: repo, Out: out, Version: version, Epoch: epoch, URLBase: urlBase, Log: os.Stderr}
	if targets != "" {
		for _, t := range strings.Split(targets, ",") {
			osName, arch, ok := strings.Cut(strings.TrimSpace(t), "/")
			if !ok {
				return fmt.Errorf("--targets: %q is not GOOS/GOARCH", t)
			}
			o.Targets = append(o.Targets, release.Target{OS: osName, Arch: arch})
		}
	}
	a, err := release.Build(context.Background(), o)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %d archives, %d bundles, %s, %s and SHA256SUMS to %s\n", len(a.Archives), len(a.Bundles), a.Formula, a.Docker, out)
	return nil
}
