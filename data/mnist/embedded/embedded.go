// Package embedded carries a copy of the MNIST digits (about 11 MB of gzip
// IDX files) inside the binary, so that examples, tests and the plumb
// command train without a download. It is separate from package
// data/mnist so that programs which read MNIST from disk do not carry the
// digits. See README.md in this directory for the data's source and terms.
package embedded

import (
	"embed"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/mnist"
)

//go:embed *.gz
var files embed.FS

// Load decodes the embedded MNIST: 60000 training and 10000 test images as
// float32 [N, 1, 28, 28] scaled to [0, 1], with int64 labels [N] (see
// mnist.LoadFS). Every call decodes afresh, so callers may modify what
// it returns.
func Load() (train, test *data.Dataset, err error) {
	return mnist.LoadFS(files)
}
