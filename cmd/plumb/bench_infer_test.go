package main

import (
	"bytes"
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// benchTable parses plumb bench-infer's output: its header line, then
// one row of seven numbers per (batch, concurrency) pair.
func benchTable(t *testing.T, out string) [][]float64 {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 2, out)
	require.Equal(t, []string{"batch", "concurrency", "calls", "items/s", "p50", "ms", "p90", "ms", "p99", "ms"}, strings.Fields(lines[1]), out)
	var rows [][]float64
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		require.Len(t, f, 7, l)
		row := make([]float64, len(f))
		for i, s := range f {
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err, l)
			row[i] = v
		}
		rows = append(rows, row)
	}
	return rows
}

// plumb bench-infer prints a row per batch size and concurrency, in
// order, each with calls and throughput positive and its latency
// percentiles ordered, for a built-in model and for a checkpoint's.
func TestBenchInfer(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	ckpt := filepath.Join(t.TempDir(), "sentiment.safetensors")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "sentiment", "--batch", "4", "--data", writeTinyIMDB(t), "--save", ckpt}, &out, &errOut), errOut.String())
	for _, c := range []struct {
		args  []string
		first string
		pairs [][2]float64
	}{
		{[]string{"mnist-mlp", "--batch", "1,3", "--concurrency", "1,4"}, "mnist-mlp (fresh weights); GOMAXPROCS ", [][2]float64{{1, 1}, {1, 4}, {3, 1}, {3, 4}}},
		{[]string{"--no-fusion", "--seq-len", "4", "--concurrency", "2", "--batch", "2", "text-lstm"}, "text-lstm (fresh weights)", [][2]float64{{2, 2}}},
		{[]string{"--load", ckpt, "--batch", "5", "--concurrency", "1,2", "--seq-len", "3"}, ckpt + " (a sentiment model)", [][2]float64{{5, 1}, {5, 2}}},
	} {
		out.Reset()
		require.NoError(t, run(append([]string{"bench-infer", "--duration", "30ms"}, c.args...), &out, &errOut), "%v: %s", c.args, errOut.String())
		require.True(t, strings.HasPrefix(out.String(), c.first), out.String())
		require.Contains(t, out.String(), "; 30ms a row\n")
		rows := benchTable(t, out.String())
		require.Len(t, rows, len(c.pairs), out.String())
		for i, r := range rows {
			require.Equal(t, c.pairs[i], [2]float64{r[0], r[1]}, "row %d: batch and concurrency", i)
			require.Positive(t, r[2], "row %d: calls", i)
			require.Positive(t, r[3], "row %d: items/s", i)
			require.Positive(t, r[4], "row %d: p50", i)
			require.LessOrEqual(t, r[4], r[5], "row %d: p50 <= p90", i)
			require.LessOrEqual(t, r[5], r[6], "row %d: p90 <= p99", i)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench-infer"}, "want one MODEL (mnist-cnn, mnist-mlp, resnet32, text-cnn, text-lstm, translate-encoder) or --load CKPT, got 0"},
		{[]string{"bench-infer", "vgg"}, `unknown model "vgg"`},
		{[]string{"bench-infer", "--load", ckpt, "mnist-cnn"}, "time one or the other"},
		{[]string{"bench-infer", "--batch", "1,0", "mnist-cnn"}, `--batch "1,0": want positive integers`},
		{[]string{"bench-infer", "--concurrency", "x", "mnist-cnn"}, `--concurrency "x"`},
		{[]string{"bench-infer", "--duration", "0s", "mnist-cnn"}, "--duration 0s, want a positive duration"},
		{[]string{"bench-infer", "--load", filepath.Join(t.TempDir(), "none.safetensors")}, "none.safetensors"},
	} {
		err := run(c.args, &out, &errOut)
		require.ErrorContains(t, err, c.want, "%v", c.args)
		require.NotContains(t, err.Error(), "\n", "%v: one line", c.args)
	}
	errOut.Reset()
	err := run([]string{"bench-infer", "--help"}, &out, &errOut)
	require.ErrorIs(t, err, flag.ErrHelp)
	require.Equal(t, 0, exitStatus(err, &errOut))
	require.Contains(t, errOut.String(), "plumb bench-infer --load CKPT")
}

// The nearest-rank percentile is the value at rank ⌈p/100 · n⌉.
func TestNearestRank(t *testing.T) {
	ten := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ n, p, want int }{{10, 50, 5}, {10, 90, 9}, {10, 99, 10}, {1, 50, 1}, {1, 99, 1}, {3, 50, 2}, {3, 90, 3}} {
		d := make([]time.Duration, c.n)
		for i := range d {
			d[i] = time.Duration(ten[i])
		}
		require.Equal(t, time.Duration(c.want), nearestRank(d, c.p), "n %d p %d", c.n, c.p)
	}
}
