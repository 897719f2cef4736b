package gemm

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plumbml/plumb/tensor"
)

// pathNames are the paths' names, as PLUMB_GEMM and Choice spell them.
var pathNames = [numPaths]string{pathGo: "go", pathAVX2: "avx2", pathAVX512: "avx512"}

// pathNeeds says what a CPU must have to run each path.
var pathNeeds = [numPaths]string{pathGo: "nothing", pathAVX2: "AVX2 and FMA", pathAVX512: "AVX-512F"}

// Choice says which micro-kernel path Gemm runs in this process and why.
type Choice struct {
	// Path is "avx512", "avx2" or "go".
	Path string
	// Reason says how it was chosen: measured, pinned by PLUMB_GEMM, or the
	// only path this CPU has.
	Reason string
	// Timings are the assembly paths' speeds on the timed products, when
	// the choice was measured.
	Timings []Timing
}

// Timing is one path's best speeds on the timed products, in GFLOP/s: the
// cube (F32, F64) and the narrow product (NarrowF32, NarrowF64).
type Timing struct {
	Path                 string
	F32, F64             float64
	NarrowF32, NarrowF64 float64
}

func (c Choice) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "gemm path %s: %s", c.Path, c.Reason)
	if len(c.Timings) > 0 {
		fmt.Fprintf(&sb, " (GFLOP/s float32/float64 at %d³ and %d×%d×%d (float64 %d wide), one core, best of %d:",
			timedSize, narrowRows, narrowCols[float32](), timedSize, narrowCols[float64](), timedRounds)
		for i, t := range c.Timings {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, " %s %.1f/%.1f and %.1f/%.1f", t.Path, t.F32, t.F64, t.NarrowF32, t.NarrowF64)
		}
		sb.WriteString(")")
	}
	return sb.String()
}

// Path returns the path this process's products run on and why, choosing
// it first if no product has yet.
func Path() Choice {
	chooseOnce()
	c := choice
	c.Timings = slices.Clone(c.Timings)
	return c
}

var (
	chosen sync.Once
	choice Choice
)

// chooseOnce sets active and choice on first use, once per process, so
// that every product of a run takes the same path and gives the same
// bits.
func chooseOnce() {
	chosen.Do(func() {
		var err error
		active, choice, err = choose(os.Getenv("PLUMB_GEMM"), measure)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	})
}

// minGain is how much faster than AVX2 the AVX-512 kernels must be on the
// cube, in float32 and in float64, to be chosen: a clear margin, so that a
// CPU where the two are close (Zen 4 splits 512-bit instructions in two)
// keeps AVX2. The cube alone did not settle it there: AVX2's timing of it
// varies from process to process by more than the gap between the paths,
// so some processes took AVX-512, whose narrow kernels run the narrow
// products (the 16-channel convolutions) slower than AVX2 on that CPU
// (docs/benchmarks.md has the timings). So AVX-512 must also be no
// slower than AVX2 on a narrow product, where Zen 4 loses clearly.
const minGain = 1.10

// choose picks the path from PLUMB_GEMM's value (env) when it names a
// path this CPU supports; otherwise the fastest assembly path by time
// (AVX-512 only when minGain faster than AVX2, timed by measure), or the
// one path the CPU has, with an error, for a note, when env is set but
// names no path this CPU has.
func choose(env string, measure func(ps []path) []Timing) (path, Choice, error) {
	var envErr error
	if env != "" {
		p, err := parsePath(env)
		if err == nil {
			return p, Choice{Path: pathNames[p], Reason: "pinned by PLUMB_GEMM"}, nil
		}
		envErr = err
	}
	if configs32[pathAVX2] == nil {
		return pathGo, Choice{Path: pathNames[pathGo], Reason: "the only path this CPU has (no AVX2 and FMA)"}, envErr
	}
	if configs32[pathAVX512] == nil {
		return pathAVX2, Choice{Path: pathNames[pathAVX2], Reason: "the widest path this CPU has (no AVX-512F)"}, envErr
	}
	ts := measure([]path{pathAVX2, pathAVX512})
	p := decide(ts[0], ts[1])
	reason := fmt.Sprintf("measured, AVX-512 not %.2fx AVX2 in both types, or slower on the narrow product", minGain)
	if p == pathAVX512 {
		reason = fmt.Sprintf("measured, AVX-512 at least %.2fx AVX2 in both types and no slower on the narrow product", minGain)
	}
	return p, Choice{Path: pathNames[p], Reason: reason, Timings: ts}, envErr
}

