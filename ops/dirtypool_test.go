package ops

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// TestOutputsFromDirtyPool runs every gradient case's op forward and
// backward (all its differentiable inputs), in float64 and float32, once
// as it is and once after filling the tensor pool with tensors of each
// result's size holding NaN (or, for integers, a large value), and wants
// bit-identical results. Ops take storage for their outputs and gradients
// from that pool, uninitialized (tensor.Empty) where their kernels write
// every element, zeroed where they add into it: an op that takes it
// uninitialized and leaves a cell unwritten, or adds into it, fails here.
// The kernels' scratch pools get NaN-filled buffers too (dirtyScratch).
// Under -race the pool drops entries at random, so this test can then only
// pass.
func TestOutputsFromDirtyPool(t *testing.T) {
	names := make([]string, 0, len(gradCases))
	for n := range gradCases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, c := range gradCases[n] {
			for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
				t.Run(n+"/"+c.name+"/"+dt.String(), func(t *testing.T) {
					in := make([]*tensor.Tensor, len(c.in))
					for i, x := range c.in {
						in[i] = x
						if dt == tensor.Float32 && x.DType() == tensor.Float64 {
							in[i] = f32(x)
						}
					}
					mk := c.builder(t, n)
					run := func() []*tensor.Tensor {
						op := mk()
						y, err := op.Forward(in)
						require.NoError(t, err)
						gout, err := tensor.RandNormal(tensor.NewRNG(7), y.DType(), 0, 1, y.Shape()...)
						require.NoError(t, err)
						need := make([]bool, len(in))
						for _, i := range c.wrt {
							need[i] = true
						}
						grads, err := op.Backward(in, y, gout, need)
						require.NoError(t, err)
						out := []*tensor.Tensor{y.Clone()}
						for _, g := range grads {
							if g != nil {
								out = append(out, g.Clone())
							}
						}
						return out
					}
					want := run()
					for i, o := range want { // else a dirty scratch buffer already leaked into it
						for j := range o.Size() {
							require.False(t, math.IsNaN(o.At(j)), "result %d element %d is NaN on the first run", i, j)
						}
					}
					for _, o := range want {
						poisonPool(t, o.DType(), o.Shape())
					}
					dirtyScratch()
					got := run()
					require.Len(t, got, len(want))
					for i := range want {
						requireIdentical(t, want[i], got[i], i)
					}
				})
			}
		}
	}
}

// poisonPool puts three tensors of each shape into the tensor pool, NaN
// for floats and 1<<30 for integers, where the next tensor.Empty of that
// size takes one: a kernel that leaves a cell of such an output unwritten
// then shows it.
func poisonPool(t *testing.T, dt tensor.DType, shapes ...tensor.Shape) {
	v := math.NaN()
	if dt == tensor.Int32 || dt == tensor.Int64 {
		v = 1 << 30
	}
	var r tensor.Recycler
	for _, sh := range shapes {
		for range 3 {
			x, err := tensor.Full(dt, v, sh...)
			require.NoError(t, err)
			r.Add(x)
		}
	}
	r.Flush()
}

// dirtyScratch puts NaN-filled buffers into the kernels' scratch pools,
// which hand out buffers with undefined contents: a kernel that reads a
// scratch element it did not write then fails TestOutputsFromDirtyPool.
func dirtyScratch() {
	for range 4 {
		s32 := getScratch[float32](1 << 14)
		for i := range *s32 {
			(*s32)[i] = float32(math.NaN())
		}
		putScratch(s32)
		s64 := getScratch[float64](1 << 14)
		for i := range *s64 {
			(*s64)[i] = math.NaN()
		}
		putScratch(s64)
	}
}

// requireIdentical checks that got holds exactly want's elements, NaN
// included.
func requireIdentical(t *testing.T, want, got *tensor.Tensor, i int) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), "result %d shape", i)
	for j := range want.Size() {
		w, g := want.At(j), got.At(j)
		require.True(t, math.Float64bits(w) == math.Float64bits(g) || (math.IsNaN(w) && math.IsNaN(g)),
			"result %d element %d: want %v, got %v", i, j, w, g)
	}
}
