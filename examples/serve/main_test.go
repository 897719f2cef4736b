package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--nope"}, "flag provided but not defined"},
		{"max batch", []string{"--max-batch", "0"}, "max batch 0"},
		{"workers", []string{"--workers", "0"}, "workers 0"},
		{"extra argument", []string{"mnist"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.args, io.Discard, io.Discard)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// writeVocab writes tinyVocab(n) to a file and returns its path.
func writeVocab(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vocab.txt")
	var b bytes.Buffer
	require.NoError(t, tinyVocab(t, n).Save(&b))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	return path
}

func TestLoadModelsErrors(t *testing.T) {
	vocab := writeVocab(t, 10)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no checkpoint", []string{"--digit", "mlp"}, "--digit-ckpt FILE (written by plumb train mnist --model mlp --save) is required, or --fresh"},
		{"checkpoint and fresh", []string{"--digit-ckpt", "x", "--fresh"}, "--digit-ckpt and --fresh: give one"},
		{"missing checkpoint", []string{"--digit", "mlp", "--digit-ckpt", filepath.Join(t.TempDir(), "none.safetensors")}, "--digit-ckpt: checkpoint:"},
		{"unknown digit model", []string{"--digit", "vgg", "--fresh"}, `--digit: mnist: unknown model "vgg"`},
		{"nothing to serve", []string{"--digit", "none"}, "nothing to serve"},
		{"no vocabulary", []string{"--digit", "none", "--sentiment", "cnn", "--fresh"}, "--vocab FILE or --imdb DIR"},
		{"two vocabularies", []string{"--digit", "none", "--sentiment", "cnn", "--fresh", "--vocab", vocab, "--imdb", "x"}, "give one"},
		{"missing vocabulary", []string{"--digit", "none", "--sentiment", "cnn", "--fresh", "--vocab", vocab + ".no"}, "--vocab: open"},
		{"unknown sentiment model", []string{"--digit", "none", "--sentiment", "rnn", "--fresh", "--vocab", vocab}, `unknown model "rnn"`},
		{"sentiment without checkpoint", []string{"--digit", "none", "--sentiment", "cnn", "--vocab", vocab}, "--sentiment-ckpt FILE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parse(tc.args, io.Discard)
			require.NoError(t, err)
			_, err = o.loadModels()
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestLoadModelsFromCheckpoint saves a model as plumb train --save does
// and checks that the server's model answers as that model does, not as a
// fresh one.
func TestLoadModelsFromCheckpoint(t *testing.T) {
	trained, err := mnist.New("mlp", tensor.NewRNG(42))
	require.NoError(t, err)
	ckpt := filepath.Join(t.TempDir(), "mlp.safetensors")
	require.NoError(t, checkpoint.Save(ckpt, trained.Params(), nil))
	ref, err := NewDigitPredictor(trained)
	require.NoError(t, err)
	imgs := randomImages(3, 4)
	want, err := ref.Predict(context.Background(), imgs)
	require.NoError(t, err)

	o, err := parse([]string{"--digit", "mlp", "--digit-ckpt", ckpt}, io.Discard)
	require.NoError(t, err)
	m, err := o.loadModels()
	require.NoError(t, err)
	assert.Equal(t, ModelInfo{Name: "mnist-mlp", Weights: ckpt}, m.digitInfo)
	got, err := m.digit.Predict(context.Background(), imgs)
	require.NoError(t, err)
	for i := range got {
		assert.Equal(t, want[i], got[i], "image %d", i)
	}

	o, err = parse([]string{"--digit", "mlp", "--fresh"}, io.Discard)
	require.NoError(t, err)
	fresh, err := o.loadModels()
	require.NoError(t, err)
	assert.Equal(t, ModelInfo{Name: "mnist-mlp", Weights: "fresh", Fresh: true, Seed: 1}, fresh.digitInfo)
	other, err := fresh.digit.Predict(context.Background(), imgs)
	require.NoError(t, err)
	assert.NotEqual(t, want[0].Probs, other[0].Probs, "the fresh model is not the checkpoint's")
}

func TestLoadSentimentVocabulary(t *testing.T) {
	vocab := writeVocab(t, 12)
	out := filepath.Join(t.TempDir(), "copy.txt")
	o, err := parse([]string{"--digit", "none", "--sentiment", "cnn", "--fresh", "--seed", "9", "--vocab", vocab, "--write-vocab", out}, io.Discard)
	require.NoError(t, err)
	m, err := o.loadModels()
	require.NoError(t, err)
	assert.Nil(t, m.digit)
	assert.Equal(t, ModelInfo{Name: "sentiment-cnn", Weights: "fresh", Fresh: true, Seed: 9}, m.sentInfo)
	ids, err := m.sent.Encode("w3 w11 zzz")
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 11, 12}, ids)
	a, err := os.ReadFile(vocab)
	require.NoError(t, err)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, a, b, "--write-vocab writes the vocabulary read")
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{ms(hundred...), 0.5, 50 * time.Millisecond},
		{ms(hundred...), 0.99, 99 * time.Millisecond},
		{ms(hundred...), 1, 100 * time.Millisecond},
	} {
		assert.Equal(t, tc.want, percentile(tc.sorted, tc.q), "q %g of %d", tc.q, len(tc.sorted))
	}
}

