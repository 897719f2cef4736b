package ops

import (
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{
		Name:   "batch_norm",
		Inputs: []string{"x", "gamma", "beta", "moving_mean", "moving_variance"},
		Grads:  []int{0, 1, 2},
		Make:   MakeOp(BatchNormOp),
		CUDA:   DeviceKernel,
	})
}

// Keras' BatchNormalization defaults.
const (
	DefaultBatchNormMomentum = 0.99
	DefaultBatchNormEpsilon  = 1e-3
)

// BatchNormAttrs are batch norm's attributes. The zero value is invalid
// (epsilon must be positive); start from DefaultBatchNormMomentum and
// DefaultBatchNormEpsilon, Keras' defaults.
type BatchNormAttrs struct {
	Momentum float64 `json:"momentum"` // in [0, 1]: weight of the old moving statistics
	Epsilon  float64 `json:"epsilon"`  // > 0: added to the variance
	Training bool    `json:"training"` // normalise with the batch statistics and update the moving ones

	// CrossReplica, when set in training, makes the statistics those of
	// the whole batch of a data-parallel run (synchronised batch norm, as
	// PyTorch's SyncBatchNorm): it must replace its argument, on every
	// replica, by the element-wise sum over all replicas (an allreduce),
	// and every replica must reach it in the same order. See
	// crossReplicaGrad for the gradient.
	CrossReplica func(sums []float64) error `json:"-"`
}

type batchNormOp struct {
	a BatchNormAttrs

	// Saved by Forward for Backward, per channel: the mean and
	// 1/sqrt(variance + epsilon) that normalised x.
	mean, invStd []float64
	// With CrossReplica: the elements per channel over all replicas.
	total float64
}

// BatchNormOp returns batch normalisation over axis 1 of x, the channels
// of NCHW images [N, C, H, W] or the features of [N, C] (any rank >= 2:
// statistics are per channel, over every other axis), as Keras'
// BatchNormalization (axis=1) computes it:
//
//	y = gamma·(x - mean)/sqrt(variance + epsilon) + beta
//
// Inputs are x, gamma [C], beta [C], moving_mean [C] and moving_variance
// [C], all of one float dtype. In training, mean and variance are the
// batch's, the variance biased (divided by the count, as tf.nn.moments),
// the gradient flows through them, and the moving statistics are updated
// in place with the biased variance, as Keras does:
//
//	moving = moving·momentum + batch·(1 - momentum)
//
// In inference, mean and variance are the moving statistics, which are
// left unchanged. x, gamma and beta have gradients in both modes; the
// moving statistics have none.
func BatchNormOp(a BatchNormAttrs) Op { return &batchNormOp{a: a} }

// BatchNorm returns the batch normalisation of x; see BatchNormOp.
func BatchNorm(x, gamma, beta, movingMean, movingVar *tensor.Tensor, a BatchNormAttrs) (*tensor.Tensor, error) {
	return run(BatchNormOp(a), x, gamma, beta, movingMean, movingVar)
}

func (o *batchNormOp) Name() string { return "batch_norm" }

// batchNormDims returns the batch size, the channels and the elements per channel
// of each example.
func batchNormDims(x *tensor.Tensor) (n, c, hw int) {
	return x.Dim(0), x.Dim(1), x.Shape()[2:].Size()
}

// Check is batch_norm's device-free check (Checker).
func (o *batchNormOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("batch_norm", in, 5); err != nil {
		return err
	}
	x := in[0]
	if x.Rank() < 2 {
		return Errorf("batch_norm", in, "want x of rank >= 2 ([N, C] or [N, C, H, W])")
	}
	n, c, hw := batchNormDims(x)
	for _, p := range in[1:] {
		if p.Rank() != 1 || p.Dim(0) != c {
			return Errorf("batch_norm", in, "want gamma, beta, moving_mean and moving_variance of shape [%d]", c)
		}
	}
	if !(o.a.Momentum >= 0 && o.a.Momentum <= 1) {
		return Errorf("batch_norm", in, "momentum %v outside [0, 1]", o.a.Momentum)
	}
	if !(o.a.Epsilon > 0) || math.IsInf(o.a.Epsilon, 1) {
		return Errorf("batch_norm", in, "epsilon %v must be positive and finite (Keras' default is %v)", o.a.Epsilon, DefaultBatchNormEpsilon)
	}
	if o.a.Training && n*hw == 0 {
		return Errorf("batch_norm", in, "training needs a non-empty batch to take statistics over")
	}
	return nil
}

func (o *batchNormOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat("batch_norm", in, 5)
	if err != nil {
		return nil, err
	}
	if err := o.Check(in); err != nil {
		return nil, err
	}
	x := in[0]
	n, c, hw := batchNormDims(x)
	o.mean, o.invStd = make([]float64, c), make([]float64, c)
	out := tensor.Empty(x.DType(), x.Shape()...) // batchNormKernel writes every element
	if o.a.Training && o.a.CrossReplica != nil {
		var err error
		switch dt {
		case tensor.Float32:
			err = crossReplicaForward(o, x.Float32s(), in[1].Float32s(), in[2].Float32s(), in[3].Float32s(), in[4].Float32s(), out.Float32s(), n, c, hw)
		case tensor.Float64:
			err = crossReplicaForward(o, x.Float64s(), in[1].Float64s(), in[2].Float64s(), in[3].Float64s(), in[4].Float64s(), out.Float64s(), n, c, hw)
		}
		if err != nil {
			return nil, Errorf("batch_norm", in, "summing the statistics over the replicas: %v", err)
		}
		return out, nil
	}
	switch dt {
	case tensor.Float32:
		batchNormKernel(x.Float32s(), in[1].Float32s(), in[2].Float32s(), in[3].Float32s(), in[4].Float32s(), out.Float32s(), n, c, hw, o.a, o.mean, o.invStd)
	case tensor.Float64:
		batchNormKernel(x.Float64s(), in[1].Float64s(), in[2].Float64s(), in[3].Float64s(), in[4].Float64s(), out.Float64s(), n, c, hw, o.a, o.mean, o.invStd)
	}
	return out, nil
}

