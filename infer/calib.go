package infer

import (
	"errors"
	"fmt"
	"math"

	"github.com/plumbml/plumb/tensor"
)

// CalibMethod chooses how Calibrate turns the values a tensor took into
// the range its uint8 quantization covers.
type CalibMethod string

const (
	// CalibMinMax takes the smallest and largest value seen (PyTorch's
	// MinMaxObserver, ONNX Runtime's CalibrationMethod.MinMax).
	CalibMinMax CalibMethod = "minmax"
	// CalibPercentile clips |x| at a percentile of its histogram
	// (TensorRT's IInt8Calibrator percentile mode, ONNX Runtime's
	// CalibrationMethod.Percentile; 99.99 by default).
	CalibPercentile CalibMethod = "percentile"
	// CalibKL clips |x| at the threshold whose quantized distribution is
	// closest to the observed one in Kullback-Leibler divergence: TensorRT's
	// entropy calibration (S. Migacz, "8-bit Inference with TensorRT", GTC
	// 2017), as Paddle's post-training quantization (its "KL" algo) and
	// ONNX Runtime's CalibrationMethod.Entropy apply it.
	CalibKL CalibMethod = "kl"
)

// CalibOptions tune Calibrate.
type CalibOptions struct {
	Method CalibMethod // CalibMinMax when empty
	// Percentile of |x| kept by CalibPercentile, in (0, 100]; 99.99 when 0.
	Percentile float64
	// Bins of the |x| histogram of CalibPercentile and CalibKL; 2048
	// (TensorRT's) when 0.
	Bins int
}

// Range is the interval of real values a tensor's quantization covers.
type Range struct{ Min, Max float32 }

// Calibration holds the activation ranges Calibrate measured on a
// graph, for Quantize: one per float32 input and op output of the graph
// as Quantize sees it (batch norm folded into its neighbours).
type Calibration struct {
	src     *Graph
	prep    *Graph
	ranges  map[Ref]Range
	method  CalibMethod
	batches int
}

// Method returns the calibration method.
func (c *Calibration) Method() CalibMethod {
	if c == nil {
		return ""
	}
	return c.method
}

// Batches returns the number of batches the ranges came from.
func (c *Calibration) Batches() int {
	if c == nil {
		return 0
	}
	return c.batches
}

