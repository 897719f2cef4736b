//go:build !amd64

package gemm

// archConfigs offers only the pure-Go kernel off amd64.
func archConfigs() (c32 [numPaths]*config[float32], c64 [numPaths]*config[float64]) {
	c32[pathGo], c64[pathGo] = goConfig[float32](), goConfig[float64]()
	return c32, c64
}
