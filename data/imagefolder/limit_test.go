package imagefolder

import (
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
)

// The CIFAR JPEG tree case of --limit: Load returns the images sorted by
// class, so the first 512 are one class; data.Limit's 512 span all ten,
// 51 or 52 each.
func TestLimitSpansTheClasses(t *testing.T) {
	classes := []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}
	files := map[string][]byte{}
	img := pngBytes(t, 2, 2, 7)
	for _, c := range classes {
		for i := range 520 {
			files[fmt.Sprintf("cifar10-jpeg/train/%s/%04d.png", c, i)] = img
		}
	}
	src := datatest.WriteFiles(t, map[string][]byte{"tree.tar.gz": datatest.TarGz(t, files)}) + "/tree.tar.gz"
	ds, got, err := Load(src, "cifar10-jpeg/train")
	require.NoError(t, err)
	require.Equal(t, classes, got)
	require.Equal(t, 5200, ds.Len())

	count := func(ds *data.Dataset) map[int64]int {
		m := map[int64]int{}
		for _, l := range ds.Tensor("label").Int64s() {
			m[l]++
		}
		return m
	}
	assert.Len(t, count(ds.Take(512)), 1, "the first 512 files of the sorted tree")
	sub, note, err := data.Limit(ds, 512, "label", 1)
	require.NoError(t, err)
	counts := count(sub)
	require.Len(t, counts, 10, "512 files span the classes")
	for c, n := range counts {
		assert.Contains(t, []int{51, 52}, n, "class %s", classes[c])
	}
	assert.Contains(t, note, "stratified by label: 10 classes of 51 to 52")
}

// LoadProgress counts every image and its stored bytes.
func TestLoadProgress(t *testing.T) {
	img := pngBytes(t, 2, 2, 7)
	files := map[string][]byte{"set/a/0.png": img, "set/a/1.png": img, "set/b/0.png": img}
	src := datatest.WriteFiles(t, files)
	p := data.NewProgress(io.Discard, "set", "images", 3)
	ds, _, err := LoadProgress(src, "set", data.Limits{}, p)
	require.NoError(t, err)
	assert.Equal(t, 3, ds.Len())
	n, b := p.Count()
	assert.Equal(t, 3, n)
	assert.Equal(t, int64(3*len(img)), b)
}
