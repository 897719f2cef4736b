package tensor_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/testdev"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToMovesBothWays(t *testing.T) {
	dev := testdev.New("test:0")
	host := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	same, err := host.To(nil)
	require.NoError(t, err)
	assert.Same(t, host, same, "To the tensor's own device is the tensor itself")

	d, err := host.To(dev)
	require.NoError(t, err)
	assert.Equal(t, tensor.Device(dev), d.Device())
	assert.Equal(t, "cpu", tensor.DeviceName(host.Device()))
	assert.Equal(t, "test:0", tensor.DeviceName(d.Device()))
	assert.Equal(t, tensor.Shape{2, 3}, d.Shape())
	assert.Nil(t, d.Float32s(), "a device tensor has no host slice")
	assert.Nil(t, d.Raw())
	assert.Contains(t, d.String(), "on test:0")

	back, err := d.To(nil)
	require.NoError(t, err)
	assert.Nil(t, back.Device())
	assert.Equal(t, host.Float32s(), back.Float32s())

	other := testdev.New("test:1")
	moved, err := d.To(other)
	require.NoError(t, err)
	assert.Equal(t, tensor.Device(other), moved.Device())
}

func TestDeviceTensorRefusesHostOnlyMethods(t *testing.T) {
	d, err := tensor.MustFromSlice([]int64{1, 2, 3, 4}, 2, 2).To(testdev.New("test:0"))
	require.NoError(t, err)
	_, err = d.Ints()
	assert.ErrorContains(t, err, "on test:0")
	_, err = d.Item()
	assert.ErrorContains(t, err, "Item")
	_, err = d.Cast(tensor.Float32)
	assert.ErrorContains(t, err, "Cast")
	_, err = d.Transpose()
	assert.ErrorContains(t, err, "Transpose")
	_, err = d.SliceRows(0, 1)
	assert.ErrorContains(t, err, "SliceRows")
	_, err = tensor.Concat(0, d, d)
	assert.ErrorContains(t, err, "Concat")
	assert.PanicsWithValue(t, "tensor: At of a int64[2 2] tensor on test:0; move it to the host with To(nil) first", func() { d.At(0) })
	assert.Panics(t, func() { d.Float64s() }, "the wrong dtype is still a programming error")

	r, err := d.Reshape(4)
	require.NoError(t, err)
	assert.Equal(t, d.Storage(), r.Storage(), "Reshape is a view on the device too")
}

func TestDeviceCopyFillClone(t *testing.T) {
	dev := testdev.New("test:0")
	d, err := tensor.MustFromSlice([]float64{1, 2, 3}).To(dev)
	require.NoError(t, err)
	c := d.Clone()
	d.Fill(7)
	h, err := c.To(nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3}, h.Float64s(), "Clone copies")
	require.NoError(t, c.CopyFrom(d))
	require.NoError(t, h.CopyFrom(c))
	assert.Equal(t, []float64{7, 7, 7}, h.Float64s())
	require.NoError(t, d.CopyFrom(tensor.MustFromSlice([]float64{4, 5, 6})))
	require.NoError(t, h.CopyFrom(d))
	assert.Equal(t, []float64{4, 5, 6}, h.Float64s())
	o, err := h.To(testdev.New("test:1"))
	require.NoError(t, err)
	assert.ErrorContains(t, d.CopyFrom(o), "move it with To")
}

func TestRecyclerFreesDeviceStorage(t *testing.T) {
	dev := testdev.New("test:0")
	a, err := tensor.MustFromSlice([]float32{1, 2, 3, 4}).To(dev)
	require.NoError(t, err)
	b, err := tensor.MustFromSlice([]float32{1, 2}).To(dev)
	require.NoError(t, err)
	view, err := b.Reshape(2, 1)
	require.NoError(t, err)
	var r tensor.Recycler
	r.Add(a)
	r.Add(b)
	r.Keep(view) // b's storage is still held through a view
	assert.Equal(t, 1, r.Flush())
	assert.True(t, a.Storage().(*testdev.Storage).Gone, "a's storage went back to the device")
	assert.False(t, b.Storage().(*testdev.Storage).Gone)
}
