package cifar10

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/fileio"
	"github.com/plumbml/plumb/internal/readlimit"
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
// one or more whole 3073-byte records with labels 0..9: an empty batch,
// a truncated record and a bad label are errors naming the record and its
// byte offset; name labels errors. It reads within data.DefaultLimits (see
// ReadLimits).
func Read(r io.Reader, name string) (*data.Dataset, error) {
	return ReadLimits(r, name, data.Limits{})
}

// ReadLimits is Read within lim: a gzip input may expand at most
// lim.MaxRatio times and hold lim.MaxFileBytes bytes, and the file at most
// lim.MaxRecords records. Memory grows with the records that arrive.
func ReadLimits(r io.Reader, name string, lim data.Limits) (*data.Dataset, error) {
	lim = lim.Resolve()
	recs := readlimit.Budget{Name: "records", Limit: lim.MaxRecords}
	pix, labels, err := readCIFARRecords(r, name, lim, &recs, nil, nil)
	if err != nil {
		return nil, err
	}
	return cifarDataset(pix, labels)
}

// readCIFARRecords reads and checks the records of one file, appending
// them to pix and labels. Each record draws on recs before it is stored,
// so memory grows with the records that actually arrive.
func readCIFARRecords(r io.Reader, name string, lim data.Limits, recs *readlimit.Budget, pix []float32, labels []int64) ([]float32, []int64, error) {
	r, err := fileio.Plain(r, name, lim)
	if err != nil {
		return nil, nil, fmt.Errorf("cifar10: %w", err)
	}
	var rec [cifarRecord]byte
	for i := 0; ; i++ {
		k, err := io.ReadFull(r, rec[:])
		if err == io.EOF {
			if i == 0 {
				return nil, nil, fmt.Errorf("cifar10: %s: no records: want one or more %d-byte records (an empty batch)", name, cifarRecord)
			}
			return pix, labels, nil
		}
		if err == io.ErrUnexpectedEOF {
			return nil, nil, fmt.Errorf("cifar10: %s: record %d at byte %d holds %d of %d bytes: truncated or not a CIFAR-10 binary batch",
				name, i, int64(i)*cifarRecord, k, cifarRecord)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("cifar10: %s: record %d at byte %d: %w", name, i, int64(i)*cifarRecord, err)
		}
		if err := recs.Take(1, name); err != nil {
			return nil, nil, fmt.Errorf("cifar10: %w", err)
		}
		if rec[0] > 9 {
			return nil, nil, fmt.Errorf("cifar10: %s: record %d at byte %d has label %d: want 0..9", name, i, int64(i)*cifarRecord, rec[0])
		}
		labels = append(labels, int64(rec[0]))
		for _, p := range rec[1:] {
			pix = append(pix, float32(p)/255)
		}
	}
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
// Each file is read within data.DefaultLimits (see LoadLimits).
func Load(dir string) (train, test *data.Dataset, err error) {
	return LoadLimits(dir, data.Limits{})
}

// LoadLimits is Load within lim: each file as ReadLimits reads it, and
// each split at most lim.MaxRecords records in all.
func LoadLimits(dir string, lim data.Limits) (train, test *data.Dataset, err error) {
	lim = lim.Resolve()
	if sub := filepath.Join(dir, "cifar-10-batches-bin"); fileio.IsDir(sub) {
		dir = sub
	}
	if train, err = loadCIFARGlob(dir, "data_batch_*", lim); err != nil {
		return nil, nil, err
	}
	if test, err = loadCIFARGlob(dir, "test_batch*", lim); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

func loadCIFARGlob(dir, pattern string, lim data.Limits) (*data.Dataset, error) {
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
	recs := readlimit.Budget{Name: "records", Limit: lim.MaxRecords}
	for _, f := range files {
		in, err := fileio.Open(f)
		if err != nil {
			return nil, fmt.Errorf("cifar10: %w", err)
		}
		pix, labels, err = readCIFARRecords(in, f, lim, &recs, pix, labels)
		in.Close()
		if err != nil {
			return nil, err
		}
	}
	return cifarDataset(pix, labels)
}
