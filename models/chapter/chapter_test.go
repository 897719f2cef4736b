package chapter

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/tensor"
)

// gray returns a w×h gray image whose pixel (x, y) is 10x+y.
func gray(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetGray(x, y, color.Gray{Y: uint8(10*x + y)})
		}
	}
	return img
}

// idx encodes dims and bytes as an IDX file of unsigned bytes.
func idx(dims []int, b []byte) []byte {
	out := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		out = append(out, byte(d>>24), byte(d>>16), byte(d>>8), byte(d))
	}
	return append(out, b...)
}

func TestReadImages(t *testing.T) {
	dir := t.TempDir()
	var pngBuf, jpgBuf bytes.Buffer
	require.NoError(t, png.Encode(&pngBuf, gray(4, 4)))
	rgb := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for p := range 16 {
		rgb.Set(p%4, p/4, color.RGBA{R: 200, G: 100, B: 0, A: 255})
	}
	require.NoError(t, jpeg.Encode(&jpgBuf, rgb, &jpeg.Options{Quality: 100}))
	pix := make([]byte, 2*16)
	for i := range pix {
		pix[i] = byte(i)
	}
	files := map[string][]byte{
		"a.png": pngBuf.Bytes(), "b.jpg": jpgBuf.Bytes(), "two.idx": idx([]int{2, 4, 4}, pix), "one.idx": idx([]int{4, 4}, pix[:16]),
		"big.png":  func() []byte { var b bytes.Buffer; require.NoError(t, png.Encode(&b, gray(5, 4))); return b.Bytes() }(),
		"text.txt": []byte("not an image"), "rgb.idx": idx([]int{1, 4, 4, 3}, make([]byte, 48)),
	}
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	p := func(name string) string { return filepath.Join(dir, name) }

	names, x, err := ReadImages(Input{Files: []string{p("a.png"), p("two.idx"), p("one.idx")}}, 1, 4)
	require.NoError(t, err)
	require.Equal(t, []string{p("a.png"), p("two.idx") + "#0", p("two.idx") + "#1", p("one.idx")}, names)
	require.Equal(t, tensor.Shape{4, 1, 4, 4}, x.Shape())
	v := x.Float32s()
	require.InDelta(t, float32(10*3+2)/255, v[2*4+3], 1e-6, "the PNG's pixel (x 3, y 2), row-major")
	require.InDelta(t, float32(17)/255, v[16+16+1], 1e-6, "the second IDX image's second pixel")
	require.InDelta(t, float32(5)/255, v[48+5], 1e-6)

	names, x, err = ReadImages(Input{Stdin: bytes.NewReader(jpgBuf.Bytes())}, 3, 4)
	require.NoError(t, err)
	require.Equal(t, []string{"stdin"}, names)
	require.Equal(t, tensor.Shape{1, 3, 4, 4}, x.Shape())
	require.InDelta(t, 200.0/255, x.Float32s()[0], 0.02, "red, channels first")
	require.InDelta(t, 100.0/255, x.Float32s()[16], 0.02, "green")

	for _, c := range []struct {
		in       Input
		channels int
		want     string
	}{
		{Input{Files: []string{p("big.png")}}, 1, "a 5×4 png image, want 4×4"},
		{Input{Files: []string{p("text.txt")}}, 1, "not a PNG, JPEG or IDX image"},
		{Input{Files: []string{p("rgb.idx")}}, 1, "IDX images of 4×4×3, want 4×4×1"},
		{Input{Files: []string{p("missing.png")}}, 1, "no such file"},
		{Input{}, 1, "no input"},
		{Input{Files: []string{p("a.png")}}, 2, "2 channels"},
	} {
		_, _, err := ReadImages(c.in, c.channels, 4)
		require.ErrorContains(t, err, c.want)
	}
}

func TestClassify(t *testing.T) {
	logits := tensor.MustFromSlice([]float32{0, 0, 2, 5, 1, 1}, 2, 3)
	var out bytes.Buffer
	require.NoError(t, Classify(&out, []string{"x", "y"}, logits, []string{"a", "b", "c"}, 2))
	// softmax(0, 0, 2) = (0.1065, 0.1065, 0.7870); softmax(5, 1, 1) = (0.9647, 0.0177, 0.0177)
	require.Equal(t, "x\tc\t(c 0.7870 a 0.1065)\ny\ta\t(a 0.9647 b 0.0177)\n", out.String())
	require.ErrorContains(t, Classify(&out, []string{"x"}, logits, []string{"a", "b", "c"}, 0), "for 1 inputs and 3 classes")
}

