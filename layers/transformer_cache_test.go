package layers

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// gatherRows returns x's rows rows along axis 0.
func gatherRows(t *testing.T, x *tensor.Tensor, rows []int) *tensor.Tensor {
	t.Helper()
	idx := make([]int64, len(rows))
	for i, r := range rows {
		idx[i] = int64(r)
	}
	g, err := ops.Gather(x, tensor.MustFromSlice(idx, len(idx)), 0)
	require.NoError(t, err)
	return g
}

// Step over the cache gives, at every position, what Forward over the
// whole prefix with the causal mask gives at its last position: pre- and
// post-norm, float32 and float64, a ragged memory, and a Reorder in the
// middle that tiles and permutes the rows as beam search does (the
// reference then runs on the gathered prefixes and memory).
func TestTransformerDecoderStepMatchesForward(t *testing.T) {
	const b, tk, d, steps = 3, 5, 16, 7
	lengths := []int{5, 2, 4}
	reorderAt, rows := 3, []int{2, 0, 0, 1}
	for _, tc := range []struct {
		name    string
		preNorm bool
		dt      tensor.DType
		tol     float64
	}{
		{"post_norm_f32", false, tensor.Float32, 2e-5},
		{"pre_norm_f32", true, tensor.Float32, 2e-5},
		{"post_norm_f64", false, tensor.Float64, 1e-12},
		{"pre_norm_f64", true, tensor.Float64, 1e-12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewTransformerDecoderLayer("dec", TransformerConfig{DModel: d, Heads: 4, FF: 24, PreNorm: tc.preNorm}, tensor.NewRNG(3), DType(tc.dt))
			require.NoError(t, err)
			mem, err := randn(11, b, tk, d).Cast(tc.dt)
			require.NoError(t, err)
			y, err := randn(12, b, steps, d).Cast(tc.dt)
			require.NoError(t, err)
			memLengths := lengths

			c, err := l.NewCache(graph.NewEvalTape().Const(mem), memLengths, steps)
			require.NoError(t, err)
			for i := range steps {
				if i == reorderAt {
					require.NoError(t, c.Reorder(rows))
					mem, y = gatherRows(t, mem, rows), gatherRows(t, y, rows)
					memLengths = []int{lengths[2], lengths[0], lengths[0], lengths[1]}
				}
				require.Equal(t, i, c.Len())
				tape := graph.NewEvalTape()
				yv := tape.Const(y)
				got, err := l.Step(graph.Slice(yv, 1, i, i+1), c).Tensor()
				require.NoError(t, err)
				full := l.Forward(graph.Slice(yv, 1, 0, i+1), tape.Const(mem), nil, ops.AttentionAttrs{}, ops.AttentionAttrs{KeyLengths: memLengths})
				want, err := graph.Slice(full, 1, i, i+1).Tensor()
				require.NoError(t, err)
				require.Equal(t, want.Shape(), got.Shape())
				for j := range want.Size() {
					require.InDelta(t, want.At(j), got.At(j), tc.tol, "step %d element %d", i, j)
				}
			}
			require.Equal(t, steps, c.Len())
			require.Equal(t, len(rows), c.Rows())
		})
	}
}

// A Reorder that keeps every row in place copies nothing and changes
// nothing; one within the same sources keeps the memory's keys (no
// gather), and one that changes a row's source gathers them.
func TestTransformerDecoderCacheReorderSharing(t *testing.T) {
	l, err := NewTransformerDecoderLayer("dec", TransformerConfig{DModel: 8, Heads: 2, FF: 8}, tensor.NewRNG(1))
	require.NoError(t, err)
	mem := randn32(2, 2, 3, 8)
	c, err := l.NewCache(graph.NewEvalTape().Const(mem), []int{3, 1}, 4)
	require.NoError(t, err)
	_, err = l.Step(graph.NewEvalTape().Const(randn32(3, 2, 1, 8)), c).Tensor()
	require.NoError(t, err)

	k, selfK := c.crossK, c.selfK
	require.NoError(t, c.Reorder([]int{0, 1}))
	require.Same(t, k, c.crossK)
	require.Same(t, selfK, c.selfK)

	require.NoError(t, c.Reorder([]int{0, 0, 1, 1})) // tile: the memory is gathered
	require.NotSame(t, k, c.crossK)
	require.Equal(t, []int{3, 3, 1, 1}, c.memLengths)
	k = c.crossK
	require.NoError(t, c.Reorder([]int{1, 1, 3, 2})) // within each source: shared
	require.Same(t, k, c.crossK)
	require.NoError(t, c.Reorder([]int{2, 0, 1, 3})) // rows change source
	require.NotSame(t, k, c.crossK)
	require.Equal(t, []int{1, 3, 3, 1}, c.memLengths)
}

// Mistakes come back as errors naming what was wrong.
func TestTransformerDecoderCacheErrors(t *testing.T) {
	l, err := NewTransformerDecoderLayer("dec", TransformerConfig{DModel: 8, Heads: 2, FF: 8}, tensor.NewRNG(1))
	require.NoError(t, err)
	mem := graph.NewEvalTape().Const(randn32(2, 2, 3, 8))
	for _, tc := range []struct {
		name    string
		memory  *graph.Value
		lengths []int
		maxLen  int
		want    string
	}{
		{"max_len", mem, nil, 0, "maxLen 0"},
		{"lengths_count", mem, []int{3}, 4, "1 memory lengths for a memory of 2 rows"},
		{"length_range", mem, []int{3, 4}, 4, "memory length 4 of row 1 outside [0, 3]"},
		{"memory_shape", graph.NewEvalTape().Const(randn32(2, 2, 3, 5)), nil, 4, "memory [2 3 5]; want [B, Tk, 8]"},
		{"nil_memory", nil, nil, 4, "nil memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.NewCache(tc.memory, tc.lengths, tc.maxLen)
			require.ErrorContains(t, err, tc.want)
		})
	}

	c, err := l.NewCache(mem, nil, 1)
	require.NoError(t, err)
	_, err = l.Step(graph.NewEvalTape().Const(randn32(3, 3, 1, 8)), c).Tensor()
	require.ErrorContains(t, err, "x [3 1 8]; want [2, 1, 8]")
	_, err = l.Step(graph.NewTape().Const(randn32(3, 2, 1, 8)), c).Tensor()
	require.ErrorContains(t, err, "a training tape")
	_, err = l.Step(graph.NewEvalTape().Const(randn32(3, 2, 1, 8)), c).Tensor()
	require.NoError(t, err)
	_, err = l.Step(graph.NewEvalTape().Const(randn32(3, 2, 1, 8)), c).Tensor()
	require.ErrorContains(t, err, "holds its maximum 1 positions")
	require.ErrorContains(t, c.Reorder([]int{0, 2}), "row 2 of a cache of 2 rows")
	require.ErrorContains(t, c.Reorder(nil), "no rows")
	require.Equal(t, 1, c.Len())
}
