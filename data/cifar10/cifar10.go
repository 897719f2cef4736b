package cifar10

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/tensor"
)

// The CIFAR-10 binary format: each record is one label byte (0..9) then
// 3072 pixel bytes, the 1024 red, 1024 green and 1024 blue values of a
// 32x32 image in row-major order, with no header.
const (
	cifarSide   = 32
	cifarPixels = 3 * cifarSide * cifarSide
	cifarRecord = 1 + cifarPixels
)

// Classes are the class names of labels 0..9 (batches.meta.txt).
var Classes = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// Read reads CIFAR-10 binary records (one data_batch_N.bin or
// test_batch.bin, raw or gzip) into fields "image", float32 [N, 3, 32, 32]
// (channels first, as the records store them) scaled to [0, 1] by p/255
// as Paddle's cifar reader does, and "label", int64 [N]. The input must be
// a whole number of 3073-byte records with labels 0..9; name labels errors.
func Read(r io.Reader, name string) (*data.Dataset, error) {
	pix, labels, err := readCIFARRecords(r, name)
	if err != nil {
		return nil, err
	}
	return cifarDataset(pix, labels)
}

// readCIFARRecords reads and checks the records of one file. Memory
// grows with the bytes actually read (capped at maxFileBytes).
func readCIFARRecords(r io.Reader, name string) (pix []float32, labels []int64, err error) {
	r, err = fileio.Plain(r, name, fileio.MaxFileBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("cifar10: %w", err)
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r); err != nil {
		return nil, nil, fmt.Errorf("cifar10: %s: %w", name, err)
	}
	raw := buf.Bytes()
	if len(raw)%cifarRecord != 0 {
		return nil, nil, fmt.Errorf("cifar10: %s: %d bytes is %d whole %d-byte records and %d bytes more: truncated or not a CIFAR-10 binary batch",
			name, len(raw), len(raw)/cifarRecord, cifarRecord, len(raw)%cifarRecord)
	}
	n := len(raw) / cifarRecord
	pix = make([]float32, 0, n*cifarPixels)
	labels = make([]int64, n)
	for i := range n {
		rec := raw[i*cifarRecord : (i+1)*cifarRecord]
		if rec[0] > 9 {
			return nil, nil, fmt.Errorf("cifar10: %s: record %d has label %d: want 0..9", name, i, rec[0])
		}
		labels[i] = int64(rec[0])
		for _, p := range rec[1:] {
			pix = append(pix, float32(p)/255)
		}
	}
	return pix, labels, nil
}

func cifarDataset(pix []float32, labels []int64) (*data.Dataset, error) {
	n := len(labels)
	return data.NewDataset(data.DenseField("image", tensor.MustFromSlice(pix, n, 3, cifarSide, cifarSide)), data.DenseField("label", tensor.MustFromSlice(labels, n)))
}

// Load reads the binary distribution (cifar-10-binary.tar.gz,
// extracted) from dir or dir/cifar-10-batches-bin: train is every
// data_batch_*.bin in name order (data_batch_1 to 5), test every
// test_batch*.bin; each file may also carry .gz. The partial files of the
// shared data (data_batch_1_first4000.bin.gz) match these patterns too.
func Load(dir string) (train, test *data.Dataset, err error) {
	if sub := filepath.Join(dir, "cifar-10-batches-bin"); fileio.IsDir(sub) {
		dir = sub
	}
	if train, err = loadCIFARGlob(dir, "data_batch_*"); err != nil {
		return nil, nil, err
	}
	if test, err = loadCIFARGlob(dir, "test_batch*"); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

func loadCIFARGlob(dir, pattern string) (*data.Dataset, error) {
	var files []string
	for _, ext := range []string{".bin", ".bin.gz"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern+ext)) // the patterns are well-formed
		files = append(files, m...)
	}
	slices.Sort(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("cifar10: no %s.bin or %s.bin.gz in %s", pattern, pattern, dir)
	}
	var pix []float32
	var labels []int64
	for _, f := range files {
		err := fileio.WithRaw(f, func(r io.Reader) error {
			p, l, err := readCIFARRecords(r, f)
			pix, labels = append(pix, p...), append(labels, l...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return cifarDataset(pix, labels)
}
