// Package linalg holds the small amount of numerical code the built-in
// embedder needs: a compressed sparse row matrix, dense products with it, an
// orthonormalisation, a symmetric eigensolver and a randomized truncated SVD.
//
// It exists so that both the offline lexicon generator and the index-time
// corpus fit use one tested implementation, without a numerical dependency.
// Dense matrices are row-major float64; sparse values are float32.
package linalg

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
)

// CSR is a sparse matrix in compressed sparse row form.
type CSR struct {
	Rows, Cols int
	Indptr     []int     // len Rows+1
	Indices    []int32   // column of each stored value
	Vals       []float32 // stored values
}

// Triplet is one (row, col, value) entry used to build a CSR matrix.
type Triplet struct {
	Row, Col int32
	Val      float32
}

// BuildCSR builds a CSR matrix from triplets, summing duplicates. The slice
// is sorted in place.
func BuildCSR(rows, cols int, ts []Triplet) *CSR {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Row != ts[j].Row {
			return ts[i].Row < ts[j].Row
		}
		return ts[i].Col < ts[j].Col
	})
	m := &CSR{Rows: rows, Cols: cols, Indptr: make([]int, rows+1)}
	for i := 0; i < len(ts); {
		j := i
		v := float32(0)
		for j < len(ts) && ts[j].Row == ts[i].Row && ts[j].Col == ts[i].Col {
			v += ts[j].Val
			j++
		}
		m.Indices = append(m.Indices, ts[i].Col)
		m.Vals = append(m.Vals, v)
		m.Indptr[ts[i].Row+1]++
		i = j
	}
	for r := 0; r < rows; r++ {
		m.Indptr[r+1] += m.Indptr[r]
	}
	return m
}

// Dense is a row-major matrix.
type Dense struct {
	Rows, Cols int
	Data       []float64
}

// NewDense returns a zero matrix.
func NewDense(r, c int) *Dense { return &Dense{Rows: r, Cols: c, Data: make([]float64, r*c)} }

// Row returns row i as a slice aliasing the matrix.
func (d *Dense) Row(i int) []float64 { return d.Data[i*d.Cols : (i+1)*d.Cols] }

// parallel runs f over [0,n) split into chunks across the available CPUs.
func parallel(n int, f func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if w > n {
		w = n
	}
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + w - 1) / w
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() { defer wg.Done(); f(lo, hi) }()
	}
	wg.Wait()
}

// chunks splits [0,n) into one range per CPU.
func chunks(n int) [][2]int {
	w := max(1, min(runtime.GOMAXPROCS(0), n))
	step := (n + w - 1) / w
	var out [][2]int
	for lo := 0; lo < n; lo += step {
		out = append(out, [2]int{lo, min(lo+step, n)})
	}
	return out
}

// reduce runs f over the chunks of [0,n) in parallel, each into its own
// zeroed buffer of size m, and sums the buffers in chunk order, so the
// result does not depend on scheduling.
func reduce(n, m int, f func(lo, hi int, acc []float64)) []float64 {
	cs := chunks(n)
	bufs := make([][]float64, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		bufs[i] = make([]float64, m)
		wg.Add(1)
		go func() { defer wg.Done(); f(c[0], c[1], bufs[i]) }()
	}
	wg.Wait()
	if len(bufs) == 0 {
		return make([]float64, m)
	}
	sum := bufs[0]
	for _, b := range bufs[1:] {
		for i, v := range b {
			sum[i] += v
		}
	}
	return sum
}

// MulDense returns A·B where B is Cols×k.
func (a *CSR) MulDense(b *Dense) *Dense {
	k := b.Cols
	out := NewDense(a.Rows, k)
	parallel(a.Rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o := out.Row(r)
			for p := a.Indptr[r]; p < a.Indptr[r+1]; p++ {
				v := float64(a.Vals[p])
				br := b.Row(int(a.Indices[p]))
				for j := range o {
					o[j] += v * br[j]
				}
			}
		}
	})
	return out
}

