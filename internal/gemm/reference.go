package gemm

// UseReference makes Gemm run the pure-Go micro-kernels (the path non-amd64
// builds and CPUs without AVX2+FMA take: same blocking, packing and
// threading, a 4×4 Go kernel, no m = 1 row kernel) instead of the path
// chosen for this CPU (Path), until restore is called. It exists so that
// benchmarks can time a model on the assembly kernels and on this
// reference in one run. It must not be called while products are running.
func UseReference() (restore func()) {
	chooseOnce()
	old := active
	active = pathGo
	return func() { active = old }
}
