package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// idxImages writes n random side×side images of c channels as an IDX
// file of unsigned bytes ([N, H, W] for one channel, [N, H, W, C] else),
// as plumb predict reads them, and returns its path.
func idxImages(t *testing.T, n, side, c int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 3))
	dims := []uint32{uint32(n), uint32(side), uint32(side)}
	if c > 1 {
		dims = append(dims, uint32(c))
	}
	var b bytes.Buffer
	b.Write([]byte{0, 0, 8, byte(len(dims))})
	for _, d := range dims {
		require.NoError(t, binary.Write(&b, binary.BigEndian, d))
	}
	for range n * side * side * c {
		b.WriteByte(byte(rng.IntN(256)))
	}
	path := filepath.Join(t.TempDir(), "images.idx")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path
}

// plumb infer --load prints what plumb predict prints for the same
// inputs: each chapter with a plan path trains a tiny model, saves it,
// and both commands run on the same inputs (files, or stdin), infer in
// batches smaller than the inputs so that a full batch's plan and the
// last, shorter batch's both run.
func TestInferLoadPrintsWhatPredictPrints(t *testing.T) {
	reviews := "a great film\na dull bad film.\nfine fine fine\nbad\nzebra unknown words\na great fine film! a dull one\nfilm\n"
	for _, c := range []struct {
		name    string
		chapter string
		root    func(t *testing.T) string
		train   []string
		files   func(t *testing.T) []string // nil: stdin
		stdin   string
		lines   int
		batches []string
	}{
		{"mnist-cnn", "mnist", func(*testing.T) string { return "" }, []string{"--limit", "128", "--test-limit", "10"},
			func(t *testing.T) []string {
				png := filepath.Join(t.TempDir(), "digit.png")
				require.NoError(t, os.WriteFile(png, []byte(pngOf(t, 28)), 0o644))
				return []string{idxImages(t, 6, 28, 1, 1), png}
			}, "", 7, []string{"2", "3", "64"}},
		{"mnist-mlp", "mnist", func(*testing.T) string { return "" }, []string{"--model", "mlp", "--limit", "128", "--test-limit", "10"},
			func(t *testing.T) []string { return []string{idxImages(t, 5, 28, 1, 2)} }, "", 5, []string{"2"}},
		{"cifar10-resnet", "cifar10", writeTinyCIFAR, []string{"--depth", "8", "--width", "4", "--batch", "8"},
			func(t *testing.T) []string { return []string{idxImages(t, 5, 32, 3, 3)} }, "", 5, []string{"2", "4"}},
		{"cifar10-vgg", "cifar10", writeTinyCIFAR, []string{"--model", "vgg", "--depth", "11", "--width", "2", "--batch", "8"},
			func(t *testing.T) []string { return []string{idxImages(t, 3, 32, 3, 4)} }, "", 3, []string{"2"}},
		{"sentiment-cnn", "sentiment", writeTinyIMDB, []string{"--batch", "4"}, nil, reviews, 7, []string{"3", "64"}},
		{"sentiment-lstm", "sentiment", writeTinyIMDB, []string{"--model", "lstm", "--batch", "4"}, nil, reviews, 7, []string{"2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			ckpt := filepath.Join(t.TempDir(), c.name+".safetensors")
			var out, errOut bytes.Buffer
			args := append([]string{"train", c.chapter, "--save", ckpt}, c.train...)
			if root := c.root(t); root != "" {
				args = append(args, "--data", root)
			}
			require.NoError(t, run(args, &out, &errOut), errOut.String())

			var files []string
			if c.files != nil {
				files = c.files(t)
			}
			predict := func(args ...string) string {
				stdin = strings.NewReader(c.stdin)
				t.Cleanup(func() { stdin = os.Stdin })
				out.Reset()
				require.NoError(t, run(append(args, files...), &out, &errOut), "%v: %s", args, errOut.String())
				return out.String()
			}
			want := predict("predict", c.chapter, "--load", ckpt)
			require.Len(t, strings.Split(strings.TrimRight(want, "\n"), "\n"), c.lines, want)
			for _, b := range c.batches {
				require.Equal(t, want, predict("infer", "--load", ckpt, "--batch", b), "--batch %s", b)
			}
			require.Equal(t, want, predict("infer", "--batch", c.batches[0], "--no-fusion", "--load", ckpt), "unfused")

			out.Reset()
			require.NoError(t, run([]string{"infer", "--explain", "--load", ckpt, "--batch", "2", "--seq-len", "5"}, &out, &errOut))
			require.Contains(t, out.String(), "after the passes:")
		})
	}
}

// plumb infer --load refuses, in one line naming what was wrong, a
// checkpoint of a chapter without a plan path, a --model other than the
// one the checkpoint holds, a missing file or checkpoint, and flags that
// do not go together; --help exits 0.
func TestInferLoadErrors(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	mlp, rec := filepath.Join(dir, "mlp.safetensors"), filepath.Join(dir, "rec.safetensors")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "mnist", "--model", "mlp", "--limit", "64", "--test-limit", "10", "--save", mlp}, &out, &errOut), errOut.String())
	require.NoError(t, run([]string{"train", "recommender", "--batch", "16", "--data", writeTinyMovieLens(t), "--save", rec}, &out, &errOut), errOut.String())
	img := idxImages(t, 2, 28, 1, 5)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"infer", "--load", rec, "3"}, "holds a recommender model, which has no inference plan path (plumb infer --load runs mnist, cifar10, sentiment): use plumb predict recommender --load"},
		{[]string{"infer", "--load", mlp, "--model", "cnn", img}, "holds the MNIST mlp, not the cnn"},
		{[]string{"infer", "--load", mlp, filepath.Join(dir, "none.png")}, "none.png: no such file"},
		{[]string{"infer", "--load", filepath.Join(dir, "none.safetensors"), img}, "none.safetensors"},
		{[]string{"infer", "--load", mlp, "--batch", "0", img}, "--batch 0 and --seq-len 20 must be positive"},
		{[]string{"infer", "--model", "mlp", "--explain", "mnist-mlp"}, "--model mlp: only with --load"},
		{[]string{"infer", "--explain", "--load", mlp, img}, "unexpected argument"},
		{[]string{"infer", img}, "want --load CKPT (predictions) or --explain (the plan)"},
	} {
		err := run(c.args, &out, &errOut)
		require.ErrorContains(t, err, c.want, "%v", c.args)
		require.NotContains(t, err.Error(), "\n", "%v: one line", c.args)
	}
	err := run([]string{"infer", "--help"}, &out, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Equal(t, 0, exitStatus(err, &errOut))
	require.Contains(t, errOut.String(), "plumb infer --load CKPT")
}
