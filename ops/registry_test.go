package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func TestKernels(t *testing.T) {
	t.Cleanup(func() { delete(deviceKernels, "softmax"); delete(deviceKernels, "crf") })
	cpu := []Kernel{{Device: "cpu", DType: tensor.Float32}, {Device: "cpu", DType: tensor.Float64}}
	assert.Equal(t, cpu, Kernels("softmax"), "every op has its CPU kernels")
	assert.False(t, HasKernel("softmax", "testdevice", tensor.Float32))

	build := func(tensor.Device, any) (Op, error) { return nil, nil }
	require.NoError(t, RegisterKernel("softmax", "testdevice", tensor.Float32, build))
	assert.Equal(t, append(cpu, Kernel{Device: "testdevice", DType: tensor.Float32}), Kernels("softmax"))
	assert.True(t, HasKernel("softmax", "testdevice", tensor.Float32))
	assert.False(t, HasKernel("softmax", "testdevice", tensor.Float64))

	require.NoError(t, RegisterFallback("crf", "testdevice", tensor.Float32))
	assert.Equal(t, append(cpu, Kernel{Device: "testdevice", DType: tensor.Float32, Fallback: true}), Kernels("crf"))
	assert.False(t, HasKernel("crf", "testdevice", tensor.Float32), "a fallback is not a kernel of the device")

	for _, c := range []struct {
		err  error
		want string
	}{
		{RegisterKernel("no_such_op", "testdevice", tensor.Float32, build), `ops: kernel of "no_such_op" on "testdevice": no such op`},
		{RegisterKernel("softmax", "testdevice", tensor.Float32, build), `ops: kernel of "softmax" on "testdevice" in float32 registered twice`},
		{RegisterKernel("softmax", "testdevice", tensor.Float64, nil), `ops: RegisterKernel("softmax", "testdevice", float64): nil factory`},
		{RegisterKernel("softmax", "cpu", tensor.Float64, build), `ops: kernel of "softmax" on "cpu": a device package registers kernels for its own device kind`},
	} {
		require.EqualError(t, c.err, c.want)
	}
	assert.Nil(t, Kernels("no_such_op"), "a refused registration records nothing")
	assert.Len(t, Kernels("softmax"), 3)
}
