package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// naive computes alpha·op(A)·op(B) + beta·C with the textbook triple loop.
func naive(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				var av, bv float64
				if ta {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tb {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

// eachPath runs test as one subtest per path, skipped with the reason on
// a build or CPU without it.
func eachPath(t *testing.T, test func(t *testing.T, p path)) {
	for p := range numPaths {
		t.Run(pathNames[p], func(t *testing.T) {
			if configs32[p] == nil {
				t.Skipf("this CPU lacks %s, which the %s kernels need", pathNeeds[p], pathNames[p])
			}
			test(t, p)
		})
	}
}

// usePath makes Gemm use path p until the test ends (after the process's
// own choice, so that a first use later does not override it).
func usePath(t *testing.T, p path) {
	chooseOnce()
	old := active
	active = p
	t.Cleanup(func() { active = old })
}

// gemmCase is one product with its operands in float64; check runs it
// through Gemm in float64 and float32 and compares with naive.
type gemmCase struct {
	ta, tb      bool
	m, n, k     int
	alpha, beta float64
	nanC        bool // fill C with NaN (only with beta 0)
}

func (gc gemmCase) String() string {
	return fmt.Sprintf("m=%d n=%d k=%d ta=%v tb=%v alpha=%v beta=%v nanC=%v", gc.m, gc.n, gc.k, gc.ta, gc.tb, gc.alpha, gc.beta, gc.nanC)
}

func (gc gemmCase) check(t *testing.T, rng *rand.Rand) {
	m, n, k, ta, tb := gc.m, gc.n, gc.k, gc.ta, gc.tb
	lda, ldb, ldc := k+1, n+2, n+3 // padded strides
	rowsA, rowsB := m, k
	if ta {
		lda, rowsA = m+1, k
	}
	if tb {
		ldb, rowsB = k+2, n
	}
	a, b := randSlice(rng, rowsA*lda), randSlice(rng, rowsB*ldb)
	c := randSlice(rng, m*ldc)
	if gc.nanC {
		for i := range c {
			c[i] = math.NaN()
		}
	}
	want := append([]float64(nil), c...)
	naive(ta, tb, m, n, k, gc.alpha, a, lda, b, ldb, gc.beta, want, ldc)
	// bound = |alpha|·|op(A)|·|op(B)| + |beta|·|C|: the scale of round-off.
	bound := absAll(c)
	naive(ta, tb, m, n, k, math.Abs(gc.alpha), absAll(a), lda, absAll(b), ldb, math.Abs(gc.beta), bound, ldc)

	got := append([]float64(nil), c...)
	Gemm(ta, tb, m, n, k, gc.alpha, a, lda, b, ldb, gc.beta, got, ldc)
	got32 := f32(c)
	Gemm(ta, tb, m, n, k, float32(gc.alpha), f32(a), lda, f32(b), ldb, float32(gc.beta), got32, ldc)
	serial := append([]float64(nil), c...)
	Serial(ta, tb, m, n, k, gc.alpha, a, lda, b, ldb, gc.beta, serial, ldc)
	packed := append([]float64(nil), c...)
	GemmPacked(ta, m, gc.alpha, a, lda, PackB(tb, k, n, b, ldb), gc.beta, packed, ldc)
	packed32 := f32(c)
	GemmPacked(ta, m, float32(gc.alpha), f32(a), lda, PackB(tb, k, n, f32(b), ldb), float32(gc.beta), packed32, ldc)
	serialPacked32 := f32(c)
	SerialPacked(ta, m, float32(gc.alpha), f32(a), lda, PackB(tb, k, n, f32(b), ldb), float32(gc.beta), serialPacked32, ldc)

	// float64: a k-term sum in another order; float32 also rounds the inputs.
	for i, w := range want {
		tol64 := float64(k+2) * 0x1p-52 * bound[i]
		tol32 := 2 * float64(k+2) * 0x1p-23 * bound[i]
		if math.IsNaN(w) { // padding outside the m×n block of C stays as it was
			require.Truef(t, math.IsNaN(got[i]) && math.IsNaN(float64(got32[i])) && math.IsNaN(serial[i]) &&
				math.IsNaN(packed[i]) && math.IsNaN(float64(packed32[i])) && math.IsNaN(float64(serialPacked32[i])), "%v: element %d", gc, i)
			continue
		}
		if !(math.Abs(got[i]-w) <= tol64) || !(math.Abs(float64(got32[i])-w) <= tol32) || !(math.Abs(serial[i]-w) <= tol64) ||
			!(math.Abs(packed[i]-w) <= tol64) || !(math.Abs(float64(packed32[i])-w) <= tol32) ||
			!(math.Abs(float64(serialPacked32[i])-w) <= tol32) { // also false on NaN
			require.InDeltaf(t, w, got[i], tol64, "%v: float64 element %d", gc, i)
			require.InDeltaf(t, w, serial[i], tol64, "%v: Serial float64 element %d", gc, i)
			require.InDeltaf(t, w, float64(got32[i]), tol32, "%v: float32 element %d", gc, i)
			require.InDeltaf(t, w, packed[i], tol64, "%v: GemmPacked float64 element %d", gc, i)
			require.InDeltaf(t, w, float64(packed32[i]), tol32, "%v: GemmPacked float32 element %d", gc, i)
			require.InDeltaf(t, w, float64(serialPacked32[i]), tol32, "%v: SerialPacked float32 element %d", gc, i)
		}
	}
	if gc.nanC {
		for i := range m {
			for j := range n {
				require.Falsef(t, math.IsNaN(got[i*ldc+j]) || math.IsNaN(float64(got32[i*ldc+j])) || math.IsNaN(serial[i*ldc+j]) ||
					math.IsNaN(packed[i*ldc+j]) || math.IsNaN(float64(packed32[i*ldc+j])) || math.IsNaN(float64(serialPacked32[i*ldc+j])),
					"%v: NaN leaked at (%d, %d)", gc, i, j)
			}
		}
	}
}

// testShapes are odd sizes, the model shapes, and shapes that cross every
// block boundary of every path: k > KC, m > MC, n > NC, and M, N both
// above and below the packing thresholds.
var testShapes = [][3]int{
	{1, 1, 1}, {1, 128, 784}, {3, 17, 5}, {17, 3, 127}, {127, 513, 17}, {513, 127, 3},
	{13, 29, 300}, {64, 128, 784}, {2, 513, 300}, {513, 2, 300}, {65, 1, 4100}, {7, 9, 0},
	{150, 40, 600}, {7, 3100, 20}, {30, 700, 33}, {24, 16, 8}, {6, 32, 1}, {1, 211, 37}, {1, 3, 300},
	{1, 100, 300}, {1, 513, 127}, {1, 17, 1},
	// at most one AVX-512 vector wide (the narrow kernels): whole 24-row
	// strips, ragged ones, a single partial strip, k across KC
	{300, 16, 48}, {49, 16, 300}, {23, 9, 33}, {48, 16, 700}, {100, 8, 20}, {25, 5, 3},
}

func TestGemmMatchesNaive(t *testing.T) {
	eachPath(t, func(t *testing.T, p path) {
		usePath(t, p)
		rng := rand.New(rand.NewPCG(1, 2))
		for _, s := range testShapes {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, ab := range [][2]float64{{1, 0}, {0.5, 2}, {-1.5, 1}, {0, 0.5}} {
						gemmCase{ta, tb, s[0], s[1], s[2], ab[0], ab[1], false}.check(t, rng)
					}
					gemmCase{ta, tb, s[0], s[1], s[2], 0.75, 0, true}.check(t, rng)
				}
			}
		}
	})
}

// The pure-Go kernel is what non-amd64 builds and older CPUs run: force it
// here whatever this CPU has.
func TestPureGoFallback(t *testing.T) {
	usePath(t, pathGo)
	require.Equal(t, "go", current[float32]().name)
	require.Equal(t, "go", current[float64]().name)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][3]int{{1, 1, 1}, {5, 7, 3}, {127, 17, 513}, {64, 128, 784}, {200, 300, 90}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				gemmCase{ta, tb, s[0], s[1], s[2], 1.25, 0.5, false}.check(t, rng)
				gemmCase{ta, tb, s[0], s[1], s[2], 1, 0, true}.check(t, rng)
			}
		}
	}
}

