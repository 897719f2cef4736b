package imagefolder

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data/cifar10"
	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/tensor"
)

// pngBytes encodes a w x h image whose pixel (x, y) is (r, x*10, y*10).
func pngBytes(t testing.TB, w, h int, r uint8) []byte {
	t.Helper()
	im := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			im.Set(x, y, color.NRGBA{r, uint8(x * 10), uint8(y * 10), 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, im))
	return b.Bytes()
}

func jpegBytes(t testing.TB, w, h int) []byte {
	t.Helper()
	im := image.NewGray(image.Rect(0, 0, w, h))
	for i := range im.Pix {
		im.Pix[i] = 128
	}
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, im, &jpeg.Options{Quality: 100}))
	return b.Bytes()
}

func TestLoadImageFolder(t *testing.T) {
	files := map[string][]byte{
		"set/train/cat/b.png":  pngBytes(t, 3, 2, 200),
		"set/train/cat/a.png":  pngBytes(t, 3, 2, 100),
		"set/train/bird/0.jpg": jpegBytes(t, 3, 2),
		"set/train/notes.txt":  []byte("skipped"),
		"set/test/cat/0.png":   pngBytes(t, 5, 5, 1),
	}
	for name, src := range map[string]string{
		"tree":   datatest.WriteFiles(t, files),
		"tar.gz": datatest.WriteFiles(t, map[string][]byte{"set.tar.gz": datatest.TarGz(t, files)}) + "/set.tar.gz",
	} {
		t.Run(name, func(t *testing.T) {
			ds, classes, err := Load(src, "set/train")
			require.NoError(t, err)
			assert.Equal(t, []string{"bird", "cat"}, classes)
			assert.Equal(t, []int64{0, 1, 1}, ds.Tensor("label").Int64s())
			img := ds.Tensor("image")
			require.Equal(t, tensor.Shape{3, 3, 2, 3}, img.Shape())
			pix := img.Float32s()
			const plane, per = 6, 18
			for c := range 3 {
				assert.InDelta(t, 128.0/255, pix[c*plane], 1.0/255, "grey JPEG on every channel")
			}
			// cat/a.png comes before cat/b.png; pixel (x=2, y=1) is (r, 20, 10).
			for i, r := range []float32{100, 200} {
				base := (1 + i) * per
				assert.Equal(t, r/255, pix[base+0*plane+1*3+2])
				assert.Equal(t, float32(20)/255, pix[base+1*plane+1*3+2])
				assert.Equal(t, float32(10)/255, pix[base+2*plane+1*3+2])
			}
		})
	}
	dir := datatest.WriteFiles(t, files)
	_, _, err := Load(dir, "set")
	assert.ErrorContains(t, err, "no <class>/<image>", "images two levels down are not classes")
	mixed := datatest.WriteFiles(t, map[string][]byte{"a/x.png": pngBytes(t, 2, 2, 0), "b/y.png": pngBytes(t, 3, 2, 0)})
	_, _, err = Load(mixed, "")
	assert.ErrorContains(t, err, "b/y.png: png of 3x2, but the first image is 2x2")
	broken := datatest.WriteFiles(t, map[string][]byte{"a/x.jpg": []byte("not an image")})
	_, _, err = Load(broken, "")
	assert.ErrorContains(t, err, "a/x.jpg: not a JPEG or PNG image")
}

func TestDecodeImageRejectsHugeHeader(t *testing.T) {
	// A PNG header declaring 100000 x 1000 pixels, with no data: refused before decoding.
	b := pngBytes(t, 1, 1, 0)
	b[16], b[17], b[18], b[19] = 0, 1, 0x86, 0xa0 // width 100000 in the IHDR chunk
	b[20], b[21], b[22], b[23] = 0, 0, 0x03, 0xe8 // height 1000
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	_, _, _, err := decodeImage(b, -1, -1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "png of 100000x1000: want 1 to 16777216 pixels")
}

// The JPEG CIFAR-10 tree, read straight from its .tar.gz: 5,000 training
// and 1,000 test images per class (README 4b).
func TestRealCIFAR10JPEG(t *testing.T) {
	src := datatest.RealPath(t, "cifar10/jpeg-substitute/cifar10_jpeg_lossy_yoongikim.tar.gz")
	for _, c := range []struct {
		split    string
		perClass int
	}{{"train", 5000}, {"test", 1000}} {
		ds, classes, err := Load(src, "cifar10-jpeg/"+c.split)
		require.NoError(t, err)
		assert.Equal(t, cifar10.Classes, classes, "sorted folder names are CIFAR-10's label order")
		assert.Equal(t, tensor.Shape{10 * c.perClass, 3, 32, 32}, ds.Tensor("image").Shape())
		var counts [10]int
		for _, l := range ds.Tensor("label").Int64s() {
			counts[l]++
		}
		for k, n := range counts {
			assert.Equal(t, c.perClass, n, "class %s", classes[k])
		}
		t.Logf("CIFAR-10 JPEG %s: %d images", c.split, ds.Len())
	}
}

// FuzzDecodeImage: any bytes decode to an image of the declared size or an error.
func FuzzDecodeImage(f *testing.F) {
	f.Add(pngBytes(f, 2, 2, 9))
	f.Add(jpegBytes(f, 3, 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		pix, h, w, err := decodeImage(b, -1, -1)
		if err != nil {
			return
		}
		require.Len(t, pix, 3*h*w)
	})
}