// batchNormKernel normalises x [n, c, hw] per channel into y, saving each
// channel's mean and inverse std; in training it takes the batch
// statistics (a pass for the mean and one for the centred variance, in
// float64) and updates the moving ones rm, rv. Each pass walks the
// channel's n contiguous runs of hw elements with an internal/vec loop
// (AVX for float32, still computing in float64); channels are spread over
// the cores when the tensor is large.
func batchNormKernel[T tensor.Float](x, gamma, beta, rm, rv, y []T, n, c, hw int, a BatchNormAttrs, mean, invStd []float64) {
	m := float64(n * hw)
	par.Rows(c, n*hw, func() func(lo, hi int) {
		return func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				mu, v := float64(rm[ch]), float64(rv[ch])
				if a.Training {
					mu, v = 0, 0
					for b := 0; b < n; b++ {
						mu += vec.SumF64(x[(b*c+ch)*hw : (b*c+ch+1)*hw])
					}
					mu /= m
					for b := 0; b < n; b++ {
						v += vec.SumSqDevF64(x[(b*c+ch)*hw:(b*c+ch+1)*hw], mu)
					}
					v /= m
					rm[ch] = T(float64(rm[ch])*a.Momentum + mu*(1-a.Momentum))
					rv[ch] = T(float64(rv[ch])*a.Momentum + v*(1-a.Momentum))
				}
				inv := 1 / math.Sqrt(v+a.Epsilon)
				mean[ch], invStd[ch] = mu, inv
				k, bt := float64(gamma[ch])*inv, float64(beta[ch])
				for b := 0; b < n; b++ {
					vec.Affine(y[(b*c+ch)*hw:(b*c+ch+1)*hw], x[(b*c+ch)*hw:], mu, k, bt)
				}
			}
		}
	})
}

func (o *batchNormOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	x := in[0]
	n, c, hw := batchNormDims(x)
	grads := make([]*tensor.Tensor, 5)
	for i := 0; i < 3; i++ {
		if need[i] {
			grads[i] = tensor.ZerosLike(in[i])
		}
	}
	if o.a.Training && o.a.CrossReplica != nil {
		var err error
		switch x.DType() {
		case tensor.Float32:
			err = crossReplicaGrad(o, x.Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](grads[2]), n, c, hw)
		case tensor.Float64:
			err = crossReplicaGrad(o, x.Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](grads[2]), n, c, hw)
		}
		if err != nil {
			return nil, Errorf("batch_norm", in, "summing the gradient's statistics over the replicas: %v", err)
		}
		return grads, nil
	}
	switch x.DType() {
	case tensor.Float32:
		batchNormGrad(x.Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](grads[2]), n, c, hw, o.a.Training, o.mean, o.invStd)
	case tensor.Float64:
		batchNormGrad(x.Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](grads[2]), n, c, hw, o.a.Training, o.mean, o.invStd)
	}
	return grads, nil
}

// batchNormGrad writes, per channel with x̂ = (x - mean)·invStd and m its
// element count, dgamma = Σ dy·x̂, dbeta = Σ dy and
//
//	dx = gamma·invStd·(dy - dbeta/m - x̂·dgamma/m)   (training)
//	dx = gamma·invStd·dy                           (inference)
//
// (TF's FusedBatchNormGrad); a nil output is not wanted. Per channel one
// pass takes both sums (Σ dy·(x - mean), scaled by invStd once) and one
// writes dx = k·(dy - c0 - c1·(x - mean)) with the per-channel constants
// k, c0, c1 hoisted; channels are spread over the cores when the tensor
// is large.
func batchNormGrad[T tensor.Float](x, gamma, dy, dx, dgamma, dbeta []T, n, c, hw int, training bool, mean, invStd []float64) {
	m := float64(n * hw)
	par.Rows(c, n*hw, func() func(lo, hi int) {
		return func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				mu, inv := mean[ch], invStd[ch]
				sg, sgx := 0.0, 0.0
				for b := 0; b < n; b++ {
					lo := (b*c + ch) * hw
					s, sx := vec.SumProdDevF64(dy[lo:lo+hw], x[lo:], mu)
					sg, sgx = sg+s, sgx+sx
				}
				sgx *= inv
				if dgamma != nil {
					dgamma[ch] = T(sgx)
				}
				if dbeta != nil {
					dbeta[ch] = T(sg)
				}
				if dx == nil {
					continue
				}
				k := float64(gamma[ch]) * inv
				c0, c1 := 0.0, 0.0
				if training {
					c0, c1 = sg/m, inv*sgx/m
				}
				for b := 0; b < n; b++ {
					lo := (b*c + ch) * hw
					vec.AffineGrad(dx[lo:lo+hw], dy[lo:], x[lo:], mu, k, c0, c1)
				}
			}
		}
	})
}
