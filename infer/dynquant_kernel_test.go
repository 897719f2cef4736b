package infer

import (
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
// for two side by side.
func TestDynQuantizeMatchesReference(t *testing.T) {
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
		a := []float32{1, 2, 3, bad, 5}
		_, _, err := dynQuantizeRows(1, 5, 0, a, nil, make([]uint8, 5))
		require.ErrorContains(t, err, "input element 3 is")
		_, _, err = dynQuantizeRows(1, 2, 5, []float32{0, 1}, a, make([]uint8, 7))
		require.ErrorContains(t, err, "second input's element 3 is")
	}
}
