package infer

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/qgemm"
	"github.com/plumbml/plumb/tensor"
)

// dynQuantizeRows gives qgemm.DynamicQuantizeLinear's scale, zero point
// and bytes exactly (that function is the plain ONNX reference) on random
// inputs of odd lengths, one-signed and all-zero inputs, exact ties
// (which round half to even) and the saturated ends, for one input and
// for two side by side, and names a NaN or infinite element wherever it
// is (in the AVX2 head or the tail); on the AVX2 path and the pure-Go
// one.
func TestDynQuantizeMatchesReference(t *testing.T) {
	paths := []bool{false}
	if dynAVX2 {
		paths = append(paths, true)
	}
	defer func(v bool) { dynAVX2 = v }(dynAVX2)
	for _, avx := range paths {
		dynAVX2 = avx
		t.Run(map[bool]string{false: "go", true: "avx2"}[avx], testDynQuantize)
	}
}

func testDynQuantize(t *testing.T) {
	rng := tensor.NewRNG(21)
	random := func(n int, mean, std float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(mean + std*rng.NormFloat64())
		}
		return x
	}
	cases := []struct {
		name   string
		m, ka  int
		kb     int
		a, b   []float32
		adjust func(a, b []float32)
	}{
		{name: "1x1", m: 1, ka: 1},
		{name: "7x13", m: 7, ka: 13},
		{name: "65x100", m: 65, ka: 100},
		{name: "concat 9x(7+11)", m: 9, ka: 7, kb: 11},
		{name: "concat 3x(1+30)", m: 3, ka: 1, kb: 30},
		{name: "positive 5x9", m: 5, ka: 9, adjust: func(a, _ []float32) {
			for i := range a {
				a[i] = float32(math.Abs(float64(a[i])))
			}
		}},
		{name: "negative 4x3", m: 4, ka: 3, adjust: func(a, _ []float32) {
			for i := range a {
				a[i] = -float32(math.Abs(float64(a[i]))) - 0.1
			}
		}},
		{name: "zeros 3x4", m: 3, ka: 4, adjust: func(a, _ []float32) { clear(a) }},
		{name: "ties", m: 1, ka: 9, a: []float32{0, 255, 0.5, 1.5, 2.5, 3.5, 253.5, 254.5, 127.5}},
		{name: "ties 2x17", m: 2, ka: 17, a: []float32{0, 255, 0.5, 1.5, 2.5, 3.5, 253.5, 254.5, 127.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5,
			-0, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5, 27.5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := c.a, c.b
			if a == nil {
				a, b = random(c.m*c.ka, 0.2, 1.5), random(c.m*c.kb, -0.4, 3)
			}
			if c.adjust != nil {
				c.adjust(a, b)
			}
			k := c.ka + c.kb
			cat := make([]float32, 0, c.m*k)
			for i := range c.m {
				cat = append(cat, a[i*c.ka:(i+1)*c.ka]...)
				cat = append(cat, b[i*c.kb:(i+1)*c.kb]...)
			}
			want := make([]uint8, len(cat))
			ws, wz, err := qgemm.DynamicQuantizeLinear(cat, want)
			require.NoError(t, err)
			got := make([]uint8, len(cat))
			gs, gz, err := dynQuantizeRows(c.m, c.ka, c.kb, a, b, got)
			require.NoError(t, err)
			require.Equal(t, ws, gs)
			require.Equal(t, wz, gz)
			require.Equal(t, want, got)
		})
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		for _, at := range []int{3, 11, 17} {
			a := make([]float32, 19)
			for i := range a {
				a[i] = float32(i) - 4
			}
			a[at] = bad
			_, _, err := dynQuantizeRows(1, 19, 0, a, nil, make([]uint8, 19))
			require.ErrorContains(t, err, fmt.Sprintf("input element %d is", at))
			_, _, err = dynQuantizeRows(1, 2, 19, []float32{0, 1}, a, make([]uint8, 21))
			require.ErrorContains(t, err, fmt.Sprintf("second input's element %d is", at))
		}
	}
}