func TestMetaRoundTrip(t *testing.T) {
	type cfg struct {
		Model string `json:"model"`
		Vocab int    `json:"vocab"`
	}
	v, err := data.NewVocab([]string{"<unk>", "the", "cat", "naïve word"}, "<unk>")
	require.NoError(t, err)
	vm, err := VocabMeta(v)
	require.NoError(t, err)
	meta, err := EncodeMeta("sentiment", cfg{"lstm", 4}, map[string]string{"plumb/vocab": vm})
	require.NoError(t, err)
	var got cfg
	require.NoError(t, DecodeMeta(meta, "sentiment", &got))
	require.Equal(t, cfg{"lstm", 4}, got)
	back, err := ParseVocab(meta, "plumb/vocab")
	require.NoError(t, err)
	require.NoError(t, SameVocab("test", v, back))
	require.Equal(t, v.UnkID(), back.UnkID())

	require.ErrorContains(t, DecodeMeta(meta, "mnist", &got), "holds a sentiment model, not a mnist one")
	require.ErrorContains(t, DecodeMeta(map[string]string{}, "mnist", &got), "names no chapter")
	bad := map[string]string{KeyChapter: "sentiment", KeyConfig: `{"model":"cnn","layers":3}`}
	require.ErrorContains(t, DecodeMeta(bad, "sentiment", &got), `unknown field "layers"`)
	_, err = ParseVocab(meta, "plumb/missing")
	require.ErrorContains(t, err, "no dictionary")
	other, err := data.NewVocab([]string{"<unk>", "the", "dog", "naïve word"}, "<unk>")
	require.NoError(t, err)
	require.ErrorContains(t, SameVocab("test", v, other), `has "dog" as word 2, the model's "cat"`)
}

// --limit on a class-sorted set (the CIFAR JPEG tree's order) takes every
// class in its share, seeded, and says what it took; a set without a label
// field gets a plain random subset; 0 keeps everything silently.
func TestLimitAndLines(t *testing.T) {
	labels := make([]int64, 5000)
	for i := range labels {
		labels[i] = int64(i / 500) // class-sorted: 500 of each of 10
	}
	ds, err := data.NewDataset(data.DenseField("label", tensor.MustFromSlice(labels, len(labels))))
	require.NoError(t, err)
	var out bytes.Buffer
	sub, err := Limit(ds, "--limit", 512, 1, &out)
	require.NoError(t, err)
	require.Equal(t, 512, sub.Len())
	classes := map[int64]int{}
	for _, l := range sub.Tensor("label").Int64s() {
		classes[l]++
	}
	require.Len(t, classes, 10)
	for c, n := range classes {
		require.InDelta(t, 51.2, n, 1, "class %d", c)
	}
	require.Equal(t, "--limit 512: a random subset of 512 of 5000 examples (seed 1), stratified by label: 10 classes of 51 to 52\n", out.String())
	again, err := Limit(ds, "--limit", 512, 1, nil)
	require.NoError(t, err)
	require.Equal(t, sub.Tensor("label").Int64s(), again.Tensor("label").Int64s(), "seeded")

	unlabelled, err := data.NewDataset(data.DenseField("score", tensor.MustFromSlice(labels, len(labels))))
	require.NoError(t, err)
	out.Reset()
	sub, err = Limit(unlabelled, "--test-limit", 20, 1, &out)
	require.NoError(t, err)
	require.Equal(t, 20, sub.Len())
	require.Equal(t, "--test-limit 20: a random subset of 20 of 5000 examples (seed 1)\n", out.String())

	out.Reset()
	all, err := Limit(ds, "--limit", 0, 1, &out)
	require.NoError(t, err)
	require.Same(t, ds, all)
	require.Empty(t, out.String())
	_, err = Limit(nil, "--limit", 5, 1, &out)
	require.ErrorContains(t, err, "--limit 5")

	var got []string
	require.NoError(t, Lines(Input{Stdin: strings.NewReader("  a b \n\n c\n")}, func(l string) error { got = append(got, l); return nil }))
	require.Equal(t, []string{"a b", "c"}, got)
}

func TestExcerpt(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 40, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"a review that runs on", 10, "a revie..."},
		{"ünïcödé text", 8, "ünïcö..."},
		{"tiny n", 3, "tiny n"},
	} {
		require.Equal(t, c.want, Excerpt(c.in, c.n), c.in)
	}
}
