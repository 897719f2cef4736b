package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/tensor"
)

// A cache compiles one plan per input signature and reuses it; the
// offsets of a ragged batch, named Static, key the plan by their values;
// the oldest plan goes once Size are held.
func TestCache(t *testing.T) {
	m, err := sentiment.New("cnn", 50, tensor.NewRNG(2))
	require.NoError(t, err)
	forward := func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		off, err := in[1].Ints()
		if err != nil {
			return tape.Fail(err)
		}
		return m.Logits(tape, &tensor.Ragged{Values: in[0], Offsets: off})
	}
	c, err := infer.NewCache(forward, infer.CacheOptions{Size: 2, Static: []int{1}})
	require.NoError(t, err)
	ids := idsOf(1, 50, []int{5, 7})
	offA := tensor.MustFromSlice([]int64{0, 5, 12}, 3)
	offB := tensor.MustFromSlice([]int64{0, 6, 12}, 3)
	p1, err := c.Plan(ids, offA)
	require.NoError(t, err)
	p2, err := c.Plan(idsOf(2, 50, []int{5, 7}), offA) // same shape and offsets: the same plan
	require.NoError(t, err)
	require.Same(t, p1, p2)
	p3, err := c.Plan(ids, offB) // other offsets: another plan
	require.NoError(t, err)
	require.NotSame(t, p1, p3)
	require.Equal(t, 2, c.Len())

	for _, off := range []*tensor.Tensor{offA, offB} {
		out := tensor.Empty(tensor.Float32, 2, 2)
		require.NoError(t, c.Run(out, ids, off))
		want, err := forward(graph.NewEvalTape(), []*tensor.Tensor{ids, off}).Tensor()
		require.NoError(t, err)
		requireClose(t, want, out, 1e-5)
	}
	_, err = c.Plan(idsOf(3, 50, []int{4, 4}), tensor.MustFromSlice([]int64{0, 4, 8}, 3)) // a third: the oldest goes
	require.NoError(t, err)
	require.Equal(t, 2, c.Len())
	p4, err := c.Plan(ids, offB) // used last before the third: still held
	require.NoError(t, err)
	require.Same(t, p3, p4)
	p5, err := c.Plan(ids, offA) // the oldest, dropped: compiled again
	require.NoError(t, err)
	require.NotSame(t, p1, p5)
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := c.Plan(ids, offA); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs, "looking up a held plan")

	_, err = c.Plan(ids, nil)
	require.ErrorContains(t, err, "input 1 is nil")
	_, err = c.Plan(ids, tensor.MustFromSlice([]float32{0, 1}, 2))
	require.ErrorContains(t, err, "static input 1 is not an integer input")
	_, err = infer.NewCache(nil, infer.CacheOptions{})
	require.Error(t, err)
	_, err = infer.NewCache(forward, infer.CacheOptions{Size: -1})
	require.ErrorContains(t, err, "negative size")
}