// TMulDense returns Aᵀ·B where B is Rows×k.
func (a *CSR) TMulDense(b *Dense) *Dense {
	k := b.Cols
	data := reduce(a.Rows, a.Cols*k, func(lo, hi int, acc []float64) {
		for r := lo; r < hi; r++ {
			br := b.Row(r)
			for p := a.Indptr[r]; p < a.Indptr[r+1]; p++ {
				v := float64(a.Vals[p])
				o := acc[int(a.Indices[p])*k : int(a.Indices[p]+1)*k]
				for j := range o {
					o[j] += v * br[j]
				}
			}
		}
	})
	return &Dense{Rows: a.Cols, Cols: k, Data: data}
}

// Orthonormalize replaces the columns of d by an orthonormal basis of their
// span. It uses Cholesky QR twice (fast, parallel: one pass over d to form
// the Gram matrix) and falls back to modified Gram–Schmidt when the Gram
// matrix is not numerically positive definite.
func Orthonormalize(d *Dense) {
	for pass := 0; pass < 2; pass++ {
		if !cholQR(d) {
			gramSchmidt(d)
			return
		}
	}
}

// cholQR computes G = DᵀD = RᵀR and replaces D by D·R⁻¹.
func cholQR(d *Dense) bool {
	k := d.Cols
	g := reduce(d.Rows, k*k, func(lo, hi int, local []float64) {
		for r := lo; r < hi; r++ {
			row := d.Row(r)
			for i, x := range row {
				if x == 0 {
					continue
				}
				li := local[i*k : (i+1)*k]
				for j := i; j < k; j++ {
					li[j] += x * row[j]
				}
			}
		}
	})
	// Cholesky: G = RᵀR, R upper triangular, stored in g's upper triangle.
	for j := 0; j < k; j++ {
		s := g[j*k+j]
		for p := 0; p < j; p++ {
			s -= g[p*k+j] * g[p*k+j]
		}
		if s <= 1e-12*math.Max(1, g[j*k+j]) || math.IsNaN(s) {
			return false
		}
		rjj := math.Sqrt(s)
		g[j*k+j] = rjj
		for i := j + 1; i < k; i++ {
			t := g[j*k+i]
			for p := 0; p < j; p++ {
				t -= g[p*k+j] * g[p*k+i]
			}
			g[j*k+i] = t / rjj
		}
	}
	// Each row x of D becomes the solution y of yR = x (forward substitution).
	parallel(d.Rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := d.Row(r)
			for j := 0; j < k; j++ {
				t := row[j]
				for p := 0; p < j; p++ {
					t -= row[p] * g[p*k+j]
				}
				row[j] = t / g[j*k+j]
			}
		}
	})
	return true
}

// gramSchmidt orthonormalises the columns with modified Gram–Schmidt,
// applied twice; numerically dependent columns become zero.
func gramSchmidt(d *Dense) {
	m, k := d.Rows, d.Cols
	// Work column-major for cache-friendly column operations.
	cols := make([][]float64, k)
	for j := range cols {
		c := make([]float64, m)
		for i := 0; i < m; i++ {
			c[i] = d.Data[i*k+j]
		}
		cols[j] = c
	}
	for pass := 0; pass < 2; pass++ {
		for j := 0; j < k; j++ {
			cj := cols[j]
			for p := 0; p < j; p++ {
				cp := cols[p]
				dot := 0.0
				for i := range cj {
					dot += cj[i] * cp[i]
				}
				for i := range cj {
					cj[i] -= dot * cp[i]
				}
			}
			n := 0.0
			for _, v := range cj {
				n += v * v
			}
			n = math.Sqrt(n)
			if n < 1e-12 {
				clear(cj)
				continue
			}
			for i := range cj {
				cj[i] /= n
			}
		}
	}
	for j, c := range cols {
		for i := 0; i < m; i++ {
			d.Data[i*k+j] = c[i]
		}
	}
}

