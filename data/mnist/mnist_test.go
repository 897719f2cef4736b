package mnist

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
)

// tinyMNIST returns the four MNIST files for nTrain and nTest images of
// 2x3 pixels; pixel j of image i is (i*6+j)*10 mod 256 and label i is i mod 10.
func tinyMNIST(nTrain, nTest int) map[string][]byte {
	split := func(n int) (images, labels []byte) {
		pix := make([]byte, n*6)
		for i := range pix {
			pix[i] = byte(i * 10)
		}
		lab := make([]byte, n)
		for i := range lab {
			lab[i] = byte(i % 10)
		}
		return idxBytes(idxUbyte, []uint32{uint32(n), 2, 3}, pix), idxBytes(idxUbyte, []uint32{uint32(n)}, lab)
	}
	trImg, trLab := split(nTrain)
	teImg, teLab := split(nTest)
	return map[string][]byte{
		mnistTrainImages: trImg, mnistTrainLabels: trLab,
		mnistTestImages: teImg, mnistTestLabels: teLab,
	}
}

// mapFS builds an in-memory file system from names to contents, each under prefix.
func mapFS(files map[string][]byte, prefix string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, b := range files {
		fsys[prefix+name] = &fstest.MapFile{Data: b}
	}
	return fsys
}

func checkTinyMNIST(t *testing.T, train, test *data.Dataset, nTrain, nTest int) {
	t.Helper()
	for _, c := range []struct {
		ds *data.Dataset
		n  int
	}{{train, nTrain}, {test, nTest}} {
		require.Equal(t, c.n, c.ds.Len())
		assert.Equal(t, []int{c.n, 1, 2, 3}, []int(c.ds.Tensor("image").Shape()))
		pix := c.ds.Tensor("image").Float32s()
		for i, p := range pix {
			assert.InDelta(t, float32(byte(i*10))/255, p, 0, "pixel %d", i)
		}
		labels := c.ds.Tensor("label").Int64s()
		for i, l := range labels {
			assert.Equal(t, int64(i%10), l)
		}
	}
}

func TestLoadMNISTFS(t *testing.T) {
	files := tinyMNIST(7, 3)
	gz := map[string][]byte{}
	mixed := map[string][]byte{}
	for name, b := range files {
		gz[name+".gz"] = datatest.Gzip(t, b)
		if name == mnistTrainImages || name == mnistTestLabels {
			mixed[name+".gz"] = datatest.Gzip(t, b)
		} else {
			mixed[name] = b
		}
	}
	tests := []struct {
		name string
		fsys fstest.MapFS
	}{
		{name: "raw", fsys: mapFS(files, "")},
		{name: "gzip", fsys: mapFS(gz, "")},
		{name: "mixed", fsys: mapFS(mixed, "")},
		{name: "in a mnist folder", fsys: mapFS(gz, "mnist/")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			train, test, err := LoadFS(tc.fsys)
			require.NoError(t, err)
			checkTinyMNIST(t, train, test, 7, 3)
		})
	}
}

func TestLoadMNISTDir(t *testing.T) {
	dir := t.TempDir()
	for name, b := range tinyMNIST(4, 2) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".gz"), datatest.Gzip(t, b), 0o644))
	}
	train, test, err := Load(dir)
	require.NoError(t, err)
	checkTinyMNIST(t, train, test, 4, 2)

	_, _, err = Load(filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "neither train-images-idx3-ubyte nor train-images-idx3-ubyte.gz found")
	_, _, err = Load("")
	require.ErrorContains(t, err, "no directory given")
}

func TestLoadMNISTErrors(t *testing.T) {
	// with returns the tiny files with one replaced (or removed, for nil).
	with := func(name string, b []byte) fstest.MapFS {
		files := tinyMNIST(3, 2)
		if b == nil {
			delete(files, name)
		} else {
			files[name] = b
		}
		return mapFS(files, "")
	}
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		wantErr string
	}{
		{name: "missing test labels", fsys: with(mnistTestLabels, nil), wantErr: "neither t10k-labels-idx1-ubyte"},
		{name: "fewer labels than images", fsys: with(mnistTrainLabels, idxBytes(idxUbyte, []uint32{2}, []byte{1, 2})),
			wantErr: "holds 3 images but train-labels-idx1-ubyte holds 2 labels"},
		{name: "more labels than images", fsys: with(mnistTestLabels, idxBytes(idxUbyte, []uint32{5}, make([]byte, 5))),
			wantErr: "holds 2 images but t10k-labels-idx1-ubyte holds 5 labels"},
		{name: "label not a digit", fsys: with(mnistTrainLabels, idxBytes(idxUbyte, []uint32{3}, []byte{1, 10, 2})),
			wantErr: "label 10 of example 1 is not a digit"},
		{name: "images of rank 2", fsys: with(mnistTrainImages, idxBytes(idxUbyte, []uint32{3, 6}, make([]byte, 18))),
			wantErr: "want [N, rows, cols]"},
		{name: "labels of rank 2", fsys: with(mnistTestLabels, idxBytes(idxUbyte, []uint32{2, 1}, make([]byte, 2))),
			wantErr: "want [N]"},
		{name: "truncated images", fsys: with(mnistTrainImages, idxBytes(idxUbyte, []uint32{3, 2, 3}, make([]byte, 17))),
			wantErr: "train-images-idx3-ubyte: idx: dims [3 2 3] want 18 bytes of data, got 17: truncated"},
		{name: "bad magic", fsys: with(mnistTestImages, []byte{8, 3, 0, 0}), wantErr: "bad magic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			train, test, err := LoadFS(tc.fsys)
			require.ErrorContains(t, err, tc.wantErr)
			assert.Nil(t, train)
			assert.Nil(t, test)
		})
	}
	_, _, err := LoadFS(nil)
	require.ErrorContains(t, err, "nil file system")
}
