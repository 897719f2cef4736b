package ops

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/testdev"
	"github.com/plumbml/plumb/tensor"
)

// hostKernel is a testdev kernel: the CPU op run on the storage's private
// host tensors, so a test sees which op Dispatch built and with what
// attributes.
type hostKernel struct {
	cpu   Op
	dev   *testdev.Device
	freed bool
}

func (k *hostKernel) Name() string          { return k.cpu.Name() }
func (k *hostKernel) Device() tensor.Device { return k.dev }
func (k *hostKernel) Free()                 { k.freed = true }

func (k *hostKernel) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	host := make([]*tensor.Tensor, len(in))
	for i, t := range in {
		host[i] = t.Storage().(*testdev.Storage).Host()
	}
	out, err := k.cpu.Forward(host)
	if err != nil {
		return nil, err
	}
	return out.To(k.dev)
}

func (k *hostKernel) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	return nil, nil
}

func TestDispatch(t *testing.T) {
	dev := testdev.New("test:0")
	var built []SoftmaxAttrs
	var last *hostKernel
	require.NoError(t, RegisterKernel("softmax", "testdev", tensor.Float32, func(d tensor.Device, attrs any) (Op, error) {
		a := attrs.(SoftmaxAttrs)
		built = append(built, a)
		last = &hostKernel{cpu: SoftmaxOp(a.Axis), dev: d.(*testdev.Device)}
		return last, nil
	}))
	require.NoError(t, RegisterFallback("log_softmax", "testdev", tensor.Float32))
	t.Cleanup(func() { delete(deviceKernels, "softmax"); delete(deviceKernels, "log_softmax") })

	x := tensor.MustFromSlice([]float32{1, 2, 3, 4, 0, -1}, 2, 3)
	xd, err := x.To(dev)
	require.NoError(t, err)

	t.Run("host inputs run the op itself, for free", func(t *testing.T) {
		op := SoftmaxOp(1)
		k, err := Dispatch(op, []*tensor.Tensor{x})
		require.NoError(t, err)
		assert.Same(t, op, k)
		in := []*tensor.Tensor{x, x}
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = Dispatch(op, in) }))
	})
	t.Run("a device kernel is built from the CPU op's attributes", func(t *testing.T) {
		for _, axis := range []int{-1, 0} {
			yd, err := Run(SoftmaxOp(axis), xd)
			require.NoError(t, err)
			assert.Equal(t, tensor.Device(dev), yd.Device())
			assert.True(t, last.freed, "Run frees the kernel's saved state")
			y, err := yd.To(nil)
			require.NoError(t, err)
			want, err := Softmax(x, axis)
			require.NoError(t, err)
			assert.Equal(t, want.Float32s(), y.Float32s())
		}
		assert.Equal(t, []SoftmaxAttrs{{Axis: -1}, {Axis: 0}}, built)
	})
	t.Run("the op's device-free check runs before a kernel is built", func(t *testing.T) {
		n := len(built)
		_, err := Run(SoftmaxOp(5), xd)
		var oe *Error
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, "softmax", oe.Op)
		assert.Len(t, built, n, "no kernel is built for inputs that fail the check")
	})
	t.Run("a fallback runs the CPU kernel on host copies", func(t *testing.T) {
		op := LogSoftmaxOp(1)
		k, err := Dispatch(op, []*tensor.Tensor{xd})
		require.NoError(t, err)
		yd, err := k.Forward([]*tensor.Tensor{xd})
		require.NoError(t, err)
		assert.Equal(t, tensor.Device(dev), yd.Device())
		g, err := tensor.Ones(tensor.Float32, 2, 3)
		require.NoError(t, err)
		gd, err := g.To(dev)
		require.NoError(t, err)
		grads, err := k.Backward([]*tensor.Tensor{xd}, yd, gd, []bool{true})
		require.NoError(t, err)
		assert.Equal(t, tensor.Device(dev), grads[0].Device())

		cpu := LogSoftmaxOp(1)
		want, err := cpu.Forward([]*tensor.Tensor{x})
		require.NoError(t, err)
		wantG, err := cpu.Backward([]*tensor.Tensor{x}, want, g, []bool{true})
		require.NoError(t, err)
		y, err := yd.To(nil)
		require.NoError(t, err)
		dx, err := grads[0].To(nil)
		require.NoError(t, err)
		assert.Equal(t, want.Float32s(), y.Float32s())
		assert.Equal(t, wantG[0].Float32s(), dx.Float32s())
	})
	t.Run("a kernel factory's ErrFallback runs the CPU kernel on host copies", func(t *testing.T) {
		require.NoError(t, RegisterKernel("abs", "testdev", tensor.Float32, func(d tensor.Device, attrs any) (Op, error) {
			return nil, fmt.Errorf("abs on testdev: %w", ErrFallback)
		}))
		t.Cleanup(func() { delete(deviceKernels, "abs") })
		k, err := Dispatch(UnaryOp("abs"), []*tensor.Tensor{xd})
		require.NoError(t, err)
		assert.IsType(t, &fallbackOp{}, k)
		yd, err := k.Forward([]*tensor.Tensor{xd})
		require.NoError(t, err)
		assert.Equal(t, tensor.Device(dev), yd.Device())
		y, err := yd.To(nil)
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 2, 3, 4, 0, 1}, y.Float32s())
	})
	t.Run("errors", func(t *testing.T) {
		_, err := Run(BinaryOp("add"), x, xd)
		assert.EqualError(t, err, "add: input 0 is on cpu but input 1 is on test:0; move them to one device with To")
		other, err := x.To(testdev.New("test:1"))
		require.NoError(t, err)
		_, err = Run(BinaryOp("add"), xd, other)
		assert.EqualError(t, err, "add: input 0 is on test:0 but input 1 is on test:1; move them to one device with To")
		_, err = Run(UnaryOp("exp"), xd)
		assert.EqualError(t, err, "op exp has no testdev float32 kernel (inputs on test:0)")
		x64, err := tensor.MustFromSlice([]float64{1, 2}).To(dev)
		require.NoError(t, err)
		_, err = Run(SoftmaxOp(0), x64)
		assert.EqualError(t, err, "op softmax has no testdev float64 kernel (inputs on test:0)")
		_, err = Dispatch(nil, nil)
		assert.Error(t, err)
		_, err = SoftmaxOp(0).Forward([]*tensor.Tensor{xd})
		assert.ErrorContains(t, err, "input on test:0: the CPU kernel reads host memory", "a CPU kernel never reads a device tensor")
		_, err = Accuracy(xd, tensor.MustFromSlice([]int32{0, 1}))
		assert.ErrorContains(t, err, "the CPU kernel reads host memory")
	})
}

