package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// copyPanelsFast must pack exactly what pack does panel by panel, on odd
// depths, panel counts and row strides, in both element types.
func TestCopyPanelsFastMatchesPack(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, kc := range []int{1, 3, 17, 127, 513} {
		for _, panels := range []int{1, 3, 17} {
			for _, pad := range []int{0, 5} {
				checkCopyPanels(t, rng, 16, kc, panels, pad, f32)
				checkCopyPanels(t, rng, 8, kc, panels, pad, func(s []float64) []float64 { return s })
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
	for q := done; q < panels; q++ {
		pack(got[q*w*kc:(q+1)*w*kc], w, w, kc, src[q*w:], ld, true)
	}
	require.Equalf(t, want, got, "w=%d kc=%d panels=%d ld=%d", w, kc, panels, ld)
}
