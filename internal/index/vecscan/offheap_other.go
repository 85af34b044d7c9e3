//go:build !unix

package vecscan

// offheap is plain heap memory where anonymous mappings are not available.
type offheap struct{ b []byte }

func newOffheap(n int) *offheap { return &offheap{b: make([]byte, n)} }

func (m *offheap) grow(n int) *offheap {
	g := newOffheap(n)
	copy(g.b, m.b)
	m.release()
	return g
}

func (m *offheap) release() { m.b = nil }
