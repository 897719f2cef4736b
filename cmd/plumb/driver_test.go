package main

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/models/chapter"
)

// pngOf encodes a side×side image whose pixel (x, y) is (x*y) mod 256.
func pngOf(t *testing.T, side int) string {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for p := range side * side {
		img.Set(p%side, p/side, color.RGBA{uint8(p % 256), uint8(p * 7 % 256), uint8(p * 13 % 256), 255})
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.String()
}

// Every chapter goes through the one driver: train a tiny model on tiny
// data, save it, predict from stdin without --model (the checkpoint names
// its model), and eval it, with --data the dataset root or the chapter's
// own folder.
func TestEveryChapterTrainsPredictsAndEvaluates(t *testing.T) {
	for _, c := range []struct {
		chapter string
		root    func(t *testing.T) string
		folder  string // the chapter's folder under the root
		train   []string
		stdin   func(t *testing.T) string
		predict *regexp.Regexp // one line of predict's output
		lines   int            // lines predict prints
		eval    string         // in eval's line
	}{
		{"mnist", func(*testing.T) string { return "" }, "", []string{"--model", "mlp", "--limit", "256", "--test-limit", "100"},
			func(t *testing.T) string { return pngOf(t, 28) }, regexp.MustCompile(`^stdin\t\d\t\(\d [01]\.\d{4} \d [01]\.\d{4} \d [01]\.\d{4}\)$`), 1,
			"on 100 test images (mlp): accuracy "},
		{"cifar10", writeTinyCIFAR, "cifar10", []string{"--model", "vgg", "--depth", "11", "--width", "1", "--batch", "8"},
			func(t *testing.T) string { return pngOf(t, 32) }, regexp.MustCompile(`^stdin\t[a-z]+\t\([a-z]+ [01]\.\d{4} [a-z]+ [01]\.\d{4} [a-z]+ [01]\.\d{4}\)$`), 1,
			"on 10 test images (vgg, bin): accuracy "},
		{"word2vec", writeTinyPTB, "ptb", []string{"--limit", "200", "--epochs", "1"},
			func(*testing.T) string { return "cat\nzebra\n" }, regexp.MustCompile(`^cat\t(\S+ -?\d+\.\d{4} ?){10}$`), 2, "test cost "},
		{"recommender", writeTinyMovieLens, "movielens", []string{"--batch", "16", "--epochs", "1"},
			func(*testing.T) string { return "3\n" }, regexp.MustCompile(`^user 3:( "Film \d" \d\.\d\d;){6}$`), 1, "on 20 held-out ratings: mse "},
		{"sentiment", writeTinyIMDB, "imdb", []string{"--model", "lstm", "--batch", "4"},
			func(*testing.T) string { return "a great film\na dull bad film.\n" }, regexp.MustCompile(`^a great film\t(positive|negative)\t\((positive|negative) [01]\.\d{4} (positive|negative) [01]\.\d{4}\)$`), 2,
			"on 12 test reviews (lstm): accuracy "},
		{"bert-mlm", writeTinyIMDB, "imdb", []string{"--layers", "1", "--hidden", "8", "--heads", "2", "--ffn", "16", "--vocab-size", "40", "--seq-len", "24", "--batch", "4", "--epochs", "1"},
			func(*testing.T) string { return "a great [MASK] film\n" }, regexp.MustCompile(`^a great \[MASK\] film\t(\S+ [01]\.\d{3}(, |$)){5}`), 1,
			"on 12 test reviews, masked-token accuracy: "},
		{"bert-classify", writeTinyIMDB, "imdb", []string{"--layers", "1", "--hidden", "8", "--heads", "2", "--ffn", "16", "--vocab-size", "40", "--seq-len", "24", "--batch", "4", "--epochs", "1"},
			func(*testing.T) string { return "a great film\na dull bad film.\n" }, regexp.MustCompile(`^a great film\t(positive|negative)\t\((positive|negative) [01]\.\d{4} (positive|negative) [01]\.\d{4}\)$`), 2,
			"on 12 test reviews: accuracy "},
		{"srl", writeTinyCoNLL, "conll05", []string{"--batch", "4"},
			func(*testing.T) string { return "The dog [saw|see] fish .\n" }, regexp.MustCompile(`^The/\S+ dog/\S+ saw/\S+ fish/\S+ \./\S+$`), 1,
			"on 1 held-out propositions: f1 "},
		{"translate", writeTinyMulti30k, "multi30k", []string{"--emb", "8", "--hidden", "8", "--batch", "4", "--beam", "2", "--max-len", "6"},
			func(*testing.T) string { return "A man rides a bike.\nTwo dogs play.\nunknown words here\n" }, regexp.MustCompile(`^\S+( \S+){0,5}$`), 3,
			"test2016 (beam 4): bleu "},
		{"transformer", writeTinyMulti30k, "multi30k", []string{"--epochs", "1", "--layers", "1", "--d-model", "16", "--heads", "2", "--ffn", "32", "--merges", "10", "--batch", "64", "--beam", "2", "--decode-len", "6"},
			func(*testing.T) string { return "A man rides a bike.\nTwo dogs play.\nunknown wörds here\n" }, regexp.MustCompile(`^(\S+( \S+){0,5})?$`), 3,
			"test2016 sentences (beam 2, alpha 0.6): bleu "},
	} {
		t.Run(c.chapter, func(t *testing.T) {
			root := c.root(t)
			ckpt := filepath.Join(t.TempDir(), c.chapter+".safetensors")
			var out, errOut bytes.Buffer
			args := append([]string{"train", c.chapter, "--save", ckpt}, c.train...)
			if root != "" {
				args = append(args, "--data", root)
			}
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp) // where a run without --state keeps its own
			require.NoError(t, run(args, &out, &errOut), errOut.String())
			require.Contains(t, out.String(), "epoch 1/1: train loss")
			if i := slices.Index(c.train, "--limit"); i >= 0 {
				n := c.train[i+1]
				require.Contains(t, out.String(), "--limit "+n+": a random subset of "+n+" of ", "--limit says what it took")
			}
			spec, err := findChapter(c.chapter)
			require.NoError(t, err)
			require.Contains(t, out.String(), " "+spec.Unit+"/s,", "the epoch line's rate is in the chapter's unit")
			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			require.Empty(t, left, "a finished run removes the state file it kept for Ctrl-C")

			out.Reset()
			summary := append([]string{"summary", c.chapter}, c.train...)
			if root != "" {
				summary = append(summary, "--data", root)
			}
			require.NoError(t, run(summary, &out, &errOut), errOut.String())
			require.Regexp(t, `(?m)^total params: [1-9]\d*`, out.String())
			require.Regexp(t, `(?m)^\S+\s+\S.*\s[1-9]\d*$`, out.String(), "a layer with parameters")
			meta, err := checkpoint.Meta(ckpt)
			require.NoError(t, err)
			require.Equal(t, c.chapter, meta[chapter.KeyChapter])

			stdin = strings.NewReader(c.stdin(t))
			t.Cleanup(func() { stdin = os.Stdin })
			out.Reset()
			require.NoError(t, run([]string{"predict", c.chapter, "--load", ckpt}, &out, &errOut), errOut.String())
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			require.Len(t, lines, c.lines, out.String())
			require.Regexp(t, c.predict, lines[0])

			for _, data := range []string{root, filepath.Join(root, c.folder)} {
				out.Reset()
				args := []string{"eval", c.chapter, "--load", ckpt, "--test-limit", "100"}
				if root != "" {
					args = append(args, "--data", data)
				}
				require.NoError(t, run(args, &out, &errOut), errOut.String())
				require.Contains(t, out.String(), c.chapter+" from "+ckpt+" on ")
				require.Contains(t, out.String(), c.eval)
			}
		})
	}
}

