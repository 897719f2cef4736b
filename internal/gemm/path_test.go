package gemm

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// AVX-512 is taken only when it is at least minGain faster than AVX2 on
// the cube and no slower on the narrow product, in both element types.
func TestDecide(t *testing.T) {
	cube := func(f32, f64 float64) Timing { return Timing{F32: f32, F64: f64, NarrowF32: 50, NarrowF64: 25} }
	for _, tc := range []struct {
		name         string
		avx2, avx512 Timing
		want         path
	}{
		{"much faster in both (this Intel Xeon)", cube(50, 25), cube(75, 37), pathAVX512},
		{"just over the margin", cube(50, 20), cube(55.1, 22.1), pathAVX512},
		{"slower (Zen 4)", cube(50, 25), cube(46, 22), pathAVX2},
		{"faster but under the margin", cube(50, 25), cube(54, 27), pathAVX2},
		{"clearly faster in float32 only", cube(50, 25), cube(70, 26), pathAVX2},
		{"clearly faster in float64 only", cube(50, 25), cube(52, 35), pathAVX2},
		{"cube over the margin, narrow slower in float32 (Zen 4's slow processes)",
			cube(50, 25), Timing{F32: 56, F64: 28, NarrowF32: 40, NarrowF64: 25}, pathAVX2},
		{"cube over the margin, narrow slower in float64",
			cube(50, 25), Timing{F32: 56, F64: 28, NarrowF32: 50, NarrowF64: 24}, pathAVX2},
		{"cube over the margin, narrow faster", cube(50, 25), Timing{F32: 56, F64: 28, NarrowF32: 60, NarrowF64: 30}, pathAVX512},
	} {
		require.Equal(t, pathNames[tc.want], pathNames[decide(tc.avx2, tc.avx512)], tc.name)
	}
}

// fakeCPU makes the paths in has look supported (the pure-Go config
// standing in for the kernels) and the rest not, until the test ends.
func fakeCPU(t *testing.T, has ...path) {
	old32, old64 := configs32, configs64
	t.Cleanup(func() { configs32, configs64 = old32, old64 })
	configs32, configs64 = [numPaths]*config[float32]{}, [numPaths]*config[float64]{}
	for _, p := range append(has, pathGo) {
		configs32[p], configs64[p] = goConfig[float32](), goConfig[float64]()
	}
}

// choose honours PLUMB_GEMM when it names a path the CPU has, measures
// otherwise (and only when there are two assembly paths to compare), and
// says why in the Choice.
func TestChoose(t *testing.T) {
	fast := func([]path) []Timing { return []Timing{{"avx2", 50, 25, 50, 25}, {"avx512", 80, 40, 70, 35}} }
	slower := func([]path) []Timing { return []Timing{{"avx2", 50, 25, 50, 25}, {"avx512", 47, 23, 40, 20}} }
	all, avx2 := []path{pathAVX2, pathAVX512}, []path{pathAVX2}
	for _, tc := range []struct {
		name     string
		has      []path
		env      string
		measure  func([]path) []Timing
		want     path
		reason   string
		measured bool
		note     string
	}{
		{"AVX-512 clearly faster", all, "", fast, pathAVX512, "measured, AVX-512 at least 1.10x AVX2 in both types and no slower on the narrow product", true, ""},
		{"AVX-512 close to AVX2", all, "", slower, pathAVX2, "measured, AVX-512 not 1.10x AVX2 in both types, or slower on the narrow product", true, ""},
		{"pinned to avx2", all, "avx2", fast, pathAVX2, "pinned by PLUMB_GEMM", false, ""},
		{"pinned to avx512", all, "avx512", slower, pathAVX512, "pinned by PLUMB_GEMM", false, ""},
		{"pinned to go", all, "go", fast, pathGo, "pinned by PLUMB_GEMM", false, ""},
		{"a bad value is measured", all, "AVX512", fast, pathAVX512, "measured, AVX-512 at least 1.10x AVX2 in both types and no slower on the narrow product", true,
			`plumb: PLUMB_GEMM="AVX512": want avx2, avx512 or go; choosing the path as if it were unset`},
		{"avx512 pinned without it", avx2, "avx512", fast, pathAVX2, "the widest path this CPU has (no AVX-512F)", false,
			`plumb: PLUMB_GEMM="avx512": this CPU lacks AVX-512F; choosing the path as if it were unset`},
		{"no AVX-512", avx2, "", fast, pathAVX2, "the widest path this CPU has (no AVX-512F)", false, ""},
		{"no AVX2", nil, "", fast, pathGo, "the only path this CPU has (no AVX2 and FMA)", false, ""},
		{"avx2 pinned without it", nil, "avx2", fast, pathGo, "the only path this CPU has (no AVX2 and FMA)", false,
			`plumb: PLUMB_GEMM="avx2": this CPU lacks AVX2 and FMA; choosing the path as if it were unset`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeCPU(t, tc.has...)
			calls := 0
			p, c, err := choose(tc.env, func(ps []path) []Timing { calls++; return tc.measure(ps) })
			if tc.note == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.note)
			}
			require.Equal(t, pathNames[tc.want], pathNames[p])
			require.Equal(t, pathNames[tc.want], c.Path)
			require.Equal(t, tc.reason, c.Reason)
			if tc.measured {
				require.Equal(t, 1, calls)
				require.Len(t, c.Timings, 2)
			} else {
				require.Zero(t, calls)
				require.Empty(t, c.Timings)
			}
		})
	}
}

