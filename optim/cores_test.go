package optim

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// A large parameter's update runs in chunks over the cores. Every rule is
// element-wise, so it gives, in both dtypes and over a few steps, the bits
// that the same values give as two parameters small enough to update
// whole, on one core or four.
func TestUpdateOverCoresMatchWhole(t *testing.T) {
	const n, cut = 100_003, 50_000
	for name, mk := range map[string]func([]*graph.Param, ...Option) (Optimizer, error){
		"sgd": NewSGD, "momentum": NewMomentum, "adam": NewAdam, "adamw": NewAdamW, "rmsprop": NewRMSProp, "adagrad": NewAdagrad,
	} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			// run steps the values as parameters of the sizes given and
			// returns them joined.
			run := func(procs int, sizes ...int) []float64 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				rng := tensor.NewRNG(3)
				// part is x's values at the parameters' places, cast to dt.
				part := func(x *tensor.Tensor, at, size int) *tensor.Tensor {
					c, err := tensor.MustFromSlice(slices.Clone(x.Float64s()[at:at+size]), size).Cast(dt)
					require.NoError(t, err)
					return c
				}
				v, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, n)
				require.NoError(t, err)
				var params []*graph.Param
				for at, size := range parts(sizes) {
					params = append(params, graph.NewParam(fmt.Sprint("p", at), part(v, at, size)))
				}
				opt, err := mk(params, LR(0.01))
				require.NoError(t, err)
				for range 3 {
					g, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, n)
					require.NoError(t, err)
					i := 0
					for at, size := range parts(sizes) {
						params[i].Grad = part(g, at, size)
						i++
					}
					require.NoError(t, opt.Step())
				}
				var out []float64
				for _, p := range params {
					for i := range p.Value.Size() {
						out = append(out, p.Value.At(i))
					}
				}
				return out
			}
			whole := run(4, cut, n-cut)
			require.Equal(t, whole, run(1, n), "%s %v on one core", name, dt)
			require.Equal(t, whole, run(4, n), "%s %v on four cores", name, dt)
		}
	}
}

// parts yields each part's start and size, for parts of the given sizes.
func parts(sizes []int) func(yield func(at, size int) bool) {
	return func(yield func(at, size int) bool) {
		at := 0
		for _, size := range sizes {
			if !yield(at, size) {
				return
			}
			at += size
		}
	}
}
