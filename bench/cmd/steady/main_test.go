package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSummarize(t *testing.T) {
	for _, c := range []struct {
		name              string
		samples           []float64
		best, median, p90 float64
	}{
		{"one", []float64{4}, 4, 4, 4},
		{"two", []float64{3, 1}, 1, 2, 2.8},
		{"odd", []float64{5, 1, 3}, 1, 3, 4.6},
		{"even", []float64{4, 1, 3, 2}, 1, 2.5, 3.7},
		{"ten", []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 1, 5.5, 9.1},
		{"eleven", []float64{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 1, 6, 10},
		{"ties", []float64{2, 2, 2, 8}, 2, 2, 6.2},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := append([]float64(nil), c.samples...)
			s, err := Summarize(in)
			require.NoError(t, err)
			require.Equal(t, len(c.samples), s.Blocks)
			require.InDelta(t, c.best, s.Best, 1e-12)
			require.InDelta(t, c.median, s.Median, 1e-12)
			require.InDelta(t, c.p90, s.P90, 1e-12)
			require.InDelta(t, c.median/c.best-1, s.Spread(), 1e-12)
			require.Equal(t, c.samples, in, "Summarize must not reorder its input")
		})
	}
}

func TestSummarizeRejects(t *testing.T) {
	for _, c := range []struct {
		name    string
		samples []float64
		want    string
	}{
		{"empty", nil, "no block times"},
		{"zero", []float64{1, 0}, "block 1"},
		{"negative", []float64{-1}, "block 0"},
		{"nan", []float64{math.NaN()}, "positive finite"},
		{"inf", []float64{1, math.Inf(1)}, "positive finite"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Summarize(c.samples)
			require.ErrorContains(t, err, c.want)
		})
	}
}

func TestParse(t *testing.T) {
	out := "goos: linux\npath avx2 chosen\nBenchmarkSgemm/1024x1024x1024-2   \t      40\t  12500000 ns/op\t  171.8 GFLOP/s\n" +
		"BenchmarkSgemm/1024x1024x1024-2   \t      38\t  13000000 ns/op\t  165.2 GFLOP/s\nPASS\n"
	got, err := Parse(strings.NewReader(out))
	require.NoError(t, err)
	require.Equal(t, []Block{{40, 12.5}, {38, 13}}, got)

	for _, c := range []struct{ name, out, want string }{
		{"two benchmarks", "BenchmarkA 10 5 ns/op\nBenchmarkB 10 5 ns/op\n", "want one benchmark"},
		{"bad iterations", "BenchmarkA x 5 ns/op\n", "iterations"},
		{"zero time", "BenchmarkA 10 0 ns/op\n", "ns/op, want a positive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.out))
			require.ErrorContains(t, err, c.want)
		})
	}
}

func TestTable(t *testing.T) {
	log := "mlp 2 1000 0.5\nsgemm 2 40 13\nsgemm 1 20 24\nmlp 2 1100 0.4\n\nsgemm 2 40 12\nother 1 5 3\nconv 2 1 3123.4\nsgemm 2 40 16\n"
	recs, err := ReadRecords(strings.NewReader(log))
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, Table(&b, recs))
	require.Equal(t, "| workload | threads | blocks | best (ms) | median (ms) | p90 (ms) | spread |\n"+
		"|---|---|---|---|---|---|---|\n"+
		"| SGEMM 1024³ | 1 | 1 | 24 | 24 | 24 | 0% |\n"+
		"| SGEMM 1024³ | 2 | 3 | 12 | 13 | 15.4 | 8% |\n"+
		"| MLP train step, batch 64 | 2 | 2 | 0.4 | 0.45 | 0.49 | 12% |\n"+
		"| ResNet-32 convolutions | 2 | 1 | 3123 | 3123 | 3123 | 0% |\n"+
		"| other | 1 | 1 | 3 | 3 | 3 | 0% |\n", b.String())
}

func TestReadRecordsRejects(t *testing.T) {
	for _, c := range []struct{ name, log, want string }{
		{"fields", "sgemm 2 40\n", "has 3 fields, want 4"},
		{"threads", "sgemm 0 40 12\n", "line 1"},
		{"ms", "sgemm 2 40 -1\n", "positive"},
		{"number", "mlp 2 10 0.4\nsgemm two 40 12\n", "line 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadRecords(strings.NewReader(c.log))
			require.ErrorContains(t, err, c.want)
		})
	}
}

// BenchmarkSteadySmoke is a tiny workload for TestRunSmoke to time.
func BenchmarkSteadySmoke(b *testing.B) {
	x := 1.0
	for range b.N {
		x = math.Sqrt(x + 1)
	}
	if x == 0 {
		b.Fatal("unreachable")
	}
}

// TestRunSmoke runs this test binary, in a fresh process, as a workload's
// binary: BenchmarkSteadySmoke for two blocks of at least 20 ms.
func TestRunSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark process")
	}
	bin, err := os.Executable()
	require.NoError(t, err)
	got, err := Run(bin, ".", "^BenchmarkSteadySmoke$", 1, 2, 20*time.Millisecond)
	require.NoError(t, err)
	require.Len(t, got, 2)
	for _, b := range got {
		require.Positive(t, b.Iters)
		require.Greater(t, float64(b.Iters)*b.MS, 20.0*0.9, "a block runs for at least the block time")
	}
	_, err = Run(bin, ".", "^BenchmarkNone$", 1, 1, 20*time.Millisecond)
	require.ErrorContains(t, err, "reported 0 blocks, want 1")
}

func TestRunMode(t *testing.T) {
	var out bytes.Buffer
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no mode", nil, "want a mode"},
		{"bad mode", []string{"walk"}, "unknown mode"},
		{"workload", []string{"run", "-bins", ".", "-workload", "gru"}, `unknown workload "gru"`},
		{"no bins", []string{"run", "-workload", "sgemm"}, "needs -bins"},
		{"threads", []string{"run", "-bins", t.TempDir(), "-workload", "sgemm", "-threads", "0"}, "want at least one"},
		{"missing binary", []string{"run", "-bins", t.TempDir(), "-workload", "sgemm"}, filepath.Join("gemm.test")},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorContains(t, run(c.args, strings.NewReader(""), &out), c.want)
		})
	}
	require.Empty(t, out.String())
}