// SymEigen computes the eigenvalues and eigenvectors of the symmetric n×n
// matrix a (row-major, destroyed) with the cyclic Jacobi method. It returns
// eigenvalues in decreasing order and the matching eigenvectors as the
// columns of a row-major n×n matrix.
func SymEigen(a []float64, n int) ([]float64, []float64) {
	v := make([]float64, n*n)
	for i := 0; i < n; i++ {
		v[i*n+i] = 1
	}
	for sweep := 0; sweep < 60; sweep++ {
		off := 0.0
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				off += a[p*n+q] * a[p*n+q]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				apq := a[p*n+q]
				if math.Abs(apq) < 1e-300 {
					continue
				}
				theta := (a[q*n+q] - a[p*n+p]) / (2 * apq)
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := 0; k < n; k++ {
					akp, akq := a[k*n+p], a[k*n+q]
					a[k*n+p] = c*akp - s*akq
					a[k*n+q] = s*akp + c*akq
				}
				for k := 0; k < n; k++ {
					apk, aqk := a[p*n+k], a[q*n+k]
					a[p*n+k] = c*apk - s*aqk
					a[q*n+k] = s*apk + c*aqk
				}
				for k := 0; k < n; k++ {
					vkp, vkq := v[k*n+p], v[k*n+q]
					v[k*n+p] = c*vkp - s*vkq
					v[k*n+q] = s*vkp + c*vkq
				}
			}
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return a[idx[i]*n+idx[i]] > a[idx[j]*n+idx[j]] })
	vals := make([]float64, n)
	vecs := make([]float64, n*n)
	for j, src := range idx {
		vals[j] = a[src*n+src]
		for i := 0; i < n; i++ {
			vecs[i*n+j] = v[i*n+src]
		}
	}
	return vals, vecs
}

// RandomizedSVD returns the leading k left singular vectors (Rows×k) and
// singular values of a, using a Gaussian sketch with the given oversampling
// and power iterations (Halko, Martinsson & Tropp 2011). The seed makes the
// result deterministic.
func RandomizedSVD(a *CSR, k, oversample, powerIters int, seed uint64) (*Dense, []float64) {
	l := k + oversample
	if l > a.Cols {
		l = a.Cols
	}
	if l > a.Rows {
		l = a.Rows
	}
	if k > l {
		k = l
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	omega := NewDense(a.Cols, l)
	for i := range omega.Data {
		omega.Data[i] = rng.NormFloat64()
	}
	q := a.MulDense(omega)
	Orthonormalize(q)
	for it := 0; it < powerIters; it++ {
		z := a.TMulDense(q)
		Orthonormalize(z)
		q = a.MulDense(z)
		Orthonormalize(q)
	}
	z := a.TMulDense(q) // Cols×l = Bᵀ where B = QᵀA
	// B·Bᵀ = ZᵀZ (l×l).
	g := make([]float64, l*l)
	for r := 0; r < z.Rows; r++ {
		row := z.Row(r)
		for i := 0; i < l; i++ {
			ri := row[i]
			if ri == 0 {
				continue
			}
			gi := g[i*l : (i+1)*l]
			for j := i; j < l; j++ {
				gi[j] += ri * row[j]
			}
		}
	}
	for i := 0; i < l; i++ {
		for j := 0; j < i; j++ {
			g[i*l+j] = g[j*l+i]
		}
	}
	vals, vecs := SymEigen(g, l)
	u := NewDense(a.Rows, k)
	parallel(a.Rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			qr := q.Row(r)
			ur := u.Row(r)
			for j := 0; j < k; j++ {
				s := 0.0
				for i := 0; i < l; i++ {
					s += qr[i] * vecs[i*l+j]
				}
				ur[j] = s
			}
		}
	})
	sv := make([]float64, k)
	for j := 0; j < k; j++ {
		sv[j] = math.Sqrt(math.Max(vals[j], 0))
	}
	return u, sv
}