// A PLUMB_GEMM value that names no path, or one this CPU lacks, is an
// error saying so and what happens instead.
func TestParsePath(t *testing.T) {
	fakeCPU(t, pathAVX2)
	for _, tc := range []struct {
		env  string
		want path
		err  string
	}{
		{"go", pathGo, ""},
		{"avx2", pathAVX2, ""},
		{"avx512", 0, `plumb: PLUMB_GEMM="avx512": this CPU lacks AVX-512F; choosing the path as if it were unset`},
		{"AVX2", 0, `plumb: PLUMB_GEMM="AVX2": want avx2, avx512 or go; choosing the path as if it were unset`},
		{"sse", 0, `plumb: PLUMB_GEMM="sse": want avx2, avx512 or go; choosing the path as if it were unset`},
	} {
		p, err := parsePath(tc.env)
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.env)
			continue
		}
		require.NoError(t, err, tc.env)
		require.Equal(t, pathNames[tc.want], pathNames[p], tc.env)
	}
}

// Every assembly path has an m = 1 row kernel, so that batch-1 inference
// does not fall back to MR-row micro-tiles of padding on any path.
func TestAssemblyPathsHaveRowKernels(t *testing.T) {
	eachPath(t, func(t *testing.T, p path) {
		if p == pathGo {
			t.Skip("the pure-Go path runs m = 1 through its micro-kernel")
		}
		require.NotNil(t, configs32[p].row)
		require.NotNil(t, configs64[p].row)
	})
}

// The process's choice: printed with -v, on a path this CPU has, and, when
// measured, the one decide gives for the timings it reports. (How long
// the measurement takes and whether a second one agrees are timings, which
// the benchmarks print rather than this test asserting them.)
func TestPathChoice(t *testing.T) {
	c := Path()
	t.Log(c)
	require.Equal(t, c.Path, pathNames[active])
	require.NotNil(t, configs32[active])
	if os.Getenv("PLUMB_GEMM") != "" || len(c.Timings) == 0 {
		return
	}
	require.Len(t, c.Timings, 2)
	require.Equal(t, c.Path, pathNames[decide(c.Timings[0], c.Timings[1])])
}

// On the AVX-512 path, products at most one zmm vector wide run on the
// narrow AVX-512 kernels (a 12×32 or 12×16 tile would be half padding),
// wider ones on the wide kernels, in both element types.
func TestNarrowProductsOnNarrowKernels(t *testing.T) {
	if configs32[pathAVX512] == nil {
		t.Skipf("this CPU lacks %s", pathNeeds[pathAVX512])
	}
	usePath(t, pathAVX512)
	for _, tc := range []struct {
		n      int
		want32 string
		want64 string
	}{
		{1, "avx512-narrow", "avx512-narrow"}, {8, "avx512-narrow", "avx512-narrow"}, {9, "avx512-narrow", "avx512"},
		{16, "avx512-narrow", "avx512"}, {17, "avx512", "avx512"}, {64, "avx512", "avx512"},
	} {
		m, k := 40, 30
		j32, ok := newJob(false, false, m, tc.n, k, 1, make([]float32, m*k), k, make([]float32, k*tc.n), tc.n, 0, make([]float32, m*tc.n), tc.n)
		require.True(t, ok)
		require.Equal(t, tc.want32, j32.cfg.name, "float32 n=%d", tc.n)
		j64, ok := newJob(false, false, m, tc.n, k, 1, make([]float64, m*k), k, make([]float64, k*tc.n), tc.n, 0, make([]float64, m*tc.n), tc.n)
		require.True(t, ok)
		require.Equal(t, tc.want64, j64.cfg.name, "float64 n=%d", tc.n)
	}
}

// On the AVX-512 path, products at most 6 rows tall run on the AVX2
// kernels (the 12-row tiles would be half padding or more), whatever their
// width; taller ones on the AVX-512 kernels. A packing is made for the
// AVX-512 kernels, and short products read a second one made for theirs
// (TestGemmMatchesNaive checks GemmPacked's results on such shapes).
func TestShortProductsOnShortKernels(t *testing.T) {
	if configs32[pathAVX512] == nil {
		t.Skipf("this CPU lacks %s", pathNeeds[pathAVX512])
	}
	usePath(t, pathAVX512)
	for _, tc := range []struct {
		m, n   int
		want32 string
		want64 string
	}{
		{2, 64, "avx2", "avx2"}, {4, 64, "avx2", "avx2"}, {6, 8, "avx2", "avx2"}, {6, 7817, "avx2", "avx2"},
		{7, 64, "avx512", "avx512"}, {7, 16, "avx512-narrow", "avx512"}, {40, 8, "avx512-narrow", "avx512-narrow"},
	} {
		k := 30
		j32, ok := newJob(false, false, tc.m, tc.n, k, 1, make([]float32, tc.m*k), k, make([]float32, k*tc.n), tc.n, 0, make([]float32, tc.m*tc.n), tc.n)
		require.True(t, ok)
		require.Equal(t, tc.want32, j32.cfg.name, "float32 m=%d n=%d", tc.m, tc.n)
		j64, ok := newJob(false, false, tc.m, tc.n, k, 1, make([]float64, tc.m*k), k, make([]float64, k*tc.n), tc.n, 0, make([]float64, tc.m*tc.n), tc.n)
		require.True(t, ok)
		require.Equal(t, tc.want64, j64.cfg.name, "float64 m=%d n=%d", tc.m, tc.n)
		pb := PackB(false, k, tc.n, make([]float32, k*tc.n), tc.n)
		require.NotEqual(t, "avx2", pb.cfg.name, "a packing is made for tall products")
		require.Equal(t, tc.want32, pb.forRows(tc.m).cfg.name, "m=%d n=%d: the packing a product reads", tc.m, tc.n)
	}
	// One row goes to the row kernel, which reads B as given: no packing.
	pb := PackB(false, 30, 64, make([]float32, 30*64), 64)
	require.Nil(t, pb.forRows(1))
	require.Nil(t, pb.blocks)
	require.Nil(t, pb.short)
}
