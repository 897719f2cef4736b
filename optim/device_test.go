package optim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/testdev"
	_ "github.com/plumbml/plumb/internal/testdev/kernels"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// sgdSteps takes two SGD steps with L2 on f(w) = sum(w·x) from w = (1, 2, 3)
// on dev and returns w on the host.
func sgdSteps(t *testing.T, dev tensor.Device, opts ...optim.Option) (*tensor.Tensor, error) {
	w := graph.NewParam("w", tensor.MustFromSlice([]float32{1, 2, 3}))
	o, err := optim.NewSGD([]*graph.Param{w}, opts...)
	require.NoError(t, err)
	x := tensor.MustFromSlice([]float32{0.5, -1, 2})
	if dev != nil {
		require.NoError(t, w.To(dev)) // after the optimizer was made: its slots follow
		x, err = x.To(dev)
		require.NoError(t, err)
	}
	for range 2 {
		tape := graph.NewTape()
		require.NoError(t, tape.Backward(graph.Sum(graph.Mul(tape.Param(w), tape.Const(x)))))
		if err := o.Step(); err != nil {
			return nil, err
		}
		tape.Release()
	}
	require.Equal(t, dev, w.Value.Device(), "the update ran where the parameter is")
	return w.Value.To(nil)
}

func TestStepRunsOnTheParametersDevice(t *testing.T) {
	opts := []optim.Option{optim.LR(0.1), optim.L2(0.01)}
	want, err := sgdSteps(t, nil, opts...)
	require.NoError(t, err)
	got, err := sgdSteps(t, testdev.New("test:0"), opts...)
	require.NoError(t, err)
	assert.InDeltaSlice(t, want.Float32s(), got.Float32s(), 1e-6)

	_, err = sgdSteps(t, testdev.New("test:0"), optim.LR(0.1), optim.GlobalClipNorm(1))
	assert.EqualError(t, err, "optim: SGD: GlobalClipNorm is not implemented on test:0")
}

func TestStepRefusesParametersOnTwoDevices(t *testing.T) {
	a := graph.NewParam("a", tensor.MustFromSlice([]float32{1}))
	b := graph.NewParam("b", tensor.MustFromSlice([]float32{1}))
	require.NoError(t, b.To(testdev.New("test:0")))
	a.Grad = tensor.MustFromSlice([]float32{1})
	var err error
	b.Grad, err = tensor.MustFromSlice([]float32{1}).To(b.Value.Device())
	require.NoError(t, err)
	o, err := optim.NewSGD([]*graph.Param{a, b})
	require.NoError(t, err)
	assert.EqualError(t, o.Step(), `optim: SGD: parameter "a" is on cpu but "b" is on test:0; one optimizer updates parameters on one device`)
}
