package optim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

func TestClipGlobalNorm(t *testing.T) {
	cases := []struct {
		name     string
		maxNorm  float64
		wantNorm float64
		wantA    []float64 // float32 gradient
		wantB    []float64 // float64 gradient
	}{
		{"clipped", 2.5, 5, []float64{1.5, 0}, []float64{0, -2}},
		{"under the bound", 10, 5, []float64{3, 0}, []float64{0, -4}},
		{"at the bound", 5, 5, []float64{3, 0}, []float64{0, -4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := param[float32]("a", 0, 0)
			grad[float32](a, 3, 0)
			b := param[float64]("b", 0, 0)
			grad[float64](b, 0, -4)
			none := param[float64]("none", 1)
			norm, err := ClipGlobalNorm([]*graph.Param{a, none, b}, c.maxNorm)
			require.NoError(t, err)
			assert.InDelta(t, c.wantNorm, norm, 1e-12)
			assert.InDeltaSlice(t, c.wantA, values(a.Grad), 1e-6)
			assert.InDeltaSlice(t, c.wantB, values(b.Grad), 1e-12)
			assert.Nil(t, none.Grad)
		})
	}
}

func TestClipGlobalNormNonFinite(t *testing.T) {
	a := param[float32]("a", 0, 0)
	grad[float32](a, math.Inf(1), 1)
	b := param[float64]("b", 0)
	grad[float64](b, 1)
	norm, err := ClipGlobalNorm([]*graph.Param{a, b}, 1)
	require.NoError(t, err)
	assert.True(t, math.IsInf(norm, 1))
	for _, v := range append(values(a.Grad), values(b.Grad)...) {
		assert.True(t, math.IsNaN(v), "TF turns every gradient into NaN")
	}
}

func TestClipGlobalNormErrors(t *testing.T) {
	ok := param[float32]("a", 1)
	ints := param[float32]("ints", 1)
	ints.Grad = tensor.MustFromSlice([]int32{1})
	cases := []struct {
		name    string
		params  []*graph.Param
		maxNorm float64
		want    string
	}{
		{"zero bound", []*graph.Param{ok}, 0, "ClipGlobalNorm 0"},
		{"NaN bound", []*graph.Param{ok}, math.NaN(), "ClipGlobalNorm NaN"},
		{"nil param", []*graph.Param{ok, nil}, 1, "parameter 1 is nil"},
		{"int gradient", []*graph.Param{ints}, 1, `gradient of "ints" is int32`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ClipGlobalNorm(c.params, c.maxNorm)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
