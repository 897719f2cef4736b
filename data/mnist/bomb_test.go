package mnist

import (
	"bytes"
	"compress/gzip"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/memlimit"
)

// bomb returns a gzip IDX file of zeros with dims: one gzip member of 1 MiB
// of zeros repeated (gzip readers join members), so it costs kilobytes to
// build and expands to the full size. For [1048576, 28, 28] it is 0.8 MB
// and expands to 822 MB: the file of the report.
func bomb(t testing.TB, dims []uint32) []byte {
	t.Helper()
	n := 1
	for _, d := range dims {
		n *= int(d)
	}
	member := func(b []byte) []byte {
		var out bytes.Buffer
		zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
		require.NoError(t, err)
		_, err = zw.Write(b)
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		return out.Bytes()
	}
	const chunk = 1 << 20
	file := member(idxBytes(idxUbyte, dims, nil))
	full := member(make([]byte, chunk))
	for ; n >= chunk; n -= chunk {
		file = append(file, full...)
	}
	return append(file, member(make([]byte, n))...)
}

// ReadIDX of a gzip bomb stops at the expansion bound and returns an
// error; under a 256 MiB cap on the address space, the reader that copied
// whatever the stream held died with "fatal error: out of memory".
func TestReadIDXGzipBombUnderMemoryLimit(t *testing.T) {
	msg := memlimit.Run(t, 256, func() error {
		_, err := ReadIDX(bytes.NewReader(bomb(t, []uint32{1 << 20, 28, 28})))
		return err
	})
	require.Contains(t, msg, "decompression bomb")
}

// Load refuses the bomb of the report (as the images of a set whose
// labels file holds 3 labels) from its header, before reading any pixel.
func TestLoadMNISTGzipBombUnderMemoryLimit(t *testing.T) {
	msg := memlimit.Run(t, 256, func() error {
		files := mapFS(tinyMNIST(3, 2), "")
		files[mnistTrainImages] = &fstest.MapFile{Data: bomb(t, []uint32{1 << 20, 28, 28})}
		_, _, err := LoadFS(files)
		return err
	})
	require.Contains(t, msg, "holds 1048576 images but train-labels-idx1-ubyte holds 3 labels")
}

// A labels file that declares more examples than any MNIST-format set
// holds, or images larger than 64×64, are refused from the header.
func TestLoadMNISTSizeBounds(t *testing.T) {
	for _, c := range []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"too many labels", mnistTrainLabels, idxBytes(idxUbyte, []uint32{2_000_000}, nil), "declares 2000000 labels"},
		{"huge images", mnistTrainImages, idxBytes(idxUbyte, []uint32{3, 1000, 1000}, nil), "images of 1000×1000 pixels"},
	} {
		files := mapFS(tinyMNIST(3, 2), "")
		files[c.file] = &fstest.MapFile{Data: c.data}
		_, _, err := LoadFS(files)
		require.ErrorContains(t, err, c.want, c.name)
	}
}
