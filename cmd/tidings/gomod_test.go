package main

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGoModMarksDirectRequires: go.mod is what `go mod tidy` makes of the
// code (docs/dependencies.md): every module whose packages the repository
// imports is a direct requirement, and no requirement is marked direct that
// nothing imports. (Whether an indirect requirement is still needed by a
// dependency takes the module graph to decide; `go mod tidy -diff` does.)
func TestGoModMarksDirectRequires(t *testing.T) {
	root := filepath.Join("..", "..")
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	self := ""
	indirect := map[string]bool{} // required module → marked indirect
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "module "):
			self = strings.TrimSpace(strings.TrimPrefix(line, "module "))
		case line == "require (":
			inBlock = true
		case inBlock && line == ")":
			inBlock = false
		case inBlock && line != "" || strings.HasPrefix(line, "require "):
			fields := strings.Fields(strings.TrimPrefix(line, "require "))
			if len(fields) >= 2 {
				indirect[fields[0]] = strings.Contains(line, "// indirect")
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	imported := map[string]string{} // module → one file importing it
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".tmp", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range file.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !strings.Contains(strings.Split(p, "/")[0], ".") || p == self || strings.HasPrefix(p, self+"/") {
				continue // standard library or this module
			}
			mod := ""
			for m := range indirect {
				if (p == m || strings.HasPrefix(p, m+"/")) && len(m) > len(mod) {
					mod = m
				}
			}
			if mod == "" {
				t.Errorf("%s imports %s, which no requirement in go.mod provides", path, p)
				continue
			}
			imported[mod] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for m, ind := range indirect {
		switch file, used := imported[m]; {
		case used && ind:
			t.Errorf("go.mod marks %s indirect, but %s imports it", m, file)
		case !used && !ind:
			t.Errorf("go.mod requires %s directly, but nothing imports it", m)
		}
	}
}
