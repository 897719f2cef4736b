//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// upB uploads a random normal tensor for a benchmark.
func upB(b *testing.B, shape ...int) *Buffer {
	b.Helper()
	x, err := tensor.RandNormal(tensor.NewRNG(1), tensor.Float32, 0, 1, shape...)
	if err != nil {
		b.Fatal(err)
	}
	buf, err := dev.Upload(x)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { buf.Free() })
	return buf
}

// BenchmarkGemm1024 is C = A·B for 1024×1024 matrices; it reports GFLOP/s.
func BenchmarkGemm1024(b *testing.B) {
	const n = 1024
	x, y, c := upB(b, n, n), upB(b, n, n), upB(b, n, n)
	b.ResetTimer()
	for b.Loop() {
		if err := dev.Gemm(false, false, n, n, n, 1, x, n, y, n, 0, c, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSoftmax is softmax over 1000 classes for 4096 rows.
func BenchmarkSoftmax(b *testing.B) {
	x := upB(b, 4096, 1000)
	b.ResetTimer()
	for b.Loop() {
		y, err := dev.softmaxFwd(x, -1)
		if err != nil {
			b.Fatal(err)
		}
		y.Free()
	}
}

// BenchmarkConv2DResNet32 is one forward and backward pass of the 3×3
// SAME convolutions of the three ResNet-32 stages (CIFAR-10) at batch 128.
func BenchmarkConv2DResNet32(b *testing.B) {
	for _, s := range []struct{ c, hw int }{{16, 32}, {32, 16}, {64, 8}} {
		b.Run(fmt.Sprintf("c%d_%dx%d", s.c, s.hw, s.hw), func(b *testing.B) {
			x, w := upB(b, 128, s.c, s.hw, s.hw), upB(b, s.c, s.c, 3, 3)
			flops := 3 * 2 * float64(128*s.c*s.hw*s.hw*s.c*9) // forward, data and filter gradients
			b.ResetTimer()
			for b.Loop() {
				o := dev.conv2dOp(ops.Conv2DAttrs{Padding: ops.PadSame})
				y, err := o.Forward(x, w, nil)
				if err != nil {
					b.Fatal(err)
				}
				dx, dw, _, err := o.Backward(y, [3]bool{true, true, false})
				if err != nil {
					b.Fatal(err)
				}
				freeAll(y, dx, dw)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
