package run

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX GroupNormalization (opset 18 and 21): X [N, C, ...] split into
// num_groups groups of C/num_groups channels, each sample's group
// normalised over its channels and positions together, on ops.GroupNorm.
// At opset 21 scale and bias are per channel [C]; at opset 18 they are per
// group [num_groups], and each group's value is repeated over its
// channels (the opset 18 function body's reshape of X to
// [N, G, C/G·...]). stash_type 1 (float32 statistics, the default) is
// accepted; ops.GroupNorm accumulates its statistics in float64.
func init() {
	register("GroupNormalization", opDef{minOpset: 18, compile: compileGroupNorm})
}

func compileGroupNorm(c *ctx) (kernel, error) {
	if err := c.arity(3, 3, 1); err != nil {
		return nil, err
	}
	allowed := []string{"epsilon", "num_groups"}
	if c.n.opset >= 21 {
		allowed = append(allowed, "stash_type")
	}
	if err := c.n.allow(allowed...); err != nil {
		return nil, err
	}
	eps, err := c.epsilon()
	if err != nil {
		return nil, err
	}
	if _, ok := c.n.Attr("num_groups"); !ok {
		return nil, c.n.errorf("attribute \"num_groups\" is missing; expected it (it is required)")
	}
	g, err := c.n.intAttr("num_groups", 0)
	if err != nil {
		return nil, err
	}
	if g < 1 || g > 1<<30 {
		return nil, c.n.errorf("num_groups %d; expected a positive group count", g)
	}
	if st, err := c.n.intAttr("stash_type", 1); err != nil || st != 1 {
		if err != nil {
			return nil, err
		}
		return nil, c.n.errorf("stash_type %d is not supported; expected 1 (float32 statistics)", st)
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1, 2); err != nil {
		return nil, err
	}
	groups := int(g)
	x := c.in[0].shape
	if x != nil && len(x) < 2 {
		return nil, c.n.errorf("input has shape %s; expected [N, C, ...] of rank 2 or more", shapeStr(x))
	}
	if x != nil && x[1] >= 0 && x[1]%groups != 0 {
		return nil, c.n.errorf("input %s has %d channels; expected a multiple of num_groups %d", shapeStr(x), x[1], groups)
	}
	perGroup := c.n.opset < 21
	if perGroup {
		for i := 1; i < 3; i++ {
			if s := c.in[i].shape; !compatible(s, []int{groups}) {
				return nil, c.n.errorf("input %d %q has shape %s; expected [%d], one value per group (opset %d)", i, c.n.Inputs[i], shapeStr(s), groups, c.n.opset)
			}
		}
	} else if err := perChannel(c, x, 1, 2); err != nil {
		return nil, err
	}
	c.out[0] = info{elem: c.in[0].elem, shape: x}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		scale, bias := in[1], in[2]
		if perGroup {
			if in[0].Rank() < 2 {
				return nil, fmt.Errorf("input has shape %v; expected [N, C, ...] of rank 2 or more", in[0].Shape())
			}
			var err error
			if scale, err = repeatGroups(scale, groups, in[0].Dim(1)); err != nil {
				return nil, err
			}
			if bias, err = repeatGroups(bias, groups, in[0].Dim(1)); err != nil {
				return nil, err
			}
		}
		y, err := ops.GroupNorm(in[0], scale, bias, groups, float64(eps))
		return []*tensor.Tensor{y}, err
	}, nil
}

// repeatGroups makes opset 18's per-group scale or bias s [groups] the
// per-channel [channels] ops.GroupNorm takes, each group's value repeated
// over its channels/groups channels.
func repeatGroups(s *tensor.Tensor, groups, channels int) (*tensor.Tensor, error) {
	if s.Rank() != 1 || s.Dim(0) != groups || channels%groups != 0 {
		return nil, fmt.Errorf("scale or bias %v for %d channels; expected [%d], one value per group, with channels a multiple of %d", s.Shape(), channels, groups, groups)
	}
	out := tensor.Empty(s.DType(), channels)
	switch s.DType() {
	case tensor.Float32:
		repeatInto(out.Float32s(), s.Float32s(), channels/groups)
	case tensor.Float64:
		repeatInto(out.Float64s(), s.Float64s(), channels/groups)
	default:
		return nil, fmt.Errorf("scale or bias is %v; expected float32 or float64", s.DType())
	}
	return out, nil
}

func repeatInto[T float32 | float64](dst, src []T, n int) {
	for i := range dst {
		dst[i] = src[i/n]
	}
}
