package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// TestAccumulateLeavesSharedTermsAlone: reshape hands on its upstream
// gradient's storage, so u's first term (from the reshape, the last op
// that reads u) is r's gradient too. u is read three times (the third term
// is added in place into u's own sum); r, v and the loss's gradients must
// not change.
func TestAccumulateLeavesSharedTermsAlone(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		cast := func(v *tensor.Tensor, dt tensor.DType) *tensor.Tensor {
			c, err := v.Cast(dt)
			require.NoError(t, err)
			return c
		}
		tape := NewTape()
		tape.SetRetainGraph(true) // r, s and y's gradients are read below
		u := tape.Var(cast(vector(1, 2), dt))
		v := tape.Var(cast(vector(3, 4), dt))
		s := Add(u, v)
		w := Add(s, u)
		r := Reshape(u, 2)
		y := Add(w, r)
		require.NoError(t, tape.BackwardWith(y, cast(vector(1, 10), dt)))
		require.Equal(t, []float64{3, 30}, cast(u.Grad(), tensor.Float64).Float64s(), "%v", dt)
		require.Equal(t, []float64{1, 10}, cast(r.Grad(), tensor.Float64).Float64s(), "%v", dt)
		require.Equal(t, []float64{1, 10}, cast(v.Grad(), tensor.Float64).Float64s(), "%v", dt)
		require.Equal(t, []float64{1, 10}, cast(s.Grad(), tensor.Float64).Float64s(), "%v", dt)
		require.Equal(t, []float64{1, 10}, cast(y.Grad(), tensor.Float64).Float64s(), "%v", dt)
	}
}

// TestAccumulateManyReadsAndTwoBackwards: a value read k times gets the sum
// of its k terms, and a second backward (of a retained graph) starts the
// sums afresh.
func TestAccumulateManyReadsAndTwoBackwards(t *testing.T) {
	for _, k := range []int{1, 2, 3, 7} {
		tape := NewTape()
		tape.SetRetainGraph(true)
		x := tape.Var(vector(1, -2))
		h := Mul(x, x) // read k times below
		acc := h
		for range k - 1 {
			acc = Add(acc, h)
		}
		for range 2 {
			require.NoError(t, tape.BackwardWith(acc, ones(2)))
			require.Equal(t, []float64{float64(k), float64(k)}, h.Grad().Float64s(), "k %d", k)
			require.Equal(t, []float64{2 * float64(k), -4 * float64(k)}, x.Grad().Float64s(), "k %d", k)
		}
	}
}
