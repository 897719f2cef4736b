//go:build unix

package imagefolder

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"image"
	"image/png"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/internal/readlimit"
)

// zipZeros returns a zip holding name: n MiB of zeros, deflated (about
// 1.3 KB a MiB).
func zipZeros(t testing.TB, name string, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, err := zw.Create(name)
	require.NoError(t, err)
	mib := make([]byte, 1<<20)
	for range n {
		_, err = w.Write(mib)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// A 0.9 MB zip member that inflates to 700 MiB is refused from its header
// under a 512 MiB address-space cap, before it is read.
func TestLoadZipMemberBombUnderMemoryLimit(t *testing.T) {
	datatest.RefusedUnderMemoryLimit(t, func() error {
		dir := datatest.WriteFiles(t, map[string][]byte{"set.zip": zipZeros(t, "a/x.png", 700)})
		_, _, err := Load(filepath.Join(dir, "set.zip"), "")
		return err
	}, "set.zip:a/x.png: ", "a decompression bomb")
}

// A tar.gz of 8 plain PNGs of 4096×4096 (a few hundred kilobytes) is
// refused from the first image's header, which declares over a thousand
// times its file's size in pixels, under a 512 MiB address-space cap.
func TestLoadPNGBombUnderMemoryLimit(t *testing.T) {
	datatest.RefusedUnderMemoryLimit(t, func() error {
		var b bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		require.NoError(t, enc.Encode(&b, image.NewGray(image.Rect(0, 0, 4096, 4096))))
		files := map[string][]byte{}
		for _, n := range []string{"a/1.png", "a/2.png", "a/3.png", "a/4.png", "b/1.png", "b/2.png", "b/3.png", "b/4.png"} {
			files[n] = b.Bytes()
		}
		dir := datatest.WriteFiles(t, map[string][]byte{"set.tar.gz": datatest.TarGz(t, files)})
		_, _, err := Load(filepath.Join(dir, "set.tar.gz"), "")
		return err
	}, "set.tar.gz: a/1.png: png of 4096x4096: ", "a decompression bomb")
}

// The image budgets: pixels an image from the header, and float32 bytes
// in all; raised limits read the same folder.
func TestLoadImageLimits(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{"a/1.png": pngBytes(t, 4, 4, 1), "b/1.png": pngBytes(t, 4, 4, 2)})
	_, _, err := LoadLimits(dir, "", data.Limits{MaxImagePixels: 15})
	assert.ErrorIs(t, err, readlimit.ErrTooBig)
	assert.ErrorContains(t, err, "png of 4x4: want 1 to 15 pixels")
	_, _, err = LoadLimits(dir, "", data.Limits{MaxTotalBytes: 2*3*16*4 - 1})
	assert.ErrorContains(t, err, "2 images of 4x4 hold 384 bytes of float32 pixels, more than 383")
	ds, _, err := LoadLimits(dir, "", data.Limits{MaxTotalBytes: 2 * 3 * 16 * 4})
	require.NoError(t, err)
	assert.Equal(t, 2, ds.Len())
}

// "../x.png" in an archive is refused, naming the member; it became a
// class named "..".
func TestLoadRefusesMemberOutsideArchive(t *testing.T) {
	png := pngBytes(t, 2, 2, 1)
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.Create("../x.png")
	require.NoError(t, err)
	_, err = w.Write(png)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	dir := datatest.WriteFiles(t, map[string][]byte{
		"up.tar.gz": datatest.TarGz(t, map[string][]byte{"../x.png": png, "a/y.png": png}),
		"up.zip":    zb.Bytes(),
	})
	for _, f := range []string{"up.tar.gz", "up.zip"} {
		_, classes, err := Load(filepath.Join(dir, f), "")
		assert.ErrorContains(t, err, `member "../x.png" leaves the archive`, f)
		assert.Nil(t, classes)
	}
}