// TestLoadgen runs the load generator briefly on the fresh MLP: a row for
// each max batch and client count, no errors, and the batching ratio.
func TestLoadgen(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--loadgen", "--digit", "mlp", "--fresh", "--clients", "1,4", "--batches", "4,1",
		"--duration", "150ms", "--warmup", "20ms", "--input", "pixels"}, &out, io.Discard)
	require.NoError(t, err)
	var rows int
	for line := range strings.Lines(out.String()) {
		f := strings.Split(line, "|")
		if len(f) != 14 || !strings.HasPrefix(f[1], " in-process") {
			continue
		}
		rows++
		assert.Contains(t, f[1], "mnist-mlp")
		requests, err := strconv.Atoi(strings.TrimSpace(f[6]))
		require.NoError(t, err, line)
		assert.Positive(t, requests, line)
		assert.Equal(t, "0", strings.TrimSpace(f[7]), "errors: %s", line)
		cpu, err := strconv.ParseFloat(strings.TrimSpace(f[12]), 64)
		require.NoError(t, err, line)
		assert.Positive(t, cpu, line)
	}
	assert.Equal(t, 4, rows, out.String())
	assert.Contains(t, out.String(), "4 clients: max batch 4 serves")
}

func TestLoadgenFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clients", "1,x"}, "--clients \"1,x\""},
		{[]string{"--batches", "0"}, "--batches \"0\""},
		{[]string{"--endpoint", "audio"}, "--endpoint \"audio\""},
		{[]string{"--rounds", "0"}, "--rounds 0"},
		{[]string{"--input", "jpeg"}, "--input \"jpeg\""},
	} {
		err := run(context.Background(), append([]string{"--loadgen", "--digit", "mlp", "--fresh"}, tc.args...), io.Discard, io.Discard)
		assert.ErrorContains(t, err, tc.want)
	}
}

// TestLoadBodies checks that the load generator's PNG and pixel bodies
// of one seed carry the same image, as the server decodes them, and that
// the sentiment bodies are reviews the server accepts.
func TestLoadBodies(t *testing.T) {
	pngs, err := loadBodies("digit", "png", 3, 5)
	require.NoError(t, err)
	pixels, err := loadBodies("digit", "pixels", 3, 5)
	require.NoError(t, err)
	for i := range pngs {
		var a, b DigitRequest
		require.NoError(t, json.Unmarshal(pngs[i], &a))
		require.NoError(t, json.Unmarshal(pixels[i], &b))
		fromPNG, err := a.image()
		require.NoError(t, err)
		fromPixels, err := b.image()
		require.NoError(t, err)
		assert.Equal(t, fromPixels, fromPNG, "image %d", i)
		lit := 0
		for _, v := range fromPNG {
			if v > 0 {
				lit++
			}
		}
		assert.True(t, lit > 20 && lit < 400, "image %d: %d lit pixels, a digit's sparsity", i, lit)
		assert.Less(t, len(pngs[i]), len(pixels[i])/4, "the PNG body is the small one")
	}
	reviews, err := loadBodies("sentiment", "", 2, 5)
	require.NoError(t, err)
	for _, r := range reviews {
		var req SentimentRequest
		require.NoError(t, json.Unmarshal(r, &req))
		ids, err := fakeEncode(req.Text)
		require.NoError(t, err)
		assert.True(t, len(ids) >= 150 && len(ids) < 200)
	}
	_, err = loadBodies("digit", "tiff", 1, 1)
	assert.ErrorContains(t, err, `--input "tiff"`)
}
