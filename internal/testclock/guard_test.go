package testclock

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fixedDate is a time.Date call with a year of this era written out.
var fixedDate = regexp.MustCompile(`\btime\.Date\((20[2-9][0-9])\b`)

// TestFixedTestDatesComeFromTestclock: a test that writes a date of this
// era with time.Date instead of testclock.Date escapes the shifted runs of
// scripts/test, so a clock it meets goes unnoticed until the calendar
// passes the date. A literal date is allowed where it cannot meet the real
// clock (calendar arithmetic against a pinned clock, a value parsed from a
// fixture and compared), marked on its line with "literal date:" and why.
func TestFixedTestDatesComeFromTestclock(t *testing.T) {
	root := filepath.Join("..", "..")
	var bad []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".tmp" || name == ".git" || name == "node_modules" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		// Tests, and the builders of test data that only tests use.
		if !strings.HasSuffix(path, "_test.go") && !strings.Contains(path, "servicetest") && !strings.Contains(path, "testfixture") {
			return nil
		}
		if strings.Contains(path, filepath.Join("internal", "testclock")) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if fixedDate.MatchString(line) && !strings.Contains(line, "literal date:") {
				bad = append(bad, path+":"+strconv.Itoa(n)+": "+strings.TrimSpace(line))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("fixed test date not from internal/testclock (use testclock.Date, or mark why it cannot meet the real clock with \"literal date:\"): %s", b)
	}
}

// TestGuardSeesAnUnmarkedDate: the guard's pattern catches the mistake it
// exists for and lets the two allowed forms through.
func TestGuardSeesAnUnmarkedDate(t *testing.T) {
	for line, want := range map[string]bool{
		"	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)":                                 true,
		"	now := testclock.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)":                            false,
		"	epoch := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)":                                  false,
		"	ref := time.Date(2026, 11, 30, 10, 0, 0, 0, pst) // literal date: calendar arithmetic": false,
	} {
		got := fixedDate.MatchString(line) && !strings.Contains(line, "literal date:")
		if got != want {
			t.Errorf("guard on %q = %v, want %v", line, got, want)
		}
	}
}
