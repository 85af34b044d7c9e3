//go:build unix

package vecscan

import "syscall"

// offheap is memory outside the Go heap (an anonymous mapping): the
// garbage collector neither scans it nor counts it towards its heap goal.
type offheap struct{ b []byte }

func newOffheap(n int) *offheap {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return &offheap{b: make([]byte, n)} // fall back to the heap
	}
	return &offheap{b: b}
}

// grow returns a mapping of n bytes holding m's contents and releases m.
func (m *offheap) grow(n int) *offheap {
	g := newOffheap(n)
	copy(g.b, m.b)
	m.release()
	return g
}

func (m *offheap) release() {
	if m.b != nil {
		_ = syscall.Munmap(m.b) // fails harmlessly for the heap fallback
		m.b = nil
	}
}
