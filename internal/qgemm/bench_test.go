package qgemm

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/plumbml/plumb/internal/gemm"
)

// benchShapes are products of the book models' layers at batch 64 (m×k
// by k×n): linear layers as they are, convolutions as their im2col
// GEMMs (m = 64·output pixels, k = in channels·kernel area, n = out
// channels).
var benchShapes = []struct {
	name    string
	m, n, k int
}{
	{"mlp_fc1_64x784x128", 64, 128, 784},
	{"lenet_fc_64x800x500", 64, 500, 800},
	{"mnist_cnn_conv1_36864x25x20", 64 * 24 * 24, 20, 25},
	{"mnist_cnn_conv2_4096x500x50", 64 * 8 * 8, 50, 500},
	{"resnet32_stage1_65536x144x16", 64 * 32 * 32, 16, 144},
	{"resnet32_stage2_16384x288x32", 64 * 16 * 16, 32, 288},
	{"resnet32_stage3_4096x576x64", 64 * 8 * 8, 64, 576},
	{"lstm_proj_64x256x1024", 64, 1024, 256},
	{"batch1_1x784x128", 1, 128, 784},
}

// TestMain prints the chosen path at the top of a benchmark run.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		name, why := Path()
		fmt.Printf("qgemm path %s: %s; gemm %v\n", name, why, gemm.Path())
	}
	os.Exit(m.Run())
}

// BenchmarkInt8VsFloat32 times, shape by shape, the int8 product with its
// float32 epilogue (per-column scales and bias), the bare int32 product,
// and internal/gemm's float32 product on B packed once, all on one
// goroutine; with -count the three alternate, so a busy moment of a
// shared machine falls on each in turn. GOP/s counts 2·m·n·k.
func BenchmarkInt8VsFloat32(b *testing.B) {
	for _, s := range benchShapes {
		rng := rand.New(rand.NewPCG(35, 8))
		a, lda, w, ldw := operands(rng, s.m, s.n, s.k, 0, 0)
		pb, err := PackB(s.k, s.n, w, ldw)
		if err != nil {
			b.Fatal(err)
		}
		ep := &Epilogue{ScaleA: 0.02, ScaleB: make([]float32, s.n), Bias: make([]float32, s.n)}
		for j := range s.n {
			ep.ScaleB[j] = 0.01
		}
		a32, w32 := make([]float32, len(a)), make([]float32, len(w))
		for i, v := range a {
			a32[i] = float32(v) * 0.02
		}
		for i, v := range w {
			w32[i] = float32(v) * 0.01
		}
		pf := gemm.PackB(false, s.k, s.n, w32, ldw)
		out := make([]float32, s.m*s.n)
		acc := make([]int32, s.m*s.n)
		report := func(b *testing.B) {
			b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
		}
		b.Run(s.name+"/int8", func(b *testing.B) {
			for range b.N {
				if err := GemmFloat32(s.m, a, lda, 3, pb, ep, out, s.n); err != nil {
					b.Fatal(err)
				}
			}
			report(b)
		})
		b.Run(s.name+"/int32out", func(b *testing.B) {
			for range b.N {
				if err := GemmInt32(s.m, a, lda, 3, pb, acc, s.n); err != nil {
					b.Fatal(err)
				}
			}
			report(b)
		})
		b.Run(s.name+"/float32", func(b *testing.B) {
			for range b.N {
				gemm.SerialPacked(false, s.m, 1, a32, lda, pf, 0, out, s.n)
			}
			report(b)
		})
	}
}
