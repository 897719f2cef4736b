package mnist

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/tensor"
)

// The standard MNIST file names (LeCun's distribution); each may also carry
// a .gz suffix.
const (
	mnistTrainImages = "train-images-idx3-ubyte"
	mnistTrainLabels = "train-labels-idx1-ubyte"
	mnistTestImages  = "t10k-images-idx3-ubyte"
	mnistTestLabels  = "t10k-labels-idx1-ubyte"
)

// Load reads the four standard MNIST files from dir, or from
// dir/mnist when dir itself lacks them (so $PLUMB_DATA may name either the
// MNIST folder or a root with one folder per dataset). See LoadFS for
// what is checked and how pixels are scaled.
func Load(dir string) (train, test *data.Dataset, err error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("mnist: no directory given (set --data or $%s)", data.EnvDir)
	}
	train, test, err = LoadFS(os.DirFS(dir))
	if err != nil {
		return nil, nil, fmt.Errorf("%w (in %s)", err, dir)
	}
	return train, test, nil
}

// LoadFS reads MNIST from fsys, at its root or in a "mnist" folder:
// train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte
// and t10k-labels-idx1-ubyte, each raw or with a .gz suffix.
//
// Each split is a Dataset with fields "image" and "label".
// Images become float32 [N, 1, H, W] (NCHW, H = W = 28 for MNIST) with
// pixels scaled from 0..255 to [0, 1] by p/255. We chose [0, 1], as Keras'
// and TensorFlow's MNIST tutorials and torchvision's ToTensor do, rather
// than the Paddle book's [-1, 1]: the background stays exactly 0, and the
// TensorFlow references we check against see the same inputs. Labels
// become int64 [N]. Image and label counts must match, images must be
// rank 3 and labels rank 1, and every label must be a digit 0..9.
func LoadFS(fsys fs.FS) (train, test *data.Dataset, err error) {
	if fsys == nil {
		return nil, nil, fmt.Errorf("mnist: nil file system")
	}
	if _, err := findFile(fsys, mnistTrainImages); errors.Is(err, fs.ErrNotExist) {
		if sub, subErr := fs.Sub(fsys, "mnist"); subErr == nil {
			if _, err := findFile(sub, mnistTrainImages); err == nil {
				fsys = sub
			}
		}
	}
	train, err = loadMNISTSplit(fsys, mnistTrainImages, mnistTrainLabels)
	if err != nil {
		return nil, nil, err
	}
	test, err = loadMNISTSplit(fsys, mnistTestImages, mnistTestLabels)
	if err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// The size bounds of an MNIST-format file, checked against its header
// before any of its data is read: at most maxMNISTExamples examples (above
// EMNIST ByClass's 697,932 training images, the largest MNIST-format set)
// of at most maxMNISTPixels pixels each (64×64; the MNIST family's images
// are 28×28). So the largest images file decodes to 4 GB of float32
// pixels, and a file that claims more is refused before it costs memory.
const (
	maxMNISTExamples = 1_000_000
	maxMNISTPixels   = 64 * 64
)

// loadMNISTSplit reads the labels first, then the images, whose header
// must declare as many images as there are labels before any pixel is
// read.
func loadMNISTSplit(fsys fs.FS, imagesName, labelsName string) (*data.Dataset, error) {
	if _, err := findFile(fsys, imagesName); err != nil {
		return nil, err
	}
	lab, err := readIDXFile(fsys, labelsName, func(dims []int, _ uint64) error {
		if len(dims) != 1 {
			return fmt.Errorf("mnist: %s has dims %v, want [N]", labelsName, dims)
		}
		if dims[0] > maxMNISTExamples {
			return fmt.Errorf("mnist: %s declares %d labels, more than the %d an MNIST-format file may hold", labelsName, dims[0], maxMNISTExamples)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	img, err := readIDXFile(fsys, imagesName, func(dims []int, _ uint64) error {
		switch {
		case len(dims) != 3:
			return fmt.Errorf("mnist: %s has dims %v, want [N, rows, cols]", imagesName, dims)
		case dims[0] != lab.Dims[0]:
			return fmt.Errorf("mnist: %s holds %d images but %s holds %d labels", imagesName, dims[0], labelsName, lab.Dims[0])
		case dims[1] > maxMNISTPixels || dims[2] > maxMNISTPixels || dims[1]*dims[2] > maxMNISTPixels:
			return fmt.Errorf("mnist: %s has images of %d×%d pixels, more than the %d an MNIST-format image may hold", imagesName, dims[1], dims[2], maxMNISTPixels)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pix := make([]float32, len(img.Data))
	for i, p := range img.Data {
		pix[i] = float32(p) / 255
	}
	labels := make([]int64, len(lab.Data))
	for i, l := range lab.Data {
		if l > 9 {
			return nil, fmt.Errorf("mnist: %s: label %d of example %d is not a digit 0..9", labelsName, l, i)
		}
		labels[i] = int64(l)
	}
	images, err := tensor.FromSlice(pix, img.Dims[0], 1, img.Dims[1], img.Dims[2])
	if err != nil {
		return nil, err
	}
	return data.NewDataset(data.DenseField("image", images), data.DenseField("label", tensor.MustFromSlice(labels)))
}

// findFile returns the name under which base exists in fsys: base itself
// or base+".gz".
func findFile(fsys fs.FS, base string) (string, error) {
	for _, name := range []string{base, base + ".gz"} {
		if _, err := fs.Stat(fsys, name); err == nil {
			return name, nil
		}
	}
	return "", fmt.Errorf("mnist: neither %s nor %s.gz found: %w", base, base, fs.ErrNotExist)
}

// readIDXFile opens base (or base.gz) in fsys and decodes it, once check
// has accepted the dims in its header.
func readIDXFile(fsys fs.FS, base string, check func(dims []int, n uint64) error) (*IDX, error) {
	name, err := findFile(fsys, base)
	if err != nil {
		return nil, err
	}
	// A named pipe or device would block or never end: refuse it before
	// opening.
	if st, err := fs.Stat(fsys, name); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("mnist: %s is not a regular file (mode %v): want a regular file", name, st.Mode())
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("mnist: %w", err)
	}
	defer f.Close()
	idx, err := readIDXChecked(f, check)
	if err != nil {
		return nil, fmt.Errorf("mnist: %s: %w", name, err)
	}
	return idx, nil
}
