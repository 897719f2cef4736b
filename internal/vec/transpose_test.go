package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TransposeBlocks transposes (or adds) exactly the whole 8×8 blocks it
// reports, and leaves every other element of dst alone.
func TestTransposeBlocks(t *testing.T) {
	for _, sh := range [][4]int{{8, 8, 8, 8}, {17, 9, 11, 20}, {16, 24, 30, 16}, {7, 40, 40, 7}, {40, 5, 5, 40}} {
		for _, add := range []bool{false, true} {
			r, c, lds, ldd := sh[0], sh[1], sh[2], sh[3]
			t.Run(fmt.Sprintf("%dx%d/lds=%d/ldd=%d/add=%v", r, c, lds, ldd, add), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, 2))
				src := make([]float32, (r-1)*lds+c)
				for i := range src {
					src[i] = rng.Float32()
				}
				dst := make([]float32, (c-1)*ldd+r)
				for i := range dst {
					dst[i] = float32(i)
				}
				want := append([]float32(nil), dst...)
				rows, cols := TransposeBlocks(dst, ldd, src, lds, r, c, add)
				if hasTranspose8 && r >= 8 && c >= 8 {
					require.Equal(t, [2]int{r / 8 * 8, c / 8 * 8}, [2]int{rows, cols})
				}
				for i := range rows {
					for j := range cols {
						if add {
							want[j*ldd+i] += src[i*lds+j]
						} else {
							want[j*ldd+i] = src[i*lds+j]
						}
					}
				}
				require.Equal(t, want, dst)
			})
		}
	}
	rows, cols := TransposeBlocks(make([]float64, 64), 8, make([]float64, 64), 8, 8, 8, false)
	require.Equal(t, [2]int{0, 0}, [2]int{rows, cols}, "float64 has no block transpose")
}
