package run

import (
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX BatchNormalization at inference (training_mode 0: the running
// mean and variance normalise; ops.BatchNorm over axis 1) and
// LayerNormalization (opset 17: over the axes from axis to the last, on
// ops.LayerNorm; the Mean and InvStdDev outputs are not supported).
func init() {
	register("BatchNormalization", opDef{compile: compileBatchNorm})
	register("LayerNormalization", opDef{minOpset: 17, compile: compileLayerNorm})
}

func compileBatchNorm(c *ctx) (kernel, error) {
	if err := c.arity(5, 5, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("epsilon", "momentum", "training_mode"); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1, 2, 3, 4); err != nil {
		return nil, err
	}
	eps, err := c.n.floatAttr("epsilon", 1e-5)
	if err != nil {
		return nil, err
	}
	if tm, err := c.n.intAttr("training_mode", 0); err != nil || tm != 0 {
		if err != nil {
			return nil, err
		}
		return nil, c.n.errorf("training_mode %d is not supported; expected 0 (inference)", tm)
	}
	if eps <= 0 {
		return nil, c.n.errorf("epsilon %v; expected a positive epsilon", eps)
	}
	x := c.in[0]
	if x.shape != nil && len(x.shape) < 2 {
		return nil, c.n.errorf("X has shape %s; expected [N, C, ...]", shapeStr(x.shape))
	}
	for i := 1; i < 5; i++ {
		s := c.in[i].shape
		if s == nil || x.shape == nil {
			continue
		}
		if len(s) != 1 || (s[0] >= 0 && x.shape[1] >= 0 && s[0] != x.shape[1]) {
			return nil, c.n.errorf("input %d %q has shape %s for X %s; expected [%d], one value per channel", i, c.n.Inputs[i], shapeStr(s), shapeStr(x.shape), x.shape[1])
		}
	}
	c.out[0] = info{elem: x.elem, shape: x.shape}
	attrs := ops.BatchNormAttrs{Momentum: 0.9, Epsilon: float64(eps)}
	c.lower = lowerOp(ops.BatchNormOp(attrs))
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := ops.BatchNorm(in[0], in[1], in[2], in[3], in[4], attrs)
		return []*tensor.Tensor{y}, err
	}, nil
}

func compileLayerNorm(c *ctx) (kernel, error) {
	if err := c.arity(2, 3, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("axis", "epsilon", "stash_type"); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1, 2); err != nil {
		return nil, err
	}
	a, err := c.n.intAttr("axis", -1)
	if err != nil {
		return nil, err
	}
	eps, err := c.n.floatAttr("epsilon", 1e-5)
	if err != nil {
		return nil, err
	}
	r := c.rank(0)
	if r < 0 {
		return nil, c.n.errorf("the rank of X is unknown; expected it known at compile time")
	}
	axis, err := c.n.axis(a, r, "axis")
	if err != nil {
		return nil, err
	}
	c.out[0] = info{elem: c.in[0].elem, shape: c.in[0].shape}
	norm := c.in[0].shape[axis:]
	for i := 1; i < len(c.in); i++ {
		if s := c.in[i].shape; c.has(i) && !compatible(s, norm) {
			return nil, c.n.errorf("input %d %q has shape %s; expected %s, the normalised axes of X %s", i, c.n.Inputs[i], shapeStr(s), shapeStr(norm), shapeStr(c.in[0].shape))
		}
	}
	if s := c.in[0].shape; known(s) {
		dt, _ := runtimeDType(c.in[0].elem)
		c.lower = lowerLayerNorm(r-axis, float64(eps), dt, s[axis:])
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		beta := (*tensor.Tensor)(nil)
		if len(in) > 2 {
			beta = in[2]
		}
		if beta == nil {
			beta = tensor.ZerosLike(in[1])
		}
		y, err := ops.LayerNorm(in[0], in[1], beta, r-axis, float64(eps))
		return []*tensor.Tensor{y}, err
	}, nil
}

// lowerLayerNorm is LayerNormalization's plan form: layer_norm over the
// last axes of X with Scale and B, B zeros of dtype dt when absent.
func lowerLayerNorm(axes int, eps float64, dt tensor.DType, norm []int) lowerFn {
	return func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		beta := infer.Ref(-1)
		if len(in) > 2 {
			beta = in[2]
		}
		if beta < 0 {
			beta = b.Const(tensor.Zeros(dt, norm...))
		}
		return []infer.Ref{b.Op(ops.LayerNormOp(axes, eps), in[0], in[1], beta)}, nil
	}
}
