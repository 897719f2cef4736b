package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// ReleaseSince ends the values made since the mark, except those kept,
// the parameters and what came before the mark, and reuses their storage
// without touching what a kept value, a view of one or a tensor handed to
// the caller shares.
func TestReleaseSince(t *testing.T) {
	rng := tensor.NewRNG(6)
	mk := func(shape ...int) *tensor.Tensor { return randF32(t, rng, shape...) }
	tape := NewEvalTape()
	w := NewParam("w", mk(64, 64))
	before := Tanh(tape.Const(mk(8, 64)))
	mark := tape.Mark()

	a := Linear(before, tape.Param(w), nil) // ended
	view := Reshape(Neg(a), 64, 8)          // kept: Neg(a) is a view's source
	dead := Tanh(a)                         // ended
	handed, err := Sigmoid(dead).Tensor()   // handed to the caller
	require.NoError(t, err)
	want := map[string][]float32{"before": nil, "view": nil, "handed": slicesClone(handed.Float32s())}
	for name, v := range map[string]*Value{"before": before, "view": view} {
		want[name] = slicesClone(v.t.Float32s()) // not Tensor: that would keep them whatever ReleaseSince does
	}

	require.NoError(t, tape.ReleaseSince(mark, view))
	for _, v := range []*Value{a, dead} {
		require.ErrorContains(t, v.Err(), "ReleaseSince", "an ended value")
	}
	require.ErrorContains(t, Tanh(dead).Err(), "ReleaseSince")

	// New outputs of the ended sizes take the pool's storage; the kept,
	// earlier and handed-out tensors keep their values.
	for range 4 {
		_, err := Neg(Linear(before, tape.Param(w), nil)).Tensor()
		require.NoError(t, err)
	}
	for name, v := range map[string]*Value{"before": before, "view": view} {
		x, err := v.Tensor()
		require.NoError(t, err, name)
		require.Equal(t, want[name], x.Float32s(), name)
	}
	require.Equal(t, want["handed"], handed.Float32s())
	require.NoError(t, tape.Param(w).Err(), "a parameter stays")
	require.Equal(t, len(tape.values), tape.Mark())

	require.ErrorContains(t, tape.ReleaseSince(tape.Mark()+1), "outside")
	require.ErrorContains(t, tape.ReleaseSince(-1), "outside")
	require.ErrorContains(t, NewTape().ReleaseSince(0), "records")
	require.ErrorContains(t, (*Tape)(nil).ReleaseSince(0), "nil tape")
}

func slicesClone(x []float32) []float32 { return append([]float32(nil), x...) }