// A checkpoint knows its model: eval with the wrong --model names the
// model the file holds in one line, and a file of another chapter names
// its chapter.
func TestCheckpointNamesItsModel(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "mlp.safetensors")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "mnist", "--model", "mlp", "--limit", "128", "--test-limit", "10", "--save", ckpt}, &out, &errOut), errOut.String())
	err := run([]string{"eval", "mnist", "--model", "cnn", "--load", ckpt}, &out, &errOut)
	require.ErrorContains(t, err, "holds the MNIST mlp, not the cnn")
	require.NotContains(t, err.Error(), "\n", "one line")
	require.NotContains(t, err.Error(), "missing")
	err = run([]string{"eval", "cifar10", "--load", ckpt}, &out, &errOut)
	require.ErrorContains(t, err, "holds a mnist model: plumb eval mnist --load")
	err = run([]string{"predict", "sentiment", "--load", ckpt}, &out, &errOut)
	require.ErrorContains(t, err, "holds a mnist model: plumb predict mnist --load")

	// predict reads the image files named, in any order with the flags,
	// and runs on the CPU only.
	dir := t.TempDir()
	img := filepath.Join(dir, "digit.png")
	require.NoError(t, os.WriteFile(img, []byte(pngOf(t, 28)), 0o644))
	out.Reset()
	require.NoError(t, run([]string{"predict", "mnist", img, "--load", ckpt, img}, &out, &errOut), errOut.String())
	require.Regexp(t, `^`+regexp.QuoteMeta(img)+`\t\d\t\(.*\)\n`+regexp.QuoteMeta(img)+`\t\d\t`, out.String())
	require.ErrorContains(t, run([]string{"predict", "mnist", "--load", ckpt, filepath.Join(dir, "none.png")}, &out, &errOut), "no such file")
	require.ErrorContains(t, run([]string{"predict", "mnist", "--load", ckpt, "--device", "cuda", img}, &out, &errOut), "--device cuda")

	// A file without Plumb's metadata (as checkpoint.Save writes) is
	// refused with what it lacks.
	bare := filepath.Join(t.TempDir(), "bare.safetensors")
	require.NoError(t, checkpoint.Save(bare, nil, nil))
	require.ErrorContains(t, run([]string{"eval", "mnist", "--load", bare}, &out, &errOut), "names no chapter")
}

