package parity

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// npyBytes builds a version-1 .npy file with the given header dict and data.
func npyBytes(t *testing.T, dict string, data any) []byte {
	t.Helper()
	h := dict + strings.Repeat(" ", 63-(10+len(dict))%64) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	require.NoError(t, binary.Write(&b, binary.LittleEndian, uint16(len(h))))
	b.WriteString(h)
	if data != nil {
		require.NoError(t, binary.Write(&b, binary.LittleEndian, data))
	}
	return b.Bytes()
}

func TestReadNpy(t *testing.T) {
	tests := []struct {
		name  string
		dict  string
		data  any
		dt    tensor.DType
		shape tensor.Shape
	}{
		{"f32 matrix", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", []float32{1, 2, 3, 4, 5, 6}, tensor.Float32, tensor.Shape{2, 3}},
		{"f64 vector", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", []float64{0.5, -1}, tensor.Float64, tensor.Shape{2}},
		{"f64 scalar", "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", []float64{3}, tensor.Float64, tensor.Shape{}},
		{"i32", "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", []int32{4, 0, -2}, tensor.Int32, tensor.Shape{3}},
		{"i64 empty", "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 2), }", []int64{}, tensor.Int64, tensor.Shape{0, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := ReadNpy(bytes.NewReader(npyBytes(t, tt.dict, tt.data)))
			require.NoError(t, err)
			assert.Equal(t, tt.dt, x.DType())
			assert.Equal(t, tt.shape, x.Shape())
			assert.Equal(t, tt.data, x.Raw())
		})
	}
}

func TestReadNpyErrors(t *testing.T) {
	tests := []struct {
		name, dict string
		data       any
		want       string
	}{
		{"fortran", "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", []float32{1, 2}, "Fortran"},
		{"big endian", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", []float32{1, 2}, "unsupported dtype >f4"},
		{"bool", "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", []uint8{1, 0}, "unsupported dtype |b1"},
		{"short data", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", []float64{1, 2}, "reading 3 float64 elements"},
		{"long data", "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", []float64{1, 2}, "data beyond"},
		{"no shape", "{'descr': '<f8', 'fortran_order': False, }", nil, "no shape"},
		{"huge shape, little data", "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", []float64{1, 2}, "unexpected EOF"},
		{"shape overflows", "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", nil, "more bytes than an int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadNpy(bytes.NewReader(npyBytes(t, tt.dict, tt.data)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := ReadNpy(strings.NewReader("PK\x03\x04 not npy"))
	assert.ErrorContains(t, err, "bad magic")
	// A version-2 header length of 4 GB over a few bytes.
	_, err = ReadNpy(strings.NewReader("\x93NUMPY\x02\x00\xff\xff\xff\xff{}"))
	assert.ErrorContains(t, err, "header length 4294967295 exceeds the limit")
}

// TestGoldensAreNpy reads one golden of every kind the recorder writes.
func TestGoldensAreNpy(t *testing.T) {
	c := caseByID(t, "batch_norm/train_nchw_f64")
	for _, name := range []string{"in0", "out", "gout", "grad1", "after3"} {
		x, err := c.load(name + ".npy")
		require.NoError(t, err, name)
		assert.Equal(t, tensor.Float64, x.DType(), name)
	}
	x, err := caseByID(t, "mse/mean_f32").load("out.npy")
	require.NoError(t, err)
	assert.Equal(t, 0, x.Rank(), fmt.Sprintf("scalar loss shape %v", x.Shape()))
}

// FuzzReadNpy feeds arbitrary bytes to ReadNpy: it must never panic, and a
// tensor it returns holds no more bytes than the input did (memory follows
// the input, not the header).
func FuzzReadNpy(f *testing.F) {
	f.Add(npyBytes(&testing.T{}, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", []float32{1, 2, 3, 4, 5, 6}))
	f.Add(npyBytes(&testing.T{}, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", []int64{7}))
	f.Add(npyBytes(&testing.T{}, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 2), }", nil))
	f.Add(npyBytes(&testing.T{}, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", []float64{1}))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'descr': '<i4'}"))
	f.Add([]byte("\x93NUMPY\x03\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := ReadNpy(bytes.NewReader(b))
		if err != nil {
			require.Nil(t, x)
			return
		}
		require.LessOrEqual(t, x.Size()*x.DType().Size(), len(b))
	})
}
