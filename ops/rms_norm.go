package ops

import (
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "rms_norm", Inputs: []string{"x", "gamma"}, Grads: []int{0, 1},
		Make: MakeOp(func(a RMSNormAttrs) Op { return RMSNormOp(a.Epsilon) }), CUDA: DeviceKernel})
}

// RMSNormAttrs are rms_norm's attributes: the epsilon added to the mean
// square.
type RMSNormAttrs struct {
	Epsilon float64 `json:"epsilon"`
}

// DefaultRMSNormEpsilon is Keras' RMSNormalization default epsilon.
const DefaultRMSNormEpsilon = 1e-6

type rmsNormOp struct {
	epsilon float64
	invRMS  []float64 // saved by Forward for Backward: 1/sqrt(mean(x²) + epsilon) per row
}

// RMSNormOp returns root-mean-square normalisation over the last axis of
// x, as Keras' RMSNormalization (axis=-1) and T5's layer norm compute it:
// for each row,
//
//	y = gamma·x/sqrt(mean(x²) + epsilon)
//
// with gamma [D] of the last axis' size, no centring and no bias. Both
// inputs have gradients.
func RMSNormOp(epsilon float64) Op { return &rmsNormOp{epsilon: epsilon} }

// RMSNorm returns the RMS normalisation of x; see RMSNormOp.
func RMSNorm(x, gamma *tensor.Tensor, epsilon float64) (*tensor.Tensor, error) {
	return run(RMSNormOp(epsilon), x, gamma)
}

func (o *rmsNormOp) Name() string { return "rms_norm" }

// Check is rms_norm's device-free check (Checker).
func (o *rmsNormOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("rms_norm", in, 2); err != nil {
		return err
	}
	x := in[0]
	switch {
	case x.Rank() < 1:
		return Errorf("rms_norm", in, "want x of rank 1 or more")
	case !(o.epsilon > 0) || math.IsInf(o.epsilon, 1):
		return Errorf("rms_norm", in, "epsilon %v must be positive and finite (Keras' default is %v)", o.epsilon, DefaultRMSNormEpsilon)
	case in[1].Rank() != 1 || in[1].Dim(0) != x.Dim(-1):
		return Errorf("rms_norm", in, "want gamma of shape [%d]", x.Dim(-1))
	}
	return nil
}

func (o *rmsNormOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat("rms_norm", in, 2)
	if err != nil {
		return nil, err
	}
	if err := o.Check(in); err != nil {
		return nil, err
	}
	x := in[0]
	d := x.Dim(-1)
	rows := 0
	if d > 0 {
		rows = x.Size() / d
	}
	o.invRMS = make([]float64, rows)
	out := tensor.Empty(dt, x.Shape()...) // rmsNormKernel writes every element
	switch dt {
	case tensor.Float32:
		rmsNormKernel(x.Float32s(), in[1].Float32s(), out.Float32s(), d, o.epsilon, o.invRMS)
	case tensor.Float64:
		rmsNormKernel(x.Float64s(), in[1].Float64s(), out.Float64s(), d, o.epsilon, o.invRMS)
	}
	return out, nil
}

// rmsNormKernel normalises each row of d elements of x into y and saves
// its 1/rms: layer norm's row loops with the mean held at zero and no
// beta, rows spread over the cores when there are many.
func rmsNormKernel[T tensor.Float](x, gamma, y []T, d int, eps float64, invRMS []float64) {
	if d == 0 {
		return
	}
	gamma, zero := gamma[:d], make([]T, d)
	par.Rows(len(invRMS), d, func() func(lo, hi int) {
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				xr := x[r*d : (r+1)*d]
				inv := 1 / math.Sqrt(vec.SumSqDevF64(xr, 0)/float64(d)+eps)
				invRMS[r] = inv
				vec.NormScale(y[r*d:(r+1)*d], xr, gamma, zero, 0, inv)
			}
		}
	})
}

func (o *rmsNormOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := wantedGrads(in, need)
	switch out.DType() {
	case tensor.Float32:
		rmsNormGrad(in[0].Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]), in[1].Size(), o.invRMS)
	case tensor.Float64:
		rmsNormGrad(in[0].Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]), in[1].Size(), o.invRMS)
	}
	return grads, nil
}

// rmsNormGrad writes, per row with x̂ = x·inv and g = dy·gamma,
//
//	dx = inv·(g - x̂·Σ(g·x̂)/d),  dgamma = Σ_rows dy·x̂
//
// (layer norm's gradient without the mean's term), accumulating in
// float64; a nil output is not wanted. Ranges of rows run on all cores,
// each with its own dgamma sums, added in range order afterwards, so the
// result does not depend on the scheduling.
func rmsNormGrad[T tensor.Float](x, gamma, dy, dx, dgamma []T, d int, invRMS []float64) {
	if d == 0 {
		return
	}
	gamma = gamma[:d]
	rows := len(invRMS)
	per := max(1, par.RowTaskElems/d)
	parts := make([][]float64, (rows+per-1)/per)
	par.Rows(rows, d, func() func(lo, hi int) {
		return func(lo, hi int) {
			sums := make([]float64, 2*d) // dgamma's sums, then the unused Σdy
			parts[lo/per] = sums
			for r := lo; r < hi; r++ {
				xr, gr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
				_, sgx := vec.NormScaleGradSums(gr, xr, gamma, sums[:d], sums[d:], 0, invRMS[r])
				if dx != nil {
					vec.NormScaleGrad(dx[r*d:(r+1)*d], gr, xr, gamma, 0, invRMS[r], 0, sgx/float64(d))
				}
			}
		}
	})
	if dgamma == nil {
		return
	}
	for j := range d {
		s := 0.0
		for _, p := range parts {
			s += p[j]
		}
		dgamma[j] = T(s)
	}
}
