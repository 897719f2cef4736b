package gemm

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/cpu"
)

// copyPanelsFast must pack exactly what pack does panel by panel, on odd
// depths, panel counts and row strides, in both element types.
func TestCopyPanelsFastMatchesPack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, kc := range []int{1, 3, 17, 127, 513} {
		for _, panels := range []int{1, 3, 17} {
			for _, pad := range []int{0, 5} {
				for _, w := range []int{16, 32} { // the AVX2 and AVX-512 panels
					checkCopyPanels(t, rng, w, kc, panels, pad, f32)
					checkCopyPanels(t, rng, w/2, kc, panels, pad, func(s []float64) []float64 { return s })
				}
			}
		}
	}
}

func checkCopyPanels[T tensor.Float](t *testing.T, rng *rand.Rand, w, kc, panels, pad int, conv func([]float64) []T) {
	ld := panels*w + pad
	src := conv(randSlice(rng, kc*ld))
	want, got := make([]T, panels*w*kc), make([]T, panels*w*kc)
	for q := range panels {
		pack(want[q*w*kc:(q+1)*w*kc], w, w, kc, src[q*w:], ld, true)
	}
	done := copyPanelsFast(got, w, kc, panels, src, ld)
	if runtime.GOARCH == "amd64" && cpu.X86.HasAVX {
		require.Equal(t, panels, done, "the vector copy packs every whole panel")
	}
	for q := done; q < panels; q++ {
		pack(got[q*w*kc:(q+1)*w*kc], w, w, kc, src[q*w:], ld, true)
	}
	require.Equalf(t, want, got, "w=%d kc=%d panels=%d ld=%d", w, kc, panels, ld)
}
