// Command androidbench generates large synthetic SMS Backup & Restore
// exports and measures reading and importing them (run it under
// /usr/bin/time -v for peak RSS). It is a development tool, not part of
// the tidings binary.
//
//	go run ./internal/android/cmd/androidbench gen -n 1000000 -o /tmp/x.xml [-media-bytes 2048]
//	go run ./internal/android/cmd/androidbench read /tmp/x.xml
//	go run ./internal/android/cmd/androidbench import -index /tmp/ix/index.db /tmp/x.xml
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/tidings-mcp/tidings/internal/android"
	"github.com/tidings-mcp/tidings/internal/android/androidgen"
	"github.com/tidings-mcp/tidings/internal/android/androidindex"
	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: androidbench gen|read|import …")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "read":
		err = read(os.Args[2:])
	case "import":
		err = importCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "androidbench:", err)
		os.Exit(1)
	}
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	n := fs.Int("n", 100000, "messages")
	out := fs.String("o", "", "output file")
	media := fs.Int("media-bytes", 2048, "mean media part size in bytes")
	mms := fs.Float64("mms", 0.15, "fraction of MMS")
	seed := fs.Uint64("seed", 1, "seed")
	fs.Parse(args)
	if *out == "" {
		return errors.New("gen: -o is required")
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	start := time.Now()
	sum, err := androidgen.Write(f, androidgen.Config{Messages: *n, Seed: *seed, MediaBytes: *media, MMSFraction: *mms})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return printJSON(map[string]any{"summary": sum, "seconds": time.Since(start).Seconds()})
}

func read(args []string) error {
	fs := flag.NewFlagSet("read", flag.ExitOnError)
	meta := fs.Bool("meta", false, "metadata-only pass")
	fs.Parse(args)
	for _, p := range fs.Args() {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		start := time.Now()
		r := android.NewReader(f, &android.Options{MetaOnly: *meta})
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return err
			}
		}
		f.Close()
		d := time.Since(start)
		st := r.Stats()
		if err := printJSON(map[string]any{"file": p, "stats": st, "seconds": d.Seconds(),
			"mb_per_s": float64(st.Bytes) / 1e6 / d.Seconds(), "records_per_s": float64(st.SMS+st.MMS) / d.Seconds(),
			"heap_in_use_mb": heapMB()}); err != nil {
			return err
		}
	}
	return nil
}

func importCmd(args []string) error {
	fs := flag.NewFlagSet("import", flag.ExitOnError)
	ixPath := fs.String("index", "", "index database path")
	region := fs.String("region", "US", "phone region")
	batch := fs.Int("batch", 0, "import batch size (0: default)")
	cpuprof := fs.String("cpuprofile", "", "write a CPU profile to this file")
	fs.Parse(args)
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *ixPath == "" {
		return errors.New("import: -index is required")
	}
	ctx := context.Background()
	ix, err := index.Open(ctx, *ixPath, index.Options{NormalizeHandle: func(h string) string {
		k, kind := contacts.Normalize(h, *region)
		if kind == contacts.KindInvalid {
			return h
		}
		return k
	}})
	if err != nil {
		return err
	}
	defer ix.Close()
	src := androidindex.New(fs.Args(), *region)
	src.Batch = *batch
	start := time.Now()
	rep, err := ix.Sync(ctx, index.SyncOptions{Progress: os.Stderr}, src)
	if err != nil {
		return err
	}
	d := time.Since(start)
	list, err := ix.ListConversations(ctx, index.ListOptions{Limit: 1})
	if err != nil {
		return err
	}
	return printJSON(map[string]any{"report": rep, "files": src.Results(), "seconds": d.Seconds(),
		"conversations": list.Total, "heap_in_use_mb": heapMB(), "source": model.SourceAndroid})
}

func heapMB() float64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

func printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(b))
	return err
}
