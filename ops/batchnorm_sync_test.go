package ops

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// sumGroup is an in-process allreduce over n goroutines, standing in for
// dist's: each sum call waits for all n and returns their element-wise sum.
type sumGroup struct {
	mu                sync.Mutex
	cond              *sync.Cond
	n, arrived, gen   int
	acc, done         []float64
	calls, wantLength int
}

func newSumGroup(n int) *sumGroup {
	g := &sumGroup{n: n}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *sumGroup) sum(buf []float64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.arrived == 0 {
		g.acc, g.wantLength = make([]float64, len(buf)), len(buf)
	} else if len(buf) != g.wantLength {
		return fmt.Errorf("sum of %d elements where another replica sent %d", len(buf), g.wantLength)
	}
	for i, v := range buf {
		g.acc[i] += v
	}
	g.arrived++
	if gen := g.gen; g.arrived == g.n {
		g.done, g.arrived = g.acc, 0
		g.gen++
		g.calls++
		g.cond.Broadcast()
	} else {
		for gen == g.gen {
			g.cond.Wait()
		}
	}
	copy(buf, g.done)
	return nil
}

// rowsOf returns rows [lo, hi) of x along axis 0, a copy.
func rowsOf(x *tensor.Tensor, lo, hi int) *tensor.Tensor {
	per := x.Size() / x.Dim(0)
	shape := append([]int{hi - lo}, x.Shape()[1:]...)
	out := tensor.Zeros(x.DType(), shape...)
	for i := range out.Size() {
		out.SetAt(i, x.At(lo*per+i))
	}
	return out
}

// scaled returns x·k.
func scaled(x *tensor.Tensor, k float64) *tensor.Tensor {
	out := x.Clone()
	for i := range out.Size() {
		out.SetAt(i, x.At(i)*k)
	}
	return out
}

// Batch norm with CrossReplica over replicas holding parts of a batch
// computes what one op over the whole batch computes: the same output
// rows, the same moving statistics on every replica, and gradients that,
// for replicas whose losses are means over their own examples (gout
// scaled by 1/w_r, w_r = the replica's share of the examples), give the
// whole batch's x gradient times 1/w_r and dgamma, dbeta whose
// w-weighted sum is the whole batch's (what data-parallel averaging
// forms). Uneven splits check the weighting.
func TestBatchNormCrossReplicaMatchesWholeBatch(t *testing.T) {
	tests := []struct {
		name  string
		dt    tensor.DType
		shape []int
		split []int // examples per replica
		tol   float64
	}{
		{"nchw/even/float64", tensor.Float64, []int{8, 3, 2, 3}, []int{4, 4}, 1e-12},
		{"nchw/uneven/float64", tensor.Float64, []int{8, 3, 2, 3}, []int{3, 5}, 1e-12},
		{"nc/three/float64", tensor.Float64, []int{9, 4}, []int{2, 3, 4}, 1e-12},
		{"nchw/uneven/float32", tensor.Float32, []int{6, 2, 3, 3}, []int{2, 4}, 2e-5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.shape[1]
			cast := func(x *tensor.Tensor) *tensor.Tensor {
				y, err := x.Cast(tc.dt)
				require.NoError(t, err)
				return y
			}
			in := bnInputs(91, c, tc.shape...)
			for i := range in {
				in[i] = cast(in[i])
			}
			gout := cast(randn(97, tc.shape...))
			total := tc.shape[0]

			whole := BatchNormOp(bnAttrs(true))
			wholeIn := []*tensor.Tensor{in[0], in[1], in[2], in[3].Clone(), in[4].Clone()}
			want, err := whole.Forward(wholeIn)
			require.NoError(t, err)
			wantGrads, err := whole.Backward(wholeIn, want, gout, []bool{true, true, true, false, false})
			require.NoError(t, err)

			g := newSumGroup(len(tc.split))
			type result struct {
				in    []*tensor.Tensor
				out   *tensor.Tensor
				grads []*tensor.Tensor
				err   error
			}
			res := make([]result, len(tc.split))
			var wg sync.WaitGroup
			lo := 0
			for r, n := range tc.split {
				w := float64(n) / float64(total)
				rin := []*tensor.Tensor{rowsOf(in[0], lo, lo+n), in[1], in[2], in[3].Clone(), in[4].Clone()}
				rg := scaled(rowsOf(gout, lo, lo+n), 1/w)
				lo += n
				wg.Go(func() {
					a := bnAttrs(true)
					a.CrossReplica = g.sum
					op := BatchNormOp(a)
					out, err := op.Forward(rin)
					if err != nil {
						res[r] = result{err: err}
						return
					}
					grads, err := op.Backward(rin, out, rg, []bool{true, true, true, false, false})
					res[r] = result{in: rin, out: out, grads: grads, err: err}
				})
			}
			wg.Wait()
			assert.Equal(t, 3, g.calls, "two sums forward, one backward")

			dgamma, dbeta := make([]float64, c), make([]float64, c)
			lo = 0
			for r, n := range tc.split {
				require.NoError(t, res[r].err, "replica %d", r)
				w := float64(n) / float64(total)
				assert.InDeltaSlice(t, floats64(rowsOf(want, lo, lo+n)), floats64(res[r].out), tc.tol, "replica %d output", r)
				assert.InDeltaSlice(t, floats64(wholeIn[3]), floats64(res[r].in[3]), tc.tol, "replica %d moving mean", r)
				assert.InDeltaSlice(t, floats64(wholeIn[4]), floats64(res[r].in[4]), tc.tol, "replica %d moving variance", r)
				assert.InDeltaSlice(t, floats64(scaled(rowsOf(wantGrads[0], lo, lo+n), 1/w)), floats64(res[r].grads[0]), 10*tc.tol, "replica %d dx", r)
				for ch := range c {
					dgamma[ch] += w * res[r].grads[1].At(ch)
					dbeta[ch] += w * res[r].grads[2].At(ch)
				}
				lo += n
			}
			assert.InDeltaSlice(t, floats64(wantGrads[1]), dgamma, 10*tc.tol, "weighted dgamma")
			assert.InDeltaSlice(t, floats64(wantGrads[2]), dbeta, 10*tc.tol, "weighted dbeta")
		})
	}
}

// A failing sum is an error naming batch_norm, forward and backward.
func TestBatchNormCrossReplicaError(t *testing.T) {
	in := bnInputs(5, 2, 4, 2, 3)
	calls := 0
	a := bnAttrs(true)
	a.CrossReplica = func([]float64) error {
		calls++
		if calls == 1 {
			return errors.New("rank 1 is gone")
		}
		return nil
	}
	_, err := BatchNormOp(a).Forward(in)
	require.ErrorContains(t, err, "batch_norm")
	require.ErrorContains(t, err, "rank 1 is gone")

	a.CrossReplica = func([]float64) error {
		calls++
		if calls == 4 {
			return errors.New("rank 1 is gone")
		}
		return nil
	}
	op := BatchNormOp(a)
	out, err := op.Forward(in)
	require.NoError(t, err)
	_, err = op.Backward(in, out, out, []bool{true, true, true, false, false})
	require.ErrorContains(t, err, "batch_norm")
	require.ErrorContains(t, err, "rank 1 is gone")
}

// floats64 returns t's elements as float64.
func floats64(t *tensor.Tensor) []float64 {
	out := make([]float64, t.Size())
	for i := range out {
		out[i] = t.At(i)
	}
	return out
}
