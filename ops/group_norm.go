package ops

import (
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "group_norm", Inputs: []string{"x", "scale", "bias"}, Grads: []int{0, 1, 2},
		Make: MakeOp(GroupNormOp), CUDA: DeviceFallback})
}

// GroupNormAttrs are group_norm's attributes: the number of channel groups
// and the epsilon added to the variance (ONNX GroupNormalization's
// num_groups and epsilon; PyTorch's num_groups and eps, default 1e-5).
type GroupNormAttrs struct {
	NumGroups int     `json:"num_groups"`
	Epsilon   float64 `json:"epsilon"`
}

// DefaultNormEpsilon is the epsilon of ONNX InstanceNormalization and
// GroupNormalization and of PyTorch's InstanceNorm and GroupNorm.
const DefaultNormEpsilon = 1e-5

type groupNormOp struct {
	name     string // group_norm, or instance_norm
	instance bool   // instance_norm: one group per channel, groups unused
	groups   int
	eps      float64

	// Saved by Forward for Backward, per (sample, group): the mean and
	// 1/sqrt(variance + epsilon).
	mean, invStd []float64
}

// GroupNormOp returns group normalisation (Wu and He, 2018; PyTorch
// GroupNorm, ONNX GroupNormalization at opset 21): x is [N, C, spatial...]
// (rank >= 2), its C channels split into NumGroups groups of C/NumGroups
// consecutive channels, and each sample's group is normalised over its
// channels and spatial positions together, with the biased variance:
//
//	y[n, c, s] = scale[c]·(x[n, c, s] - mean[n, g])/sqrt(var[n, g] + epsilon) + bias[c],  g = c/(C/G)
//
// scale and bias are per channel, [C], as in PyTorch and opset 21; opset
// 18's GroupNormalization had them per group, [G], which is the opset-21
// form with each group's value repeated over its C/G channels. All three
// inputs have gradients.
func GroupNormOp(a GroupNormAttrs) Op {
	return &groupNormOp{name: "group_norm", groups: a.NumGroups, eps: a.Epsilon}
}

// GroupNorm returns the group normalisation of x; see GroupNormOp.
func GroupNorm(x, scale, bias *tensor.Tensor, numGroups int, epsilon float64) (*tensor.Tensor, error) {
	return run(GroupNormOp(GroupNormAttrs{NumGroups: numGroups, Epsilon: epsilon}), x, scale, bias)
}

func (o *groupNormOp) Name() string { return o.name }

func (o *groupNormOp) Attrs() any {
	if o.instance {
		return InstanceNormAttrs{Epsilon: o.eps}
	}
	return GroupNormAttrs{NumGroups: o.groups, Epsilon: o.eps}
}

// geom returns the number of groups per sample, the channels per group
// and the spatial size of x [N, C, spatial...].
func (o *groupNormOp) geom(x tensor.Shape) (groups, cpg, spatial int) {
	groups = o.groups
	if o.instance {
		groups = x[1]
	}
	if groups > 0 {
		cpg = x[1] / groups
	}
	return groups, cpg, x[2:].Size()
}

// Check validates x's rank, scale's and bias' shapes, the groups and
// epsilon from shapes alone (Checker).
func (o *groupNormOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes(o.name, in, 3); err != nil {
		return err
	}
	x := in[0].Shape()
	minRank := 2
	if o.instance {
		minRank = 3 // ONNX InstanceNormalization's N x C x D1 x ...
	}
	if len(x) < minRank {
		return Errorf(o.name, in, "want x of rank >= %d, [N, C, spatial...]", minRank)
	}
	if !o.instance && (o.groups <= 0 || x[1]%o.groups != 0) {
		return Errorf(o.name, in, "num_groups %d must be positive and divide the %d channels", o.groups, x[1])
	}
	if !(o.eps > 0) || math.IsInf(o.eps, 1) {
		return Errorf(o.name, in, "epsilon %v must be positive and finite (ONNX's and PyTorch's default is %v)", o.eps, DefaultNormEpsilon)
	}
	c := tensor.Shape{x[1]}
	if !in[1].Shape().Equal(c) || !in[2].Shape().Equal(c) {
		return Errorf(o.name, in, "want scale and bias of shape %v, one per channel", c)
	}
	return nil
}

func (o *groupNormOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat(o.name, in, 3)
	if err != nil {
		return nil, err
	}
	if err := o.Check(in); err != nil {
		return nil, err
	}
	x := in[0]
	groups, cpg, spatial := o.geom(x.Shape())
	rows := x.Dim(0) * groups
	o.mean, o.invStd = make([]float64, rows), make([]float64, rows)
	out := tensor.Empty(dt, x.Shape()...) // groupNormKernel writes every element
	switch dt {
	case tensor.Float32:
		groupNormKernel(x.Float32s(), in[1].Float32s(), in[2].Float32s(), out.Float32s(), groups, cpg, spatial, o.eps, o.mean, o.invStd)
	case tensor.Float64:
		groupNormKernel(x.Float64s(), in[1].Float64s(), in[2].Float64s(), out.Float64s(), groups, cpg, spatial, o.eps, o.mean, o.invStd)
	}
	return out, nil
}

