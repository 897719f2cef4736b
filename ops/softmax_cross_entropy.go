package ops

import (
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "softmax_cross_entropy", Inputs: []string{"logits", "labels"}, Grads: []int{0},
		Make: MakeOp(func(a LossAttrs) Op { return SoftmaxCrossEntropyOp(a.Reduction) }), CUDA: DeviceKernel})
	register(Spec{Name: "softmax_cross_entropy_soft", Inputs: []string{"logits", "labels"}, Grads: []int{0, 1},
		Make: MakeOp(func(a LossAttrs) Op { return SoftmaxCrossEntropySoftOp(a.Reduction) }), CUDA: DeviceKernel})
}

// softmaxXentOp is the fused softmax cross-entropy from logits [N, C],
// with integer class labels [N] or, when soft, probability labels [N, C].
type softmaxXentOp struct {
	name string
	r    LossReduction
	soft bool

	// Saved by Forward for Backward.
	labels []int     // the integer labels
	rowMax []float64 // max of each row of logits
	logSum []float64 // log Σ exp(logits - rowMax) of each row
}

// SoftmaxCrossEntropyOp returns the op computing, for logits [N, C] and
// int32 or int64 class labels [N] in [0, C),
//
//	loss_i = logsumexp(z_i) - z_i[label_i]
//
// (tf.nn.sparse_softmax_cross_entropy_with_logits), then folded by r: the
// batch mean (LossMean, a scalar, which is tf.reduce_mean of TF's result
// and Keras' SparseCategoricalCrossentropy(from_logits=True)), the sum, or
// none ([N]). It is one fused, stable op rather than log_softmax, one_hot
// and a sum: logsumexp subtracts the row max, and the gradient is
// softmax(z_i) - onehot(label_i) times the upstream gradient of loss_i.
// Labels have no gradient. Unlike TF's kernel, which writes NaN, a label
// outside [0, C) is an error naming the op and the label, and so is an
// empty batch (N = 0) under LossMean (see LossMean) or logits without a
// class (C = 0).
func SoftmaxCrossEntropyOp(r LossReduction) Op {
	return &softmaxXentOp{name: "softmax_cross_entropy", r: r}
}

// SoftmaxCrossEntropySoftOp returns the op computing, for logits [N, C] and
// labels [N, C] of the same float dtype (each row a distribution),
//
//	loss_i = Σ_c y_ic·(logsumexp(z_i) - z_ic)
//
// (tf.nn.softmax_cross_entropy_with_logits), folded by r as
// SoftmaxCrossEntropyOp. Both inputs have gradients, as in TF: the labels'
// is -log_softmax(z_i), and the logits' is softmax(z_i)·Σ_c y_ic - y_i,
// the exact derivative, which is TF's softmax(z_i) - y_i when the row of
// labels sums to 1.
func SoftmaxCrossEntropySoftOp(r LossReduction) Op {
	return &softmaxXentOp{name: "softmax_cross_entropy_soft", r: r, soft: true}
}

// SoftmaxCrossEntropy returns the softmax cross-entropy of logits [N, C]
// with integer labels [N]; see SoftmaxCrossEntropyOp.
func SoftmaxCrossEntropy(logits, labels *tensor.Tensor, r LossReduction) (*tensor.Tensor, error) {
	return run(SoftmaxCrossEntropyOp(r), logits, labels)
}

// SoftmaxCrossEntropySoft returns the softmax cross-entropy of logits
// [N, C] with probability labels [N, C]; see SoftmaxCrossEntropySoftOp.
func SoftmaxCrossEntropySoft(logits, labels *tensor.Tensor, r LossReduction) (*tensor.Tensor, error) {
	return run(SoftmaxCrossEntropySoftOp(r), logits, labels)
}

func (o *softmaxXentOp) Name() string { return o.name }

// Check is the softmax cross-entropies' device-free check (Checker): the
// logits [N, C] and labels of the logits' shape (soft) or int labels [N];
// the integer labels' range is checked where they are read.
func (o *softmaxXentOp) Check(in []*tensor.Tensor) error {
	if err := checkCount(o.name, in, 2); err != nil {
		return err
	}
	if err := checkReduction(o.name, in, o.r); err != nil {
		return err
	}
	z, y := in[0], in[1]
	if !z.DType().IsFloat() || z.Rank() != 2 || z.Dim(1) < 1 {
		return Errorf(o.name, in, "want float32 or float64 logits [N, C] with C >= 1")
	}
	if err := checkMeanOfSome(o.name, in, o.r, z.Dim(0)); err != nil {
		return err
	}
	if o.soft {
		if y.DType() != z.DType() || !y.Shape().Equal(z.Shape()) {
			return Errorf(o.name, in, "want labels of the logits' dtype and shape %v", z.Shape())
		}
		return nil
	}
	if (y.DType() != tensor.Int32 && y.DType() != tensor.Int64) || y.Rank() != 1 || y.Dim(0) != z.Dim(0) {
		return Errorf(o.name, in, "want int32 or int64 labels [%d]", z.Dim(0))
	}
	return nil
}

