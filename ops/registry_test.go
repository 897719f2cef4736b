package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func TestKernels(t *testing.T) {
	t.Cleanup(func() { delete(deviceKernels, "softmax") })
	cpu := []Kernel{{Device: "cpu", DType: tensor.Float32}, {Device: "cpu", DType: tensor.Float64}}
	assert.Equal(t, cpu, Kernels("softmax"), "every op has its CPU kernels")
	assert.False(t, HasKernel("softmax", "testdevice", tensor.Float32))

	require.NoError(t, RegisterKernel("softmax", "testdevice", tensor.Float32))
	assert.Equal(t, append(cpu, Kernel{Device: "testdevice", DType: tensor.Float32}), Kernels("softmax"))
	assert.True(t, HasKernel("softmax", "testdevice", tensor.Float32))
	assert.False(t, HasKernel("softmax", "testdevice", tensor.Float64))

	assert.Nil(t, Kernels("no_such_op"))
	require.EqualError(t, RegisterKernel("no_such_op", "testdevice", tensor.Float32), `ops: RegisterKernel("no_such_op", "testdevice"): no such op`)
	assert.Nil(t, Kernels("no_such_op"), "a refused registration records nothing")
}
