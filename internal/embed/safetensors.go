package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// tensor is one tensor of a safetensors file, converted to float32 (or
// int64 for integer tensors).
type tensor struct {
	dtype string
	shape []int
	f32   []float32
	i64   []int64
}

// maxSafetensorsHeader bounds the JSON header we are willing to parse.
const maxSafetensorsHeader = 100 << 20

// parseSafetensors decodes a safetensors file: an 8-byte little-endian
// header length, a JSON header mapping names to dtype, shape and byte
// offsets into the data that follows, then the data. Every offset and
// shape is checked against the data before use.
func parseSafetensors(b []byte) (map[string]*tensor, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("safetensors: file of %d bytes is too short", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxSafetensorsHeader || n > uint64(len(b)-8) {
		return nil, fmt.Errorf("safetensors: header length %d exceeds file", n)
	}
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &hdr); err != nil {
		return nil, fmt.Errorf("safetensors header: %w", err)
	}
	data := b[8+n:]
	out := map[string]*tensor{}
	names := make([]string, 0, len(hdr))
	for k := range hdr {
		if k != "__metadata__" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		var info struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(hdr[name], &info); err != nil {
			return nil, fmt.Errorf("safetensors tensor %q: %w", name, err)
		}
		if len(info.Offsets) != 2 || info.Offsets[0] > info.Offsets[1] || info.Offsets[1] > uint64(len(data)) {
			return nil, fmt.Errorf("safetensors tensor %q: offsets %v outside data of %d bytes", name, info.Offsets, len(data))
		}
		count := uint64(1)
		for _, d := range info.Shape {
			if d < 0 || d > 1<<31 {
				return nil, fmt.Errorf("safetensors tensor %q: bad shape %v", name, info.Shape)
			}
			count *= uint64(d)
			if count > 1<<34 {
				return nil, fmt.Errorf("safetensors tensor %q: shape %v too large", name, info.Shape)
			}
		}
		size, ok := map[string]uint64{"F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I8": 1, "I32": 4, "I64": 8}[info.Dtype]
		if !ok {
			return nil, fmt.Errorf("safetensors tensor %q: unsupported dtype %s", name, info.Dtype)
		}
		raw := data[info.Offsets[0]:info.Offsets[1]]
		if uint64(len(raw)) != count*size {
			return nil, fmt.Errorf("safetensors tensor %q: %d bytes for shape %v of %s", name, len(raw), info.Shape, info.Dtype)
		}
		t := &tensor{dtype: info.Dtype, shape: info.Shape}
		le := binary.LittleEndian
		switch info.Dtype {
		case "F32":
			t.f32 = make([]float32, count)
			for i := range t.f32 {
				t.f32[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
			}
		case "F64":
			t.f32 = make([]float32, count)
			for i := range t.f32 {
				t.f32[i] = float32(math.Float64frombits(le.Uint64(raw[8*i:])))
			}
		case "F16":
			t.f32 = make([]float32, count)
			for i := range t.f32 {
				t.f32[i] = halfToFloat(le.Uint16(raw[2*i:]))
			}
		case "BF16":
			t.f32 = make([]float32, count)
			for i := range t.f32 {
				t.f32[i] = math.Float32frombits(uint32(le.Uint16(raw[2*i:])) << 16)
			}
		case "I8":
			t.f32 = make([]float32, count)
			for i := range t.f32 {
				t.f32[i] = float32(int8(raw[i]))
			}
		case "I32":
			t.i64 = make([]int64, count)
			for i := range t.i64 {
				t.i64[i] = int64(int32(le.Uint32(raw[4*i:])))
			}
		case "I64":
			t.i64 = make([]int64, count)
			for i := range t.i64 {
				t.i64[i] = int64(le.Uint64(raw[8*i:]))
			}
		}
		out[name] = t
	}
	return out, nil
}

// halfToFloat converts an IEEE 754 binary16 value to float32.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		for frac&0x400 == 0 {
			frac <<= 1
			exp--
		}
		exp++
		frac &= 0x3ff
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// writeSafetensors encodes float32 tensors (and int64 ones) in the
// safetensors layout. Tests use it to build real model files.
func writeSafetensors(ts map[string]*tensor) []byte {
	names := make([]string, 0, len(ts))
	for k := range ts {
		names = append(names, k)
	}
	sort.Strings(names)
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	le := binary.LittleEndian
	for _, n := range names {
		t := ts[n]
		start := len(data)
		switch t.dtype {
		case "I64":
			for _, x := range t.i64 {
				data = le.AppendUint64(data, uint64(x))
			}
		case "F16":
			for _, x := range t.f32 {
				data = le.AppendUint16(data, floatToHalf(x))
			}
		default:
			for _, x := range t.f32 {
				data = le.AppendUint32(data, math.Float32bits(x))
			}
		}
		dt := t.dtype
		if dt == "" {
			dt = "F32"
		}
		hdr[n] = map[string]any{"dtype": dt, "shape": t.shape, "data_offsets": []int{start, len(data)}}
	}
	h, _ := json.Marshal(hdr)
	out := le.AppendUint64(nil, uint64(len(h)))
	out = append(out, h...)
	return append(out, data...)
}

// floatToHalf converts to binary16 with round-to-nearest-even for normal
// numbers; it is used only to write test fixtures.
func floatToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	frac := b & 0x7fffff
	switch {
	case exp <= 0:
		return sign
	case exp >= 0x1f:
		return sign | 0x7c00
	}
	h := sign | uint16(exp)<<10 | uint16(frac>>13)
	if frac&0x1fff > 0x1000 || frac&0x1fff == 0x1000 && h&1 == 1 {
		h++
	}
	return h
}