// decide takes AVX-512 when it is at least minGain faster than AVX2 on
// the cube and no slower on the narrow product, in both element types,
// else AVX2.
func decide(avx2, avx512 Timing) path {
	if avx512.F32 >= minGain*avx2.F32 && avx512.F64 >= minGain*avx2.F64 &&
		avx512.NarrowF32 >= avx2.NarrowF32 && avx512.NarrowF64 >= avx2.NarrowF64 {
		return pathAVX512
	}
	return pathAVX2
}

// parsePath reads a PLUMB_GEMM value: a path this CPU supports, or an
// error saying what was wrong and that the path will be measured instead.
func parsePath(s string) (path, error) {
	for p, name := range pathNames {
		if s != name {
			continue
		}
		if configs32[p] == nil {
			return 0, fmt.Errorf("plumb: PLUMB_GEMM=%q: this CPU lacks %s; choosing the path as if it were unset", s, pathNeeds[p])
		}
		return path(p), nil
	}
	return 0, fmt.Errorf("plumb: PLUMB_GEMM=%q: want avx2, avx512 or go; choosing the path as if it were unset", s)
}

// timedSize is the cube timed for the choice: whole micro-tiles on both
// assembly paths (192 = 16·12 = 32·6) and one KC slice, the packed thin
// product of a model layer. The narrow product is narrowRows × one AVX-512
// vector (16 float32, 8 float64) × timedSize, whole tiles of every narrow
// and AVX2 kernel (576 = 24·24 = 6·96), as a 16-channel convolution's
// implicit GEMM runs. timedRounds products are timed per path, type and
// shape and the fastest kept. The whole measurement takes a few
// milliseconds on one core.
const timedSize, timedRounds, narrowRows = 192, 3, 576

// narrowCols is the narrow product's width for T: one AVX-512 vector.
func narrowCols[T tensor.Float]() int {
	var z T
	if _, ok := any(z).(float32); ok {
		return 16
	}
	return 8
}

// measure times the float32 and float64 kernels of each path in ps on the
// cube and on the narrow product (on the path's narrow kernels where it
// has them), on the calling goroutine, and returns their best speeds.
// Each round times every path, type and shape in turn, so a slow moment
// of a shared machine does not fall on one path's every round.
func measure(ps []path) []Timing {
	ts := make([]Timing, len(ps))
	for i, p := range ps {
		ts[i].Path = pathNames[p]
	}
	best := make([][4]time.Duration, len(ps))
	time32, time64 := products[float32](), products[float64]()
	for range timedRounds {
		for i, p := range ps {
			for s := range 2 {
				best[i][s] = fastest(best[i][s], time32(configs32[p], s == 1))
				best[i][2+s] = fastest(best[i][2+s], time64(configs64[p], s == 1))
			}
		}
	}
	cube := 2 * float64(timedSize*timedSize*timedSize)
	for i := range ps {
		ts[i].F32, ts[i].NarrowF32 = cube/best[i][0].Seconds()/1e9, 2*float64(narrowRows*narrowCols[float32]()*timedSize)/best[i][1].Seconds()/1e9
		ts[i].F64, ts[i].NarrowF64 = cube/best[i][2].Seconds()/1e9, 2*float64(narrowRows*narrowCols[float64]()*timedSize)/best[i][3].Seconds()/1e9
	}
	return ts
}

// products returns a function that times one product of T on a config:
// the cube, or the narrow product on the config's narrow kernels where it
// has them.
func products[T tensor.Float]() func(cfg *config[T], narrow bool) time.Duration {
	n, w := timedSize, narrowCols[T]()
	a, b, c := timedOperands[T](n, n, n)
	na, nb, nc := timedOperands[T](narrowRows, w, n)
	return func(cfg *config[T], narrow bool) time.Duration {
		if !narrow {
			return timeOf((&job[T]{cfg: cfg, m: n, n: n, k: n, alpha: 1, a: a, lda: n, b: b, ldb: n, c: c, ldc: n}).serial)
		}
		if cfg.narrow != nil {
			cfg = cfg.narrow
		}
		return timeOf((&job[T]{cfg: cfg, m: narrowRows, n: w, k: n, alpha: 1, a: na, lda: n, b: nb, ldb: w, c: nc, ldc: w}).serial)
	}
}

// timedOperands returns A (m×k) and B (k×n) of small exact values and C
// (m×n).
func timedOperands[T tensor.Float](m, n, k int) (a, b, c []T) {
	a, b, c = make([]T, m*k), make([]T, k*n), make([]T, m*n)
	for i := range a {
		a[i] = T(i%7) * 0.125
	}
	for i := range b {
		b[i] = T(i%5) * 0.25
	}
	return a, b, c
}

func timeOf(f func()) time.Duration {
	t0 := time.Now()
	f()
	return max(time.Since(t0), time.Nanosecond)
}

func fastest(best, d time.Duration) time.Duration {
	if best == 0 || d < best {
		return d
	}
	return best
}
