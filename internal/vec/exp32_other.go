//go:build !amd64

package vec

// expShiftVec has no vector kernel off amd64: expShift32 does every
// element with Exp32.
func expShiftVec(dst, src []float32, m float32) (int, float64) { return 0, 0 }

// expScaleVec has no vector kernel off amd64 either.
func expScaleVec(dst, src []float32, m, scale float32) int { return 0 }
