package cifar10

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/tensor"
)

// cifarBytes encodes n records: record i has label i%10 and pixel j = (i+j)%256.
func cifarBytes(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		b.WriteByte(byte(i % 10))
		for j := range cifarPixels {
			b.WriteByte(byte(i + j))
		}
	}
	return b.Bytes()
}

func checkCIFAR(t *testing.T, ds *data.Dataset, n int) {
	t.Helper()
	require.Equal(t, n, ds.Len())
	img := ds.Tensor("image")
	assert.Equal(t, tensor.Shape{n, 3, 32, 32}, img.Shape())
	pix := img.Float32s()
	for i := range n {
		assert.Equal(t, int64(i%10), ds.Tensor("label").Int64s()[i])
		// Channel c, row y, column x of image i is byte 1024c+32y+x of its record.
		for _, j := range []int{0, 31, 32, 1024, 2048 + 33, cifarPixels - 1} {
			assert.Equal(t, float32(byte(i+j))/255, pix[i*cifarPixels+j], "image %d value %d", i, j)
		}
	}
}

func TestReadCIFAR10(t *testing.T) {
	raw := cifarBytes(3)
	for name, in := range map[string][]byte{"raw": raw, "gzip": datatest.Gzip(t, raw)} {
		ds, err := Read(bytes.NewReader(in), name)
		require.NoError(t, err)
		checkCIFAR(t, ds, 3)
	}
	tests := []struct {
		name, wantErr string
		in            []byte
	}{
		{name: "truncated", in: raw[:len(raw)-1], wantErr: "truncated.bin: record 2 at byte 6146 holds 3072 of 3073 bytes: truncated"},
		{name: "label", in: append([]byte{10}, raw[1:]...), wantErr: "label.bin: record 0 at byte 0 has label 10: want 0..9"},
	}
	for _, tc := range tests {
		_, err := Read(bytes.NewReader(tc.in), tc.name+".bin")
		assert.ErrorContains(t, err, tc.wantErr)
	}
}

func TestLoadCIFAR10(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{
		"cifar-10-batches-bin/data_batch_1.bin":    cifarBytes(2),
		"cifar-10-batches-bin/data_batch_2.bin.gz": datatest.Gzip(t, cifarBytes(3)),
		"cifar-10-batches-bin/test_batch.bin":      cifarBytes(1),
		"cifar-10-batches-bin/batches.meta.txt":    []byte("airplane\n"),
	})
	train, test, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, 5, train.Len())
	assert.Equal(t, []int64{0, 1, 0, 1, 2}, train.Tensor("label").Int64s(), "batch 1 then batch 2")
	checkCIFAR(t, test, 1)
	_, _, err = Load(t.TempDir())
	assert.ErrorContains(t, err, "no data_batch_*.bin")
}

// The lossless subset of the real CIFAR-10: 4,000 + 1,000 records whose
// first bytes and labels the data folder's README records.
func TestRealCIFAR10(t *testing.T) {
	dir := datatest.RealPath(t, "cifar10/lossless-subset")
	train, test, err := Load(dir)
	require.NoError(t, err)
	require.Equal(t, 4000, train.Len())
	require.Equal(t, 1000, test.Len())
	for _, c := range []struct {
		ds    *data.Dataset
		label int64
		first []byte
	}{{train, 6, []byte{59, 43, 50, 68, 98}}, {test, 3, []byte{158, 159, 165, 166, 160}}} {
		assert.Equal(t, c.label, c.ds.Tensor("label").Int64s()[0])
		for j, p := range c.first {
			assert.Equal(t, float32(p)/255, c.ds.Tensor("image").Float32s()[j])
		}
	}
	t.Logf("CIFAR-10 lossless subset: %d train, %d test images", train.Len(), test.Len())
}

// FuzzReadCIFAR10: any input gives a dataset of whole records or an error.
func FuzzReadCIFAR10(f *testing.F) {
	f.Add(cifarBytes(1))
	f.Add([]byte{3, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := Read(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		require.Equal(t, ds.Len(), ds.Tensor("image").Dim(0))
		for _, l := range ds.Tensor("label").Int64s() {
			require.True(t, l >= 0 && l <= 9)
		}
	})
}
