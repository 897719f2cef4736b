package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/testdev"
	_ "github.com/plumbml/plumb/internal/testdev/kernels"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// step is a small model's training step: two linear layers, a value read
// twice (its gradient accumulates), a reshape (a view) and the softmax
// cross-entropy loss. It returns the loss and the parameters' gradients,
// on the host.
func deviceStep(t *testing.T, dev tensor.Device, steps int) (float64, []*tensor.Tensor, *testdev.Device) {
	rng := tensor.NewRNG(7)
	mk := func(shape ...int) *tensor.Tensor {
		x, err := tensor.RandNormal(rng, tensor.Float32, 0, 0.5, shape...)
		require.NoError(t, err)
		return x
	}
	w1, b1, w2 := graph.NewParam("w1", mk(4, 6)), graph.NewParam("b1", mk(6)), graph.NewParam("w2", mk(6, 3))
	ps := []*graph.Param{w1, b1, w2}
	x, labels := mk(5, 4), tensor.MustFromSlice([]int32{0, 2, 1, 1, 0})
	if dev != nil {
		require.NoError(t, graph.ParamsTo(ps, dev))
	}
	assert.Equal(t, dev, graph.DeviceOf(ps))
	tape := graph.NewTape()
	var loss float64
	for range steps {
		graph.ZeroGrads(ps)
		// The batch moves to the model's device each step; Release frees the copies.
		x, err := tape.Move(x, graph.DeviceOf(ps))
		require.NoError(t, err)
		labels, err := tape.Move(labels, graph.DeviceOf(ps))
		require.NoError(t, err)
		h := graph.Relu(graph.Linear(tape.Const(x), tape.Param(w1), tape.Param(b1)))
		h = graph.Add(h, graph.Reshape(graph.Mul(h, h), 5, 6)) // h read three times
		l := graph.SoftmaxCrossEntropy(graph.Linear(h, tape.Param(w2), nil), labels)
		require.NoError(t, tape.Backward(l))
		loss, err = l.Item()
		require.NoError(t, err)
		tape.Release()
	}
	var grads []*tensor.Tensor
	for _, p := range ps {
		require.NotNil(t, p.Grad, p.Name)
		assert.Equal(t, dev, p.Grad.Device(), "%s's gradient stays where the model is", p.Name)
		g, err := p.Grad.To(nil)
		require.NoError(t, err)
		grads = append(grads, g)
	}
	td, _ := dev.(*testdev.Device)
	return loss, grads, td
}

func TestTapeOnDeviceMatchesHost(t *testing.T) {
	wantLoss, want, _ := deviceStep(t, nil, 2)
	gotLoss, got, dev := deviceStep(t, testdev.New("test:0"), 2)
	assert.InDelta(t, wantLoss, gotLoss, 1e-6)
	for i := range want {
		assert.InDeltaSlice(t, want[i].Float32s(), got[i].Float32s(), 1e-5, "gradient %d", i)
	}
	// Release gave the step's device storage back: what is still held is
	// the parameters, their gradients, the inputs and the tensors handed
	// out (the loss), a bounded number whatever the number of steps.
	_, _, dev3 := deviceStep(t, testdev.New("test:1"), 4)
	assert.Equal(t, dev.Allocs-dev.Frees, dev3.Allocs-dev3.Frees, "device storage leaks across steps")
	assert.Greater(t, dev.Frees, 10)
}

func TestTapeRefusesMixedDevices(t *testing.T) {
	dev := testdev.New("test:0")
	p := graph.NewParam("w", tensor.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2))
	require.NoError(t, p.To(dev))
	tape := graph.NewTape()
	y := graph.MatMul(tape.Const(tensor.MustFromSlice([]float32{1, 2}, 1, 2)), tape.Param(p), false, false)
	assert.EqualError(t, y.Err(), "matmul: input 0 is on cpu but input 1 is on test:0; move them to one device with To")

	require.NoError(t, p.To(nil))
	assert.Nil(t, p.Value.Device())
	assert.Equal(t, []float32{1, 2, 3, 4}, p.Value.Float32s())
	assert.Error(t, (*graph.Param)(nil).To(dev))
}

func TestNoKernelOnDeviceIsAnError(t *testing.T) {
	dev := testdev.New("test:0")
	x, err := tensor.MustFromSlice([]int64{1, 2}).To(dev)
	require.NoError(t, err)
	tape := graph.NewTape()
	_, err = graph.Add(tape.Const(x), tape.Const(x)).Tensor()
	assert.EqualError(t, err, "op add has no testdev int64 kernel (inputs on test:0)")
	_ = ops.Kernels
}

// TestPadSeqOnDevice: PadSeq of values on a device moves its zero row and
// gather indices there (it made them on the host), so it pads as on the
// host, and its gradient reaches the values on the device.
func TestPadSeqOnDevice(t *testing.T) {
	x := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5, 2)
	offsets := []int{0, 3, 3, 5}
	pad := func(dev tensor.Device) ([]float32, []float32, []int) {
		p := graph.NewParam("x", x.Clone())
		require.NoError(t, p.To(dev))
		tape := graph.NewTape()
		defer tape.Release()
		y, lengths := graph.PadSeq(graph.NewSeq(tape.Param(p), offsets))
		assert.Equal(t, dev, y.Device())
		require.NoError(t, tape.Backward(graph.Sum(graph.Mul(y, y))))
		h, err := y.Host()
		require.NoError(t, err)
		g, err := p.Grad.To(nil)
		require.NoError(t, err)
		return h.Float32s(), g.Float32s(), lengths
	}
	want, wantG, wantLengths := pad(nil)
	got, gotG, lengths := pad(testdev.New("test:0"))
	assert.Equal(t, []int{3, 0, 2}, wantLengths)
	assert.Equal(t, wantLengths, lengths)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 7, 8, 9, 10, 0, 0}, want)
	assert.Equal(t, want, got)
	assert.Equal(t, wantG, gotG)
	assert.Nil(t, (*graph.Value)(nil).Device(), "a failed value has no device")
}
