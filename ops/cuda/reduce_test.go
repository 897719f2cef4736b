//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

func TestReduce(t *testing.T) {
	rng := tensor.NewRNG(41)
	for _, c := range []struct {
		shape, axes []int
	}{
		{[]int{4, 10}, []int{1}},
		{[]int{3, 5, 7}, []int{0, 2}},
		{[]int{3, 5, 7}, []int{1}},
		{[]int{3, 5, 7}, nil},
		{[]int{2, 1, 513}, []int{-1}},
		{[]int{127, 3}, []int{0}},
		{[]int{17, 1, 3, 4}, []int{0, 1, 3}},
		{[]int{6, 200}, []int{0}},     // kept inner axis: tiles of outputs, one chunk
		{[]int{100, 6}, []int{0}},     // one tile over four chunks
		{[]int{300, 70}, []int{0}},    // three tiles over ten chunks
		{[]int{3, 2, 1029}, []int{2}}, // rows longer than a block
		{[]int{1, 1}, nil},
		{[]int{5, 0, 3}, []int{1}}, // an empty axis: TF's identities
		{[]int{0, 3}, []int{1}},    // no outputs
	} {
		for name := range reduceCodes {
			for _, keep := range []bool{false, true} {
				t.Run(fmt.Sprint(name, c.shape, c.axes, keep), func(t *testing.T) {
					x := randn(t, rng, c.shape...)
					xs := x.Float32s()
					switch name {
					case "max", "min": // coarse values, so that extremes tie
						for i, v := range xs {
							xs[i] = float32(math.Round(float64(v)*2) / 2)
						}
					case "logsumexp":
						if len(xs) > 0 {
							xs[0] = 80 // the shift must keep exp finite
						}
					}
					op := ops.ReduceOp(name, c.axes, keep)
					out, err := op.Forward([]*tensor.Tensor{x})
					require.NoError(t, err)
					gout := randn(t, rng, out.Shape()...)
					want, grads := cpuOp(t, ops.ReduceOp(name, c.axes, keep), []*tensor.Tensor{x}, gout, []bool{true})
					o := dev.reduceOp(name, c.axes, keep)
					defer o.Free()
					y, err := o.Forward(up(t, x))
					require.NoError(t, err)
					defer y.Free()
					requireClose(t, want, y, tolReduce, "forward")
					dx, err := o.Backward(up(t, gout))
					require.NoError(t, err)
					defer dx.Free()
					requireClose(t, grads[0], dx, tolReduce, "backward")
				})
			}
		}
	}
	x := up(t, randn(t, rng, 2, 3))
	_, err := ops.Run(ops.ReduceOp("sum", []int{1, -1}, false), onDevice(t, randn(t, rng, 2, 3))) // ops.Dispatch's check
	require.ErrorContains(t, err, "repeated")
	_, err = dev.reduceOp("sum", []int{2}, false).Forward(x)
	require.Error(t, err)
	_, err = dev.reduceOp("median", nil, false).Forward(x)
	require.ErrorContains(t, err, "unknown reduction")
}

// A kernel's Backward follows its Forward and takes gout of the output's
// shape: the generic op (op.go) checks both, once for every kernel.
func TestKernelBackwardChecks(t *testing.T) {
	rng := tensor.NewRNG(24)
	x := onDevice(t, randn(t, rng, 2, 3))
	k, err := ops.Dispatch(ops.ReduceOp("sum", []int{0}, false), []*tensor.Tensor{x})
	require.NoError(t, err)
	_, err = k.Backward([]*tensor.Tensor{x}, nil, x, []bool{true})
	require.ErrorContains(t, err, "Backward before Forward")
	y, err := k.Forward([]*tensor.Tensor{x})
	require.NoError(t, err)
	t.Cleanup(y.Storage().Free)
	_, err = k.Backward([]*tensor.Tensor{x}, y, x, []bool{true})
	var oe *ops.Error
	require.ErrorAs(t, err, &oe)
	require.ErrorContains(t, err, "want gout of the output's shape [3]")
	_, err = k.Backward([]*tensor.Tensor{x}, y, nil, []bool{true})
	require.ErrorContains(t, err, "want gout of the output's shape [3]", "nil gout")
	k.(ops.Freer).Free()
	_, err = k.Backward([]*tensor.Tensor{x}, y, y, []bool{true})
	require.ErrorContains(t, err, "Backward before Forward", "Backward after Free")
}

// BenchmarkReduceSum sums [4096, 1024] over its last axis (a block per
// row) and over its first (tiles of 32 columns over chunks of rows, then
// the chunks' partials combined); GB/s counts reading x once.
func BenchmarkReduceSum(b *testing.B) {
	x := upB(b, 4096, 1024)
	for _, axis := range []int{1, 0} {
		b.Run(fmt.Sprint("axis", axis), func(b *testing.B) {
			o := dev.reduceOp("sum", []int{axis}, false)
			b.ResetTimer()
			for b.Loop() {
				y, err := o.Forward(x)
				if err != nil {
					b.Fatal(err)
				}
				y.Free()
			}
			b.ReportMetric(4096*1024*4*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