// Calibrate runs g's float32 plan on each batch (each a list of g's
// inputs) and records, per float32 tensor, the range its activation
// quantization is to cover, by opts.Method. The minimum and maximum come
// from a first pass over the batches; percentile and KL then histogram
// |x| over [0, max|x|] in a second pass, and clip both ends of the range
// at the threshold they choose.
func Calibrate(g *Graph, batches [][]*tensor.Tensor, opts CalibOptions) (*Calibration, error) {
	if g == nil || len(g.outputs) == 0 {
		return nil, errors.New("infer: Calibrate of an empty graph")
	}
	if len(batches) == 0 {
		return nil, errors.New("infer: Calibrate with no batches")
	}
	method := opts.Method
	if method == "" {
		method = CalibMinMax
	}
	pct := opts.Percentile
	if pct == 0 {
		pct = 99.99
	}
	bins := opts.Bins
	if bins == 0 {
		bins = 2048
	}
	switch {
	case method != CalibMinMax && method != CalibPercentile && method != CalibKL:
		return nil, fmt.Errorf("infer: Calibrate: method %q, want minmax, percentile or kl", method)
	case !(pct > 0 && pct <= 100):
		return nil, fmt.Errorf("infer: Calibrate: percentile %v, want one in (0, 100]", pct)
	case bins < 256:
		return nil, fmt.Errorf("infer: Calibrate: %d histogram bins, want at least 256 (one per uint8 level)", bins)
	}
	prep, err := prepareQuant(g)
	if err != nil {
		return nil, err
	}
	var watch []Ref
	for r, v := range prep.values {
		if v.dt == tensor.Float32 && v.kind != kindConst && (v.kind == kindInput || prep.producer(Ref(r)) >= 0) {
			watch = append(watch, Ref(r))
		}
	}
	cg := prep.clone()
	cg.outputs = watch
	plan, err := cg.Compile(Options{NoFusion: true})
	if err != nil {
		return nil, fmt.Errorf("infer: Calibrate: %w", err)
	}
	lo, hi := make([]float32, len(watch)), make([]float32, len(watch))
	for i := range lo {
		lo[i], hi[i] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	each := func(fn func(i int, x []float32)) error {
		for bi, b := range batches {
			outs, err := plan.Forward(b...)
			if err != nil {
				return fmt.Errorf("infer: Calibrate: batch %d: %w", bi, err)
			}
			for i, o := range outs {
				fn(i, o.Float32s())
			}
		}
		return nil
	}
	if err := each(func(i int, x []float32) {
		for _, v := range x {
			if v == v { // NaN takes no part
				lo[i], hi[i] = min(lo[i], v), max(hi[i], v)
			}
		}
	}); err != nil {
		return nil, err
	}
	c := &Calibration{src: g, prep: prep, ranges: map[Ref]Range{}, method: method, batches: len(batches)}
	hists := make([][]float64, len(watch))
	amax := make([]float32, len(watch))
	for i := range watch {
		if lo[i] > hi[i] { // nothing but NaN
			lo[i], hi[i] = 0, 0
		}
		amax[i] = max(-lo[i], hi[i])
		hists[i] = make([]float64, bins)
	}
	if method != CalibMinMax {
		if err := each(func(i int, x []float32) { histogramAbs(x, amax[i], hists[i]) }); err != nil {
			return nil, err
		}
	}
	for i, r := range watch {
		t := amax[i]
		switch method {
		case CalibPercentile:
			t = percentileThreshold(hists[i], amax[i], pct)
		case CalibKL:
			levels := 255
			if lo[i] < 0 {
				levels = 128
			}
			t = klThreshold(hists[i], amax[i], levels)
		}
		c.ranges[r] = Range{Min: max(lo[i], -t), Max: min(hi[i], t)}
	}
	return c, nil
}

// histogramAbs adds |x| to h, len(h) bins of equal width over [0, amax].
func histogramAbs(x []float32, amax float32, h []float64) {
	if amax <= 0 {
		h[0] += float64(len(x))
		return
	}
	scale := float64(len(h)) / float64(amax)
	last := len(h) - 1
	for _, v := range x {
		if v != v {
			continue
		}
		b := int(math.Abs(float64(v)) * scale)
		h[min(b, last)]++
	}
}

// percentileThreshold returns the upper edge of the bin at which the
// histogram (of |x| over [0, amax]) reaches pct percent of its count.
func percentileThreshold(h []float64, amax float32, pct float64) float32 {
	total := 0.0
	for _, v := range h {
		total += v
	}
	if total == 0 || amax <= 0 {
		return amax
	}
	want, run := total*pct/100, 0.0
	for i, v := range h {
		run += v
		if run >= want {
			return amax * float32(i+1) / float32(len(h))
		}
	}
	return amax
}

// klThreshold returns the |x| threshold of TensorRT's entropy
// calibration on the histogram h of |x| over [0, amax], for a
// quantization of levels steps: for each candidate i (from half the bins,
// as Paddle's cal_kl_threshold starts, so that the threshold keeps at
// least half of the observed range, to all of them), P is the first i bins with the outliers beyond them added to
// the last, Q the first i bins merged into levels groups and spread back
// evenly over each group's non-empty bins, and the threshold is the
// upper edge of bin i for the i of the least KL(P‖Q). Bins empty in Q
// but not in P take a small floor (the smoothing of TensorRT's and
// ONNX Runtime's implementations) so the divergence stays finite.
func klThreshold(h []float64, amax float32, levels int) float32 {
	nb := len(h)
	if amax <= 0 || nb <= levels {
		return amax
	}
	tail := make([]float64, nb+1) // tail[i] = Σ h[i:]
	for i := nb - 1; i >= 0; i-- {
		tail[i] = tail[i+1] + h[i]
	}
	if tail[0] == 0 {
		return amax
	}
	best, bestKL := nb, math.Inf(1)
	p := make([]float64, nb)
	q := make([]float64, nb)
	for i := max(levels, (nb-1)/2); i <= nb; i++ {
		copy(p, h[:i])
		p[i-1] += tail[i]
		// Q: the i bins merged into levels groups, bins [j·i/levels, (j+1)·i/levels).
		for j := range levels {
			a, b := j*i/levels, (j+1)*i/levels
			sum, nz := 0.0, 0
			for t := a; t < b; t++ {
				sum += h[t]
				if h[t] != 0 {
					nz++
				}
			}
			for t := a; t < b; t++ {
				q[t] = 0
				if h[t] != 0 {
					q[t] = sum / float64(nz)
				}
			}
		}
		kl := klDivergence(p[:i], q[:i])
		if kl < bestKL {
			best, bestKL = i, kl
		}
	}
	return amax * float32(best) / float32(nb)
}

// klDivergence returns KL(P‖Q) = Σ p·ln(p/q) of the two histograms, each
// normalised to sum 1, with q floored at 1e-9 where p is not zero.
func klDivergence(p, q []float64) float64 {
	sp, sq := 0.0, 0.0
	for i := range p {
		sp += p[i]
		sq += q[i]
	}
	if sp == 0 || sq == 0 {
		return math.Inf(1)
	}
	kl := 0.0
	for i, pv := range p {
		if pv == 0 {
			continue
		}
		pn := pv / sp
		qn := max(q[i]/sq, 1e-9)
		kl += pn * math.Log(pn/qn)
	}
	return kl
}

// actQuantOf returns the uint8 quantization of the range r (widened to
// hold 0, which must be exact for zero padding and ReLU): scale =
// (max − min)/255 and zero = round(−min/scale), as ONNX Runtime's and
// PyTorch's asymmetric quint8 activations compute them. An empty range
// gets scale 1.
func actQuantOf(r Range) actQuant {
	lo, hi := min(r.Min, 0), max(r.Max, 0)
	s := (hi - lo) / 255
	if !(s > 0) || math.IsInf(float64(s), 0) {
		return actQuant{Scale: 1}
	}
	z := math.RoundToEven(float64(-lo / s))
	return actQuant{Scale: s, Zero: uint8(min(max(z, 0), 255))}
}
