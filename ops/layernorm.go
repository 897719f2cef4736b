package ops

import (
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "layer_norm", Inputs: []string{"x", "gamma", "beta"}, Grads: []int{0, 1, 2},
		Make: MakeOp(func(a LayerNormAttrs) Op { return LayerNormOp(a.NormAxes, a.Epsilon) }), CUDA: DeviceKernel})
}

// LayerNormAttrs are layer_norm's attributes: how many trailing axes it
// normalises over and the epsilon added to the variance.
type LayerNormAttrs struct {
	NormAxes int     `json:"norm_axes"`
	Epsilon  float64 `json:"epsilon"`
}

// DefaultLayerNormEpsilon is Keras' LayerNormalization default epsilon.
const DefaultLayerNormEpsilon = 1e-3

type layerNormOp struct {
	axes    int
	epsilon float64

	// Saved by Forward for Backward, per normalised row: the mean and
	// 1/sqrt(variance + epsilon).
	mean, invStd []float64
}

// LayerNormOp returns layer normalisation over the last axes axes of x
// (axes >= 1; 1 is Keras' default axis=-1), as Keras' LayerNormalization
// computes it: with mean and biased variance (tf.nn.moments) taken over
// those axes for each leading index,
//
//	y = gamma·(x - mean)/sqrt(variance + epsilon) + beta
//
// where gamma and beta have the shape of those last axes and the dtype of
// x. All three inputs have gradients.
func LayerNormOp(axes int, epsilon float64) Op { return &layerNormOp{axes: axes, epsilon: epsilon} }

// LayerNorm returns the layer normalisation of x; see LayerNormOp.
func LayerNorm(x, gamma, beta *tensor.Tensor, axes int, epsilon float64) (*tensor.Tensor, error) {
	return run(LayerNormOp(axes, epsilon), x, gamma, beta)
}

func (o *layerNormOp) Name() string { return "layer_norm" }

// Check is layer_norm's device-free check (Checker).
func (o *layerNormOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("layer_norm", in, 3); err != nil {
		return err
	}
	x := in[0]
	if o.axes < 1 || o.axes > x.Rank() {
		return Errorf("layer_norm", in, "cannot normalise the last %d axes of a rank-%d x", o.axes, x.Rank())
	}
	if !(o.epsilon > 0) || math.IsInf(o.epsilon, 1) {
		return Errorf("layer_norm", in, "epsilon %v must be positive and finite (Keras' default is %v)", o.epsilon, DefaultLayerNormEpsilon)
	}
	norm := x.Shape()[x.Rank()-o.axes:]
	if !in[1].Shape().Equal(norm) || !in[2].Shape().Equal(norm) {
		return Errorf("layer_norm", in, "want gamma and beta of shape %v", norm)
	}
	return nil
}

func (o *layerNormOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat("layer_norm", in, 3)
	if err != nil {
		return nil, err
	}
	if err := o.Check(in); err != nil {
		return nil, err
	}
	x := in[0]
	norm := x.Shape()[x.Rank()-o.axes:]
	d := norm.Size()
	rows := x.Shape()[:x.Rank()-o.axes].Size()
	o.mean, o.invStd = make([]float64, rows), make([]float64, rows)
	out := tensor.Empty(x.DType(), x.Shape()...) // layerNormKernel writes every element
	switch dt {
	case tensor.Float32:
		layerNormKernel(x.Float32s(), in[1].Float32s(), in[2].Float32s(), out.Float32s(), d, o.epsilon, o.mean, o.invStd)
	case tensor.Float64:
		layerNormKernel(x.Float64s(), in[1].Float64s(), in[2].Float64s(), out.Float64s(), d, o.epsilon, o.mean, o.invStd)
	}
	return out, nil
}

// layerNormKernel normalises each row of d elements of x into y, saving
// its mean and inverse std: per row a pass for the mean, one for the
// centred variance (two passes, in float64, for accuracy when the mean is
// large beside the spread) and one that writes y, walking the row and
// gamma, beta in step, each an internal/vec loop (AVX for float32); rows
// are spread over the cores when there are many.
func layerNormKernel[T tensor.Float](x, gamma, beta, y []T, d int, eps float64, mean, invStd []float64) {
	if d == 0 {
		return
	}
	gamma, beta = gamma[:d], beta[:d]
	par.Rows(len(mean), d, func() func(lo, hi int) {
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				xr, yr := x[r*d:(r+1)*d], y[r*d:(r+1)*d]
				mu := vec.SumF64(xr) / float64(d)
				inv := 1 / math.Sqrt(vec.SumSqDevF64(xr, mu)/float64(d)+eps)
				mean[r], invStd[r] = mu, inv
				vec.NormScale(yr, xr, gamma, beta, mu, inv)
			}
		}
	})
}

func (o *layerNormOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	d := in[1].Size()
	grads := make([]*tensor.Tensor, 3)
	for i := range grads {
		if need[i] {
			grads[i] = tensor.ZerosLike(in[i])
		}
	}
	switch out.DType() {
	case tensor.Float32:
		layerNormGrad(in[0].Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](grads[2]), d, o.mean, o.invStd)
	case tensor.Float64:
		layerNormGrad(in[0].Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](grads[2]), d, o.mean, o.invStd)
	}
	return grads, nil
}

// layerNormGrad writes, per row with x̂ = (x - mean)·invStd and
// g = dy·gamma,
//
//	dx = invStd·(g - Σg/d - x̂·Σ(g·x̂)/d),  dgamma = Σ_rows dy·x̂,  dbeta = Σ_rows dy
//
// accumulating in float64; a nil output is not wanted. Each row takes one
// pass for its sums (adding to dgamma and dbeta's) and one for dx, both
// internal/vec loops (AVX for float32). Ranges
// of rows run on all cores, each with its own dgamma and dbeta sums, which
// are then added in range order, so the result does not depend on the
// scheduling.
func layerNormGrad[T tensor.Float](x, gamma, dy, dx, dgamma, dbeta []T, d int, mean, invStd []float64) {
	if d == 0 {
		return
	}
	gamma = gamma[:d]
	rows := len(mean)
	per := max(1, par.RowTaskElems/d)
	parts := make([][]float64, (rows+per-1)/per) // per range: dgamma's then dbeta's sums
	par.Rows(rows, d, func() func(lo, hi int) {
		return func(lo, hi int) {
			sums := make([]float64, 2*d)
			parts[lo/per] = sums
			sgamma, sbeta := sums[:d], sums[d:]
			for r := lo; r < hi; r++ {
				xr, gr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
				mu, inv := mean[r], invStd[r]
				sg, sgx := vec.NormScaleGradSums(gr, xr, gamma, sgamma, sbeta, mu, inv)
				if dx != nil {
					vec.NormScaleGrad(dx[r*d:(r+1)*d], gr, xr, gamma, mu, inv, sg/float64(d), sgx/float64(d))
				}
			}
		}
	})
	for j := 0; j < d; j++ {
		sg, sb := 0.0, 0.0
		for _, p := range parts {
			sg += p[j]
			sb += p[d+j]
		}
		if dgamma != nil {
			dgamma[j] = T(sg)
		}
		if dbeta != nil {
			dbeta[j] = T(sb)
		}
	}
}
