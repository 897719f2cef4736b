package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A small CNN of every conv and pool wrapper agrees with central differences.
func TestConvNetGradientMatchesNumeric(t *testing.T) {
	rng := tensor.NewRNG(5)
	randn := func(shape ...int) *tensor.Tensor {
		x, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, shape...)
		require.NoError(t, err)
		return x
	}
	in := []*tensor.Tensor{randn(2, 2, 4, 4), randn(3, 2, 3, 3), randn(3), randn(3, 2, 2, 2)}
	net := func(vs []*Value) *Value {
		h := Tanh(Conv2D(vs[0], vs[1], vs[2], ops.Conv2DAttrs{Padding: ops.PadSame}))
		p := MaxPool2D(h, ops.Pool2DAttrs{Kernel: [2]int{2, 2}})
		u := Conv2DTranspose(p, vs[3], nil, ops.Conv2DTransposeAttrs{Conv2DAttrs: ops.Conv2DAttrs{Stride: [2]int{2, 2}}})
		a := AvgPool2D(u, ops.Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: ops.PadSame})
		return GlobalAvgPool2D(a)
	}
	tape := NewTape()
	vs := make([]*Value, len(in))
	for i, x := range in {
		vs[i] = tape.Const(x)
	}
	y, err := net(vs).Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 2}, y.Shape())
	checkNetGradients(t, in, net)
}

// A 3-D convolution and pool net, a dilated 2-D pool included, agrees
// with central differences.
func TestPoolNetGradientMatchesNumeric(t *testing.T) {
	x, err := tensor.RandNormal(tensor.NewRNG(6), tensor.Float64, 0, 1, 1, 2, 4, 7, 16)
	require.NoError(t, err)
	net := func(vs []*Value) *Value {
		c := Conv3D(vs[0], vs[1], vs[2], ops.Conv3DAttrs{Stride: [3]int{1, 1, 2}, Padding: ops.PadSame})
		a := AvgPool3D(Tanh(c), ops.Pool3DAttrs{Kernel: [3]int{2, 2, 2}, Stride: [3]int{1, 2, 2}, Pad: [6]int{0, 1, 1, 0, 0, 1}, CeilMode: true, CountIncludePad: true})
		m := MaxPool3D(a, ops.Pool3DAttrs{Kernel: [3]int{2, 1, 2}, Stride: [3]int{1, 1, 1}, Dilation: [3]int{2, 1, 1}})
		p := Reshape(m, 1, -1, m.Shape()[3], m.Shape()[4])
		return AvgPool2D(p, ops.Pool2DAttrs{Kernel: [2]int{2, 2}, Dilation: [2]int{2, 1}, Stride: [2]int{1, 1}})
	}
	w, err := tensor.RandNormal(tensor.NewRNG(7), tensor.Float64, 0, 0.5, 2, 2, 2, 2, 2)
	require.NoError(t, err)
	b, err := tensor.RandNormal(tensor.NewRNG(8), tensor.Float64, 0, 0.5, 2)
	require.NoError(t, err)
	checkNetGradients(t, []*tensor.Tensor{x, w, b}, net)
}

func TestConvWrappersPassErrorsOn(t *testing.T) {
	tape := NewTape()
	x := tape.Var(tensor.Zeros(tensor.Float32, 1, 3, 5, 5))
	w := tape.Var(tensor.Zeros(tensor.Float32, 2, 4, 3, 3))
	bad := GlobalAvgPool2D(MaxPool2D(Conv2D(x, w, nil, ops.Conv2DAttrs{}), ops.Pool2DAttrs{Kernel: [2]int{2, 2}}))
	_, err := bad.Tensor()
	require.ErrorContains(t, err, "conv2d: inputs float32[1 3 5 5], float32[2 4 3 3]")
	_, err = Conv2DTranspose(nil, nil, nil, ops.Conv2DTransposeAttrs{}).Tensor()
	require.ErrorContains(t, err, "conv2d_transpose")
	_, err = AvgPool2D(x, ops.Pool2DAttrs{}).Tensor()
	require.ErrorContains(t, err, "avg_pool2d")
}
