package mnist

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/tensor"
)

// The real MNIST and Fashion-MNIST IDX files: sizes and label counts of
// the data folder's README (7. and 8.).
func TestRealMNIST(t *testing.T) {
	for _, c := range []struct {
		dir         string
		train, test [10]int
	}{
		{"mnist", [10]int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}, [10]int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}},
		{"fashion-mnist", [10]int{6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000, 6000}, [10]int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}},
	} {
		t.Run(c.dir, func(t *testing.T) {
			train, test, err := Load(datatest.RealPath(t, c.dir))
			require.NoError(t, err)
			for _, s := range []struct {
				ds     *data.Dataset
				counts [10]int
			}{{train, c.train}, {test, c.test}} {
				n := 0
				for _, k := range s.counts {
					n += k
				}
				assert.Equal(t, tensor.Shape{n, 1, 28, 28}, s.ds.Tensor("image").Shape())
				var counts [10]int
				for _, l := range s.ds.Tensor("label").Int64s() {
					counts[l]++
				}
				assert.Equal(t, s.counts, counts)
			}
			t.Logf("%s: %d train, %d test images", c.dir, train.Len(), test.Len())
		})
	}
}
