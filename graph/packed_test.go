package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// An inference tape packs a parameter's weights at their second use in a
// step and computes what a recording tape computes; Release drops the
// packing, so the next step sees weights changed in between. A recording
// tape, a weight that is not a parameter, and a first use pack nothing.
func TestLinearPacksOnInferenceTape(t *testing.T) {
	rng := tensor.NewRNG(5)
	mk := func(shape ...int) *tensor.Tensor { return randF32(t, rng, shape...) }
	w, b := NewParam("w", mk(40, 70)), NewParam("b", mk(70))
	x := mk(33, 40)
	want := func() *tensor.Tensor {
		tape := NewTape()
		y, err := Linear(tape.Const(x), tape.Param(w), tape.Param(b)).Tensor()
		require.NoError(t, err)
		require.Empty(t, tape.packs, "a recording tape packs nothing")
		return y
	}

	tape := NewEvalTape()
	for use := 1; use <= 3; use++ {
		got, err := Linear(tape.Const(x), tape.Param(w), tape.Param(b)).Tensor()
		require.NoError(t, err)
		require.Equal(t, want().Float32s(), got.Float32s(), "use %d", use)
		require.Equal(t, use >= 2, tape.packs[w].w != nil, "use %d", use)
	}
	packing := tape.packs[w].w

	tape.Release()
	require.Empty(t, tape.packs)
	w.Value.Float32s()[0] += 1
	for range 2 {
		got, err := Linear(tape.Const(x), tape.Param(w), tape.Param(b)).Tensor()
		require.NoError(t, err)
		require.Equal(t, want().Float32s(), got.Float32s())
	}
	require.NotSame(t, packing, tape.packs[w].w)

	c := tape.Const(w.Value)
	for range 2 {
		_, err := Linear(tape.Const(x), c, nil).Tensor()
		require.NoError(t, err)
	}
	require.Len(t, tape.packs, 1, "a constant weight is not packed")
}

// A GRU cell on an inference tape packs W and U from their second use and
// steps as a recording tape does.
func TestGRUCellPacksOnInferenceTape(t *testing.T) {
	rng := tensor.NewRNG(7)
	mk := func(shape ...int) *tensor.Tensor { return randF32(t, rng, shape...) }
	w, u, b := NewParam("w", mk(12, 30)), NewParam("u", mk(10, 30)), NewParam("b", mk(2, 30))
	x, h0 := mk(20, 12), mk(20, 10)
	steps := func(tape *Tape) [][]float32 {
		weights := GRUWeights{W: tape.Param(w), U: tape.Param(u), B: tape.Param(b), ResetAfter: true}
		h, out := tape.Const(h0), [][]float32(nil)
		for range 3 {
			h = GRUCell(tape.Const(x), h, weights)
			y, err := h.Tensor()
			require.NoError(t, err)
			out = append(out, y.Float32s())
		}
		return out
	}
	tape := NewEvalTape()
	require.Equal(t, steps(NewTape()), steps(tape))
	require.NotNil(t, tape.packs[w].w)
	require.NotNil(t, tape.packs[u].w)
}

// randF32 is a float32 tensor of the shape drawn from N(0, 1).
func randF32(t *testing.T, rng *rand.Rand, shape ...int) *tensor.Tensor {
	x, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, shape...)
	require.NoError(t, err)
	return x
}
