package cifar

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A run's name in its log is the model and what differs from the book's
// recipe, as bench/cifar_data.py names its runs.
func TestRunNames(t *testing.T) {
	for _, c := range []struct {
		want                                          string
		model, format                                 string
		depth, width, limit, testLimit, epochs, batch int
		augment                                       bool
	}{
		{"cifar10-resnet32", "resnet32", "bin", 0, 0, 0, 0, 1, 128, false},
		{"cifar10-resnet32-jpeg", "resnet32", "jpeg", 0, 0, 0, 0, 1, 128, false},
		{"cifar10-vgg-limit4000-epochs3", "vgg", "bin", 0, 0, 4000, 0, 3, 128, false},
		{"cifar10-resnet32-depth20-width8-testlimit500-batch64-augment", "resnet32", "bin", 20, 8, 0, 500, 1, 64, true},
	} {
		require.Equal(t, c.want, runName(c.model, c.format, c.depth, c.width, c.limit, c.testLimit, c.epochs, c.batch, c.augment))
	}
}
