package vecscan

import (
	"encoding/binary"
	"math"
)

// Quantize encodes a vector in the stored form: a little-endian float32
// scale followed by one int8 value per dimension (value·scale ≈ x).
func Quantize(vec []float32) []byte {
	var m float32
	for _, x := range vec {
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	b := make([]byte, 4+len(vec))
	scale := m / 127
	binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
	if scale == 0 {
		return b
	}
	for i, x := range vec {
		b[4+i] = byte(int8(math.Round(float64(x / scale))))
	}
	return b
}

// Dequantize decodes Quantize's output into dst (len dim) and renormalises
// it to unit length; it reports false when b is not of that dimension.
func Dequantize(b []byte, dst []float32) bool {
	if len(b) != 4+len(dst) {
		return false
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	var n float32
	for i := range dst {
		x := float32(int8(b[4+i])) * scale
		dst[i] = x
		n += x * x
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(float64(n)))
		for i := range dst {
			dst[i] *= inv
		}
	}
	return true
}

// Dot is an 8-way unrolled dot product; len(b) must be >= len(a).
func Dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}

// DotQ8 is an 8-way unrolled dot product of a float32 query with an int8
// vector; len(b) must be >= len(a).
func DotQ8(a []float32, b []int8) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s0 += a[i] * float32(b[i])
		s1 += a[i+1] * float32(b[i+1])
		s2 += a[i+2] * float32(b[i+2])
		s3 += a[i+3] * float32(b[i+3])
		s4 += a[i+4] * float32(b[i+4])
		s5 += a[i+5] * float32(b[i+5])
		s6 += a[i+6] * float32(b[i+6])
		s7 += a[i+7] * float32(b[i+7])
	}
	for ; i < n; i++ {
		s0 += a[i] * float32(b[i])
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