// Cutting C across cores, by rows or by columns, with either operand
// transposed, gives the serial result on every path; so does cutting it by
// rows over a packed B.
func TestParallelParts(t *testing.T) {
	eachPath(t, func(t *testing.T, p path) {
		rng := rand.New(rand.NewPCG(3, 4))
		// 2000×70×100 on 2 cores is cut into 3 row parts.
		for _, s := range [][3]int{{300, 200, 64}, {200, 300, 64}, {40, 1000, 70}, {2000, 70, 100}} {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					m, n, k := s[0], s[1], s[2]
					lda, ldb := k, n
					if ta {
						lda = m
					}
					if tb {
						ldb = k
					}
					a, b := randSlice(rng, m*k), randSlice(rng, k*n)
					want, got := make([]float64, m*n), make([]float64, m*n)
					naive(ta, tb, m, n, k, 1, a, lda, b, ldb, 0, want, n)
					j := job[float64]{cfg: configs64[p], transA: ta, transB: tb, m: m, n: n, k: k,
						alpha: 1, a: a, lda: lda, b: b, ldb: ldb, c: got, ldc: n}
					j.run(3)
					require.InDeltaSlicef(t, want, got, 1e-11, "%s m=%d n=%d k=%d ta=%v tb=%v", configs64[p].name, m, n, k, ta, tb)
					clear(got)
					j.run(2)
					require.InDeltaSlicef(t, want, got, 1e-11, "2 cores %s m=%d n=%d k=%d ta=%v tb=%v", configs64[p].name, m, n, k, ta, tb)
					usePath(t, p)
					pb := PackB(tb, k, n, b, ldb)
					clear(got)
					j.packed = pb.forRows(m)
					j.cfg = j.packed.cfg
					j.run(3)
					require.InDeltaSlicef(t, want, got, 1e-11, "packed %s m=%d n=%d k=%d ta=%v tb=%v", configs64[p].name, m, n, k, ta, tb)
				}
			}
		}
	})
}

