package index

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress draws a one-line progress display ("indexing: 120,000 messages
// (85,000/s)") rewritten in place at most five times a second. A nil
// writer makes every method a no-op.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	name  string
	n     int64
	total int64
	start time.Time
	last  time.Time
	drawn bool
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, name: "indexing", start: time.Now()}
}

func (p *progress) phase(name string) { p.phaseN(name, 0) }

func (p *progress) phaseN(name string, total int64) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\n")
	}
	p.name, p.n, p.total, p.start, p.drawn = name, 0, total, time.Now(), false
	p.drawLocked(true)
}

func (p *progress) add(n int) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += int64(n)
	p.drawLocked(false)
}

func (p *progress) drawLocked(force bool) {
	now := time.Now()
	if !force && now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	rate := ""
	if el := now.Sub(p.start).Seconds(); el > 0.2 && p.n > 0 {
		rate = fmt.Sprintf(" (%s/s)", groupDigits(int64(float64(p.n)/el)))
	}
	of := ""
	if p.total > 0 {
		of = " of " + groupDigits(p.total)
	}
	fmt.Fprintf(p.w, "\r%s: %s%s%s\x1b[K", p.name, groupDigits(p.n), of, rate)
	p.drawn = true
}

func (p *progress) done() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		p.drawLocked(true)
		fmt.Fprint(p.w, "\n")
		p.drawn = false
	}
}

// groupDigits formats n with thousands separators.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return neg + s
}