// Every op that runs on a device through a kernel of its own (its Spec's
// CUDA is DeviceKernel or DeviceLayout) has a device-free check, which
// Dispatch runs so that the device kernel need not validate.
func TestEveryDeviceOpChecks(t *testing.T) {
	for _, s := range Registered() {
		if s.CUDA != DeviceKernel && s.CUDA != DeviceLayout {
			continue
		}
		op, err := Build(s.Name, Attrs{})
		require.NoError(t, err)
		_, ok := op.(Checker)
		assert.True(t, ok, "%s has a device kernel but no Check (ops.Checker)", s.Name)
	}
}

// TestAttrsRoundTrip checks that an op's Attrs is the inverse of Build:
// the op built again from them computes the same output on every gradient
// case, so a device kernel built from a CPU op's Attrs runs the same op.
func TestAttrsRoundTrip(t *testing.T) {
	n := 0
	for name, cs := range gradCases {
		for _, c := range cs {
			op, err := Build(name, c.attrs)
			require.NoError(t, err)
			a, ok := op.(Attributed)
			if !ok {
				continue
			}
			again, err := Build(name, AttrsOf(a.Attrs()))
			require.NoError(t, err, "%s/%s", name, c.name)
			want, err1 := op.Forward(c.in)
			got, err2 := again.Forward(c.in)
			require.Equal(t, err1, err2, "%s/%s", name, c.name)
			if err1 == nil {
				require.Equal(t, want.Shape(), got.Shape(), "%s/%s", name, c.name)
				require.Equal(t, want.Raw(), got.Raw(), "%s/%s", name, c.name)
			}
			n++
		}
	}
	require.Greater(t, n, 50)
}
