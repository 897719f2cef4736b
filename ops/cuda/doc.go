// Package cuda runs Plumb's ops on an NVIDIA GPU: device memory with
// explicit host<->device copies, a caching allocator, and our own kernels,
// each a float32 implementation of an op in package ops that must agree
// with that op's CPU reference kernel.
//
// Everything that touches the GPU is behind the build tag `cuda`, because
// gorgonia.org/cu, the driver binding, calls os.Exit(1) in its init when no
// GPU is present: a default build never imports it, and the binaries built
// with -tags cuda only start on a machine with an NVIDIA driver. Without
// the tag this package holds only the allocator's bookkeeping and the
// error type, which the default tests cover.
//
// The kernels live in kernels/*.cu. `go generate ./ops/cuda` compiles each
// to PTX for compute_70 with nvcc (see install-toolkit.sh); the PTX is
// committed and embedded, so building needs no CUDA toolkit, and the
// driver JIT-compiles it for the GPU at hand when a Device opens. Kernels
// take only 8-byte parameters (device pointers, long long, double),
// because gorgonia.org/cu's Launch copies every parameter as 8 bytes.
//
// A Device serialises its work on one stream; every method waits for its
// kernels to finish before returning, so a returned error belongs to the
// call that caused it and host memory handed to a copy can be reused at
// once. devicecheck.sh runs the tests and benchmarks on a GPU machine; see
// README.md.
package cuda

//go:generate sh kernels/generate.sh