// --help at every level prints a usage and exits 0: the top, each
// command, each chapter of train, eval and predict, and the run tools.
func TestHelpAtEveryLevel(t *testing.T) {
	cases := [][]string{{"--help"}, {"-h"}, {"help"}}
	for _, cmd := range []string{"train", "eval", "predict"} {
		cases = append(cases, []string{cmd, "--help"}, []string{cmd, "-h"})
		for _, name := range chapterNames() {
			cases = append(cases, []string{cmd, name, "--help"}, []string{cmd, name, "-h"})
		}
	}
	for _, cmd := range []string{"translate", "parity", "plot", "compare", "kpi", "scale"} {
		cases = append(cases, []string{cmd, "--help"})
	}
	for _, args := range cases {
		var out, errOut bytes.Buffer
		err := run(args, &out, &errOut)
		require.ErrorIs(t, err, flag.ErrHelp, "%v", args)
		require.Equal(t, 0, exitStatus(err, &errOut), "%v", args)
		require.NotEmpty(t, out.String()+errOut.String(), "%v prints a usage", args)
	}
	var out, errOut bytes.Buffer
	require.ErrorIs(t, run([]string{"train", "srl", "--help"}, &out, &errOut), flag.ErrHelp)
	require.Contains(t, errOut.String(), "-crf-lr", "the chapter's own flags")
	require.Contains(t, out.String(), "plumb train srl")
	out.Reset()
	require.ErrorIs(t, run([]string{"--help"}, &out, &errOut), flag.ErrHelp)
	for _, name := range chapterNames() {
		require.Contains(t, out.String(), "plumb train "+name, "the top-level usage lists every chapter")
		require.Contains(t, out.String(), "plumb predict "+name)
	}
}

// --data takes the dataset root or the chapter's folder; when neither
// holds the data, the error lists where the driver looked.
func TestDataErrorsListWhereTheyLooked(t *testing.T) {
	t.Setenv("PLUMB_DATA", "")
	empty := t.TempDir()
	for _, name := range chapterNames() {
		spec, err := findChapter(name)
		require.NoError(t, err)
		var out, errOut bytes.Buffer
		err = run([]string{"train", name, "--data", empty}, &out, &errOut)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), filepath.Join(empty, spec.Folders[0]), name)
		require.Contains(t, err.Error(), "looked in", name)
		if spec.NoData {
			continue
		}
		err = run([]string{"train", name}, &out, &errOut)
		require.ErrorContains(t, err, "no data: pass --data DIR (the dataset root holding "+spec.Folders[0], name)
	}
}
