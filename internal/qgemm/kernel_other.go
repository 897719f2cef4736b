//go:build !amd64

package qgemm

// avx2Kernels is nil off amd64: the portable kernels run.
var avx2Kernels *kernels
