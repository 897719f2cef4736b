package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The graph forms of erf, selu, mish, hard_swish, hard_sigmoid and prelu
// record the ops package's ops: their values equal the ops functions'.
func TestActivationsMatchOps(t *testing.T) {
	x := tensor.MustFromSlice([]float64{-3.5, -1.2, -0.3, 0.4, 1.7, 3.2}, 2, 3)
	slope := tensor.MustFromSlice([]float64{0.1, -0.2, 0.3}, 3)
	for _, c := range []struct {
		name string
		g    func(tape *Tape) *Value
		want func() (*tensor.Tensor, error)
	}{
		{"erf", func(tp *Tape) *Value { return Erf(tp.Var(x)) }, func() (*tensor.Tensor, error) { return ops.Erf(x) }},
		{"selu", func(tp *Tape) *Value { return Selu(tp.Var(x)) }, func() (*tensor.Tensor, error) { return ops.Selu(x) }},
		{"mish", func(tp *Tape) *Value { return Mish(tp.Var(x)) }, func() (*tensor.Tensor, error) { return ops.Mish(x) }},
		{"hard_swish", func(tp *Tape) *Value { return HardSwish(tp.Var(x)) }, func() (*tensor.Tensor, error) { return ops.HardSwish(x) }},
		{"hard_sigmoid", func(tp *Tape) *Value { return HardSigmoid(tp.Var(x), 0.2, 0.5) },
			func() (*tensor.Tensor, error) { return ops.HardSigmoid(x, 0.2, 0.5) }},
		{"prelu", func(tp *Tape) *Value { return PRelu(tp.Var(x), tp.Var(slope)) },
			func() (*tensor.Tensor, error) { return ops.PRelu(x, slope) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.g(NewTape()).Tensor()
			require.NoError(t, err)
			want, err := c.want()
			require.NoError(t, err)
			require.Equal(t, want.Float64s(), got.Float64s())
		})
	}
}

// On a tape, prelu's slope, broadcast over the leading axis, gets its
// gradient summed over that axis, as central differences of the whole net
// confirm.
func TestPReluGradientsOnTape(t *testing.T) {
	x := tensor.MustFromSlice([]float64{-1.5, -0.7, 0.6, 1.1, -0.2, 2.3, -2.1, 0.9, -0.8, 1.4, -1.9, 0.3}, 4, 3)
	slope := tensor.MustFromSlice([]float64{0.25, -0.1, 0.4}, 3)
	checkNetGradients(t, []*tensor.Tensor{x, slope}, func(vs []*Value) *Value {
		return Sum(Mul(PRelu(vs[0], vs[1]), vs[0]))
	})
}
