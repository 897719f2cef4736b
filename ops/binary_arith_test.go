package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The arithmetic loops give the table kernel's results bit for bit, for
// both dtypes, under every kind of broadcasting (same shape; a per-channel
// [1, C, 1, 1] operand, on either side; rows; a scalar; an outer product).
func TestArithKernelsEqualTheTableKernels(t *testing.T) {
	shapes := []struct {
		name string
		a, b []int
	}{
		{"same", []int{2, 3, 4, 5}, []int{2, 3, 4, 5}},
		{"channel", []int{2, 3, 4, 5}, []int{1, 3, 1, 1}},
		{"channel_first", []int{1, 3, 1, 1}, []int{2, 3, 4, 5}},
		{"row", []int{6, 7}, []int{7}},
		{"scalar", []int{}, []int{3, 4}},
		{"outer", []int{4, 1}, []int{1, 3}},
	}
	for _, name := range []string{"add", "sub", "mul", "div"} {
		op, fn := arithOf(name), binaryFns[name]
		for i, s := range shapes {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
				t.Run(name+"/"+s.name+"/"+dt.String(), func(t *testing.T) {
					a, err := randu(uint64(30+i), 0.5, 2, s.a...).Cast(dt)
					require.NoError(t, err)
					b, err := randu(uint64(40+i), -2, -0.5, s.b...).Cast(dt)
					require.NoError(t, err)
					shape, err := BroadcastShapes(a.Shape(), b.Shape())
					require.NoError(t, err)
					st := [][]int{bcastStrides(a.Shape(), shape), bcastStrides(b.Shape(), shape)}
					gout := randn(uint64(50+i), shape...)
					if dt == tensor.Float32 {
						gout, err = gout.Cast(dt)
						require.NoError(t, err)
						compareArith(t, op, fn, a.Float32s(), b.Float32s(), gout.Float32s(), shape, st)
					} else {
						compareArith(t, op, fn, a.Float64s(), b.Float64s(), gout.Float64s(), shape, st)
					}
				})
			}
		}
	}
}

func compareArith[T tensor.Float](t *testing.T, op arith, fn binaryFn, a, b, gout []T, shape tensor.Shape, st [][]int) {
	n := shape.Size()
	want, got := make([]T, n), make([]T, n)
	binaryKernel(a, b, want, shape, st, fn.f)
	arithKernel(op, a, b, got, shape, st)
	require.Equal(t, want, got, "forward")
	for k, d := range []func(a, b, y float64) float64{fn.da, fn.db} {
		gw, gg := make([]T, n), make([]T, n)
		binaryGradKernel(a, b, want, gout, gw, shape, st, d)
		arithGrad(op, k, a, b, want, gout, gg, shape, st)
		require.Equal(t, gw, gg, "gradient of input %d", k)
	}
}

// BenchmarkResidualAdd is the forward and backward of one ResNet-32
// residual add ([128, 16, 32, 32] float32, as in the first stage) and of
// the input normalisation's division by a [1, 3, 1, 1] deviation, on the
// table kernel and on the arithmetic loops, in one run.
func BenchmarkResidualAdd(b *testing.B) {
	for _, c := range []struct {
		name      string
		a, bshape []int
		op        string
	}{
		{"add", []int{128, 16, 32, 32}, []int{128, 16, 32, 32}, "add"},
		{"div_channel", []int{128, 3, 32, 32}, []int{1, 3, 1, 1}, "div"},
	} {
		x, err := randu(1, 0.5, 2, c.a...).Cast(tensor.Float32)
		require.NoError(b, err)
		y, err := randu(2, 0.5, 2, c.bshape...).Cast(tensor.Float32)
		require.NoError(b, err)
		shape, err := BroadcastShapes(x.Shape(), y.Shape())
		require.NoError(b, err)
		st := [][]int{bcastStrides(x.Shape(), shape), bcastStrides(y.Shape(), shape)}
		n := shape.Size()
		out, g, gout := make([]float32, n), make([]float32, n), make([]float32, n)
		fn := binaryFns[c.op]
		b.Run(c.name+"/table", func(b *testing.B) {
			for range b.N {
				binaryKernel(x.Float32s(), y.Float32s(), out, shape, st, fn.f)
				binaryGradKernel(x.Float32s(), y.Float32s(), out, gout, g, shape, st, fn.da)
				binaryGradKernel(x.Float32s(), y.Float32s(), out, gout, g, shape, st, fn.db)
			}
		})
		b.Run(c.name+"/arith", func(b *testing.B) {
			for range b.N {
				arithKernel(arithOf(c.op), x.Float32s(), y.Float32s(), out, shape, st)
				arithGrad(arithOf(c.op), 0, x.Float32s(), y.Float32s(), out, gout, g, shape, st)
				arithGrad(arithOf(c.op), 1, x.Float32s(), y.Float32s(), out, gout, g, shape, st)
			}
		})
	}
}