func f32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

func absAll(s []float64) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = math.Abs(v)
	}
	return out
}

// Products run from several goroutines at once share the helpers: a helper
// may come to a product after its parts are all taken, or hold a team
// that its caller has left; every product must still get its own result.
func TestConcurrentProducts(t *testing.T) {
	type prod struct {
		m, n, k    int
		a, b, want []float64
	}
	rng := rand.New(rand.NewPCG(15, 16))
	var prods []prod
	for _, s := range [][3]int{{1, 1000, 70}, {64, 128, 100}, {100, 40, 90}, {1, 333, 200}} {
		m, n, k := s[0], s[1], s[2]
		p := prod{m: m, n: n, k: k, a: randSlice(rng, m*k), b: randSlice(rng, k*n), want: make([]float64, m*n)}
		naive(false, false, m, n, k, 1, p.a, k, p.b, n, 0, p.want, n)
		prods = append(prods, p)
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range 30 {
				p := prods[(g+i)%len(prods)]
				got := make([]float64, p.m*p.n)
				Gemm(false, false, p.m, p.n, p.k, 1, p.a, p.k, p.b, p.n, 0, got, p.n)
				for x := range got {
					if math.Abs(got[x]-p.want[x]) > 1e-10 {
						errs <- fmt.Errorf("goroutine %d product %dx%dx%d element %d: got %v want %v", g, p.m, p.n, p.k, x, got[x], p.want[x])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// A packing made on one path still multiplies correctly after the path
// changes (UseReference): GemmPacked then runs Gemm on the operand as given.
func TestGemmPackedAfterPathChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m, n, k := 37, 70, 300
	a, b := randSlice(rng, m*k), randSlice(rng, k*n)
	want, got := make([]float64, m*n), make([]float64, m*n)
	naive(false, false, m, n, k, 1, a, k, b, n, 0, want, n)
	pb := PackB(false, k, n, b, n)
	usePath(t, pathGo)
	GemmPacked(false, m, 1, a, k, pb, 0, got, n)
	require.InDeltaSlice(t, want, got, 1e-10)
}

// One packing used from several goroutines at once, as the cores' shares
// of a recurrent batch use their layer's weights: its first products pack
// it (for tall and, on paths that have them, short kernels) while the
// others wait, and every product gets its own result.
func TestConcurrentFirstPackedProducts(t *testing.T) {
	eachPath(t, func(t *testing.T, p path) {
		usePath(t, p)
		rng := rand.New(rand.NewPCG(17, 18))
		n, k := 70, 300
		b := randSlice(rng, k*n)
		for round := range 3 {
			pb := PackB(false, k, n, b, n)
			errs := make(chan error, 6)
			for g := range 6 {
				go func() {
					m := []int{4, 37}[(g+round)%2]
					a := randSlice(rand.New(rand.NewPCG(uint64(g), 19)), m*k)
					want, got := make([]float64, m*n), make([]float64, m*n)
					naive(false, false, m, n, k, 1, a, k, b, n, 0, want, n)
					SerialPacked(false, m, 1, a, k, pb, 0, got, n)
					for x := range got {
						if math.Abs(got[x]-want[x]) > 1e-10 {
							errs <- fmt.Errorf("goroutine %d m=%d element %d: got %v want %v", g, m, x, got[x], want[x])
							return
						}
					}
					errs <- nil
				}()
			}
			for range 6 {
				require.NoError(t, <-errs)
			}
		}
	})
}