// check is Forward's validation: Check, then what only the CPU kernel
// needs (host memory) and, for integer labels, their range, saving them
// for Backward.
func (o *softmaxXentOp) check(in []*tensor.Tensor) error {
	if err := o.Check(in); err != nil {
		return err
	}
	if err := checkArity(o.name, in, 2); err != nil {
		return err
	}
	if o.soft {
		return nil
	}
	z, y := in[0], in[1]
	labels, err := y.Ints()
	if err != nil {
		return Errorf(o.name, in, "want int32 or int64 labels [%d]: %v", z.Dim(0), err)
	}
	c := z.Dim(1)
	for i, l := range labels {
		if l < 0 || l >= c {
			return Errorf(o.name, in, "label %d at row %d out of range [0, %d)", l, i, c)
		}
	}
	o.labels = labels
	return nil
}

func (o *softmaxXentOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := o.check(in); err != nil {
		return nil, err
	}
	z := in[0]
	n, c := z.Dim(0), z.Dim(1)
	o.rowMax, o.logSum = make([]float64, n), make([]float64, n)
	loss := make([]float64, n)
	switch z.DType() {
	case tensor.Float32:
		xentKernel(z.Float32s(), floats[float32](o.softLabels(in)), o.labels, n, c, o.rowMax, o.logSum, loss)
	case tensor.Float64:
		xentKernel(z.Float64s(), floats[float64](o.softLabels(in)), o.labels, n, c, o.rowMax, o.logSum, loss)
	}
	return reduceLoss(z.DType(), o.r, loss, tensor.Shape{n}), nil
}

// softLabels returns the float labels of the soft form, or nil.
func (o *softmaxXentOp) softLabels(in []*tensor.Tensor) *tensor.Tensor {
	if o.soft {
		return in[1]
	}
	return nil
}

// xentKernel writes each row's max and shifted log-sum-exp into rowMax and
// logSum and its loss into loss, from soft labels y when y is non-nil and
// from integer labels otherwise: per row one pass for the max, one fused
// exp-and-sum pass (float32 through the vector exponential, summed
// without being stored) and, for soft labels, one pass for the loss; rows
// are spread over the cores when there are many.
func xentKernel[T tensor.Float](z, y []T, labels []int, n, c int, rowMax, logSum, loss []float64) {
	if c == 0 {
		return
	}
	par.Rows(n, c, func() func(lo, hi int) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				zr := z[i*c : (i+1)*c]
				m := float64(vec.Max(zr))
				ls := math.Log(vec.ExpShiftSum(nil, zr, m))
				rowMax[i], logSum[i] = m, ls
				if y == nil {
					loss[i] = negLogSoftmax(m, ls, zr[labels[i]])
					continue
				}
				l := 0.0
				for j, v := range y[i*c : (i+1)*c] {
					l += float64(v) * negLogSoftmax(m, ls, zr[j])
				}
				loss[i] = l
			}
		}
	})
}

// negLogSoftmax is -log softmax = (max - z) + log Σ exp(z - max), summed in
// that order: (max + log Σ) - z would round the small differences of very
// negative rows to the spacing of |max| (TF keeps them, and so do we).
func negLogSoftmax[T tensor.Float](m, ls float64, z T) float64 { return (m - float64(z)) + ls }

func (o *softmaxXentOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	z := in[0]
	n, c := z.Dim(0), z.Dim(1)
	w := lossWeights(o.r, gout, n)
	grads := make([]*tensor.Tensor, 2)
	if need[0] {
		grads[0] = tensor.ZerosLike(z)
	}
	if o.soft && need[1] {
		grads[1] = tensor.ZerosLike(in[1])
	}
	switch z.DType() {
	case tensor.Float32:
		xentGrad(z.Float32s(), floats[float32](o.softLabels(in)), o.labels, n, c, o.rowMax, o.logSum, w, floats[float32](grads[0]), floats[float32](grads[1]))
	case tensor.Float64:
		xentGrad(z.Float64s(), floats[float64](o.softLabels(in)), o.labels, n, c, o.rowMax, o.logSum, w, floats[float64](grads[0]), floats[float64](grads[1]))
	}
	return grads, nil
}

// xentGrad writes, for row weights w (the upstream gradient of each loss),
// dz = w·(p·Σy - y) with p = softmax(z) and y the soft labels or the
// one-hot of the integer labels, and for soft labels dy = w·(-log p);
// a nil dz or dy is not wanted. p is exp(z - max)·exp(-logsumexp), the
// exponentials written straight into dz's row (float32 through the vector
// exponential), and rows are spread over the cores when there are many.
func xentGrad[T tensor.Float](z, y []T, labels []int, n, c int, rowMax, logSum, w []float64, dz, dy []T) {
	if c == 0 {
		return
	}
	par.Rows(n, c, func() func(lo, hi int) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				zr, m, ls := z[i*c:(i+1)*c], rowMax[i], logSum[i]
				var yr []T
				mass := 1.0
				if y != nil {
					yr, mass = y[i*c:(i+1)*c], 0
					for _, v := range yr {
						mass += float64(v)
					}
				}
				if dz != nil {
					dr := dz[i*c : (i+1)*c]
					vec.ExpShiftSum(dr, zr, m)
					k := w[i] * math.Exp(-ls) * mass // p·mass·w = exp(z - max)·k
					if yr != nil {
						for j, e := range dr {
							dr[j] = T(float64(e)*k - w[i]*float64(yr[j]))
						}
					} else {
						l := labels[i]
						el := float64(dr[l])
						vec.Scale(dr, k)
						dr[l] = T(el*k - w[i])
					}
				}
				if dy != nil {
					for j, v := range zr {
						dy[i*c+j] = T(w[i] * negLogSoftmax(m, ls, v))
					}
				}
			}
		}
	})
}