// groupNormKernel normalises each (sample, group) row of cpg·spatial
// elements of x into y, saving its mean and inverse std: a pass for the
// mean and one for the centred variance (in float64), then each channel's
// run of spatial elements as y = x·a + b with a = invStd·scale[c] and
// b = bias[c] - mean·a. Rows run on all cores.
func groupNormKernel[T tensor.Float](x, scale, bias, y []T, groups, cpg, spatial int, eps float64, mean, invStd []float64) {
	d := cpg * spatial
	par.Rows(len(mean), d, func() func(lo, hi int) {
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				xr, yr := x[r*d:(r+1)*d], y[r*d:(r+1)*d]
				mu, inv := 0.0, 1/math.Sqrt(eps)
				if d > 0 {
					mu = vec.SumF64(xr) / float64(d)
					inv = 1 / math.Sqrt(vec.SumSqDevF64(xr, mu)/float64(d)+eps)
				}
				mean[r], invStd[r] = mu, inv
				c0 := (r % groups) * cpg
				for j := 0; j < cpg; j++ {
					a := inv * float64(scale[c0+j])
					b := float64(bias[c0+j]) - mu*a
					for i, v := range xr[j*spatial : (j+1)*spatial] {
						yr[j*spatial+i] = T(float64(v)*a + b)
					}
				}
			}
		}
	})
}

func (o *groupNormOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	groups, cpg, spatial := o.geom(in[0].Shape())
	grads := wantedGrads(in, need)
	switch out.DType() {
	case tensor.Float32:
		groupNormGrad(in[0].Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](grads[2]), groups, cpg, spatial, o.mean, o.invStd)
	case tensor.Float64:
		groupNormGrad(in[0].Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](grads[2]), groups, cpg, spatial, o.mean, o.invStd)
	}
	return grads, nil
}

// groupNormGrad writes, per (sample, group) row of d = cpg·spatial
// elements with x̂ = (x - mean)·invStd and g = dy·scale[c],
//
//	dx = invStd·(g - Σg/d - x̂·Σ(g·x̂)/d),  dscale[c] = Σ_{n,s} dy·x̂,  dbias[c] = Σ_{n,s} dy
//
// accumulating in float64; a nil output is not wanted. Rows run on all
// cores, each writing its channels' Σdy and Σdy·x̂ to its own slots, which
// are then added over the samples in order, so the result does not depend
// on the scheduling.
func groupNormGrad[T tensor.Float](x, scale, dy, dx, dscale, dbias []T, groups, cpg, spatial int, mean, invStd []float64) {
	d := cpg * spatial
	rows := len(mean)
	sums := make([]float64, 2*rows*cpg) // per row and channel: Σdy, then Σdy·x̂
	par.Rows(rows, d, func() func(lo, hi int) {
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				mu, inv := mean[r], invStd[r]
				c0 := (r % groups) * cpg
				sg, sgx := 0.0, 0.0 // Σg and Σg·x̂ over the row
				for j := 0; j < cpg; j++ {
					off := r*d + j*spatial
					s, sx := 0.0, 0.0
					for i, g := range dy[off : off+spatial] {
						s += float64(g)
						sx += float64(g) * (float64(x[off+i]) - mu) * inv
					}
					sums[2*(r*cpg+j)], sums[2*(r*cpg+j)+1] = s, sx
					sc := float64(scale[c0+j])
					sg += sc * s
					sgx += sc * sx
				}
				if dx == nil || d == 0 {
					continue
				}
				m1, m2 := sg/float64(d), sgx/float64(d)
				for j := 0; j < cpg; j++ {
					off := r*d + j*spatial
					sc := float64(scale[c0+j])
					for i, g := range dy[off : off+spatial] {
						xh := (float64(x[off+i]) - mu) * inv
						dx[off+i] = T(inv * (sc*float64(g) - m1 - xh*m2))
					}
				}
			}
		}
	})
	if dscale == nil && dbias == nil {
		return
	}
	for c := 0; c < groups*cpg; c++ {
		s, sx := 0.0, 0.0
		for n := 0; n < rows/max(groups, 1); n++ {
			k := 2 * (n*groups*cpg + c) // row n·groups + c/cpg, channel c%cpg
			s += sums[k]
			sx += sums[k+1]
		}
		if dbias != nil {
			dbias[c] = T(s)
		}
		if dscale != nil {
			dscale[c] = T(sx)
		}
	}
}
