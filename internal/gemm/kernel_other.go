//go:build !amd64

package gemm

import "github.com/plumbml/plumb/tensor"

// archConfigs offers only the pure-Go kernel off amd64.
func archConfigs() (c32 [numPaths]*config[float32], c64 [numPaths]*config[float64]) {
	c32[pathGo], c64[pathGo] = goConfig[float32](), goConfig[float64]()
	return c32, c64
}

// transposeFast has no vector version off amd64: pack transposes it all.
func transposeFast[T tensor.Float](dst []T, w, rows, kc int, src []T, ld int) (doneRows, doneK int) {
	return 0, 0
}

// copyPanelsFast has no vector version off amd64: pack copies it all.
func copyPanelsFast[T tensor.Float](dst []T, w, kc, panels int, src []T, ld int) int {
	return 0
}
