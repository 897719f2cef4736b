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
	// Timings are the assembly paths' speeds on the timed product, when
	// the choice was measured.
	Timings []Timing
}

// Timing is one path's best speed on the timed product, in GFLOP/s.
type Timing struct {
	Path     string
	F32, F64 float64
}

func (c Choice) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "gemm path %s: %s", c.Path, c.Reason)
	if len(c.Timings) > 0 {
		fmt.Fprintf(&sb, " (GFLOP/s float32/float64 at %d³, one core, best of %d:", timedSize, timedRounds)
		for i, t := range c.Timings {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, " %s %.1f/%.1f", t.Path, t.F32, t.F64)
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

// minGain is how much faster than AVX2 the AVX-512 kernels must be, in
// float32 and in float64, to be chosen: a clear margin, so that a CPU where
// the two are close (Zen 4 splits 512-bit instructions in two) keeps AVX2
// and the choice does not flip from run to run with the timing noise.
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
	reason := fmt.Sprintf("measured, AVX-512 not %.2fx AVX2 in both types", minGain)
	if p == pathAVX512 {
		reason = fmt.Sprintf("measured, AVX-512 at least %.2fx AVX2 in both types", minGain)
	}
	return p, Choice{Path: pathNames[p], Reason: reason, Timings: ts}, envErr
}

// decide takes AVX-512 when it is at least minGain faster than AVX2 in
// both element types, else AVX2.
func decide(avx2, avx512 Timing) path {
	if avx512.F32 >= minGain*avx2.F32 && avx512.F64 >= minGain*avx2.F64 {
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
// product of a model layer; timedRounds products are timed per path and
// type and the fastest kept. The whole measurement
// takes a few milliseconds on one core.
const timedSize, timedRounds = 192, 3

// measure times the float32 and float64 kernels of each path in ps on the
// timed product, on the calling goroutine, and returns their best speeds.
// Each round times every path and type in turn, so a slow moment of a
// shared machine does not fall on one path's every round.
func measure(ps []path) []Timing {
	n := timedSize
	a32, b32, c32 := timedOperands[float32](n)
	a64, b64, c64 := timedOperands[float64](n)
	best := make([][2]time.Duration, len(ps))
	for range timedRounds {
		for i, p := range ps {
			j32 := job[float32]{cfg: configs32[p], m: n, n: n, k: n, alpha: 1, a: a32, lda: n, b: b32, ldb: n, c: c32, ldc: n}
			j64 := job[float64]{cfg: configs64[p], m: n, n: n, k: n, alpha: 1, a: a64, lda: n, b: b64, ldb: n, c: c64, ldc: n}
			best[i][0] = fastest(best[i][0], timeOf(j32.serial))
			best[i][1] = fastest(best[i][1], timeOf(j64.serial))
		}
	}
	flop := 2 * float64(n*n*n)
	ts := make([]Timing, len(ps))
	for i, p := range ps {
		ts[i] = Timing{Path: pathNames[p], F32: flop / best[i][0].Seconds() / 1e9, F64: flop / best[i][1].Seconds() / 1e9}
	}
	return ts
}

// timedOperands returns n×n matrices A and B of small exact values and C.
func timedOperands[T tensor.Float](n int) (a, b, c []T) {
	a, b, c = make([]T, n*n), make([]T, n*n), make([]T, n*n)
	for i := range a {
		a[i] = T(i%7) * 0.125
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
