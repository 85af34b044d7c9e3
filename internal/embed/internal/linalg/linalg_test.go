package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSymEigen(t *testing.T) {
	// A = V diag(5,2,-1) Vᵀ for a known orthonormal V.
	a := []float64{
		2, 1, 0,
		1, 2, 0,
		0, 0, 7,
	}
	vals, vecs := SymEigen(append([]float64(nil), a...), 3)
	want := []float64{7, 3, 1}
	for i, w := range want {
		if math.Abs(vals[i]-w) > 1e-9 {
			t.Fatalf("eigenvalue %d = %v, want %v", i, vals[i], w)
		}
	}
	// A·v = λ·v for each column.
	for j := 0; j < 3; j++ {
		for i := 0; i < 3; i++ {
			av := 0.0
			for k := 0; k < 3; k++ {
				av += a[i*3+k] * vecs[k*3+j]
			}
			if math.Abs(av-vals[j]*vecs[i*3+j]) > 1e-9 {
				t.Fatalf("column %d is not an eigenvector", j)
			}
		}
	}
}

func TestRandomizedSVDRecoversLowRank(t *testing.T) {
	// A rank-3 sparse-ish matrix with singular values 10, 5, 1.
	rng := rand.New(rand.NewPCG(1, 2))
	m, n := 300, 120
	u := orthonormal(rng, m, 3)
	v := orthonormal(rng, n, 3)
	s := []float64{10, 5, 1}
	var ts []Triplet
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			x := 0.0
			for r := 0; r < 3; r++ {
				x += u.Row(i)[r] * s[r] * v.Row(j)[r]
			}
			ts = append(ts, Triplet{int32(i), int32(j), float32(x)})
		}
	}
	a := BuildCSR(m, n, ts)
	gotU, gotS := RandomizedSVD(a, 3, 5, 2, 7)
	for i, w := range s {
		if math.Abs(gotS[i]-w) > 1e-3 {
			t.Fatalf("singular value %d = %v, want %v", i, gotS[i], w)
		}
	}
	// Each recovered vector matches the true one up to sign.
	for r := 0; r < 3; r++ {
		dot := 0.0
		for i := 0; i < m; i++ {
			dot += gotU.Row(i)[r] * u.Row(i)[r]
		}
		if math.Abs(math.Abs(dot)-1) > 1e-3 {
			t.Fatalf("singular vector %d: |cos| = %v, want 1", r, math.Abs(dot))
		}
	}
}

func TestBuildCSRSumsDuplicates(t *testing.T) {
	a := BuildCSR(2, 3, []Triplet{{1, 2, 1}, {0, 0, 2}, {1, 2, 3}})
	if len(a.Vals) != 2 || a.Vals[1] != 4 || a.Indptr[2] != 2 {
		t.Fatalf("got %+v", a)
	}
	out := a.MulDense(&Dense{Rows: 3, Cols: 1, Data: []float64{1, 10, 100}})
	if out.Data[0] != 2 || out.Data[1] != 400 {
		t.Fatalf("A·x = %v, want [2 400]", out.Data)
	}
	tt := a.TMulDense(&Dense{Rows: 2, Cols: 1, Data: []float64{1, 2}})
	if tt.Data[0] != 2 || tt.Data[1] != 0 || tt.Data[2] != 8 {
		t.Fatalf("Aᵀ·y = %v, want [2 0 8]", tt.Data)
	}
}

func orthonormal(rng *rand.Rand, m, k int) *Dense {
	d := NewDense(m, k)
	for i := range d.Data {
		d.Data[i] = rng.NormFloat64()
	}
	Orthonormalize(d)
	return d
}

// TestOrthonormalizeGivesOrthonormalColumnsEvenWhenDependent: after
// Orthonormalize the columns are orthonormal; a column that depends on
// earlier ones (Cholesky QR fails, Gram–Schmidt takes over) becomes zero
// rather than noise.
func TestOrthonormalizeGivesOrthonormalColumnsEvenWhenDependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name string
		dep  bool // make column 2 a multiple of column 0: Cholesky QR fails, Gram–Schmidt takes over
	}{{"independent", false}, {"dependent", true}} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDense(50, 4)
			for i := range d.Data {
				d.Data[i] = rng.NormFloat64()
			}
			if tc.dep {
				for i := 0; i < 50; i++ {
					d.Row(i)[2] = 3 * d.Row(i)[0]
				}
			}
			Orthonormalize(d)
			for a := 0; a < 4; a++ {
				for b := 0; b < 4; b++ {
					s := 0.0
					for i := 0; i < 50; i++ {
						s += d.Row(i)[a] * d.Row(i)[b]
					}
					want := 0.0
					if a == b && !(tc.dep && a == 2) {
						want = 1
					}
					if math.Abs(s-want) > 1e-9 {
						t.Fatalf("column %d · column %d = %v, want %v", a, b, s, want)
					}
				}
			}
		})
	}
}
