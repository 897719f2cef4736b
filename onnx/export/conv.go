package export

import (
	"fmt"

	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/ops"
)

// Convolution, pooling and inference batch norm on NCHW images, whose
// layout ONNX shares. Plumb's padding (top, bottom, left, right) becomes
// ONNX's pads (begins then ends: top, left, bottom, right); TF's SAME is
// resolved for the example's image size, which the export fixes.
func init() {
	register("conv2d", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.Conv2DAttrs)
		x, w := c.in[0], c.in[1]
		if err := imageInput(c); err != nil {
			return nil, err
		}
		for _, v := range c.vs[1:] {
			if !v.konst {
				return nil, fmt.Errorf("the filter or bias is computed from the inputs; expected constants")
			}
		}
		stride, dil := norm2(a.Stride, 1), norm2(a.Dilation, 1)
		pad, err := pads(a.Padding, a.Pad, x.Dim(2), x.Dim(3), w.Dim(2), w.Dim(3), stride, dil)
		if err != nil {
			return nil, err
		}
		groups := max(a.Groups, 1)
		names := []string{c.vs[0].name}
		for _, v := range c.vs[1:] {
			names = append(names, v.name)
		}
		return &val{batch: c.vs[0].batch, name: e.apply("Conv", names,
			attrInts("kernel_shape", int64(w.Dim(2)), int64(w.Dim(3))),
			attrInts("strides", stride[0], stride[1]),
			attrInts("dilations", dil[0], dil[1]),
			attrInts("pads", pad...),
			attrInt("group", int64(groups)))}, nil
	})
	pool := func(opType string) translator {
		return func(e *exporter, c call) (*val, error) {
			a := c.attrs().(ops.Pool2DAttrs)
			if err := imageInput(c); err != nil {
				return nil, err
			}
			stride := [2]int64{int64(a.Stride[0]), int64(a.Stride[1])}
			for i := range stride {
				if stride[i] == 0 {
					stride[i] = int64(a.Kernel[i])
				}
			}
			dil := norm2(a.Dilation, 1)
			pad, err := pads(a.Padding, a.Pad, c.in[0].Dim(2), c.in[0].Dim(3), a.Kernel[0], a.Kernel[1], stride, dil)
			if err != nil {
				return nil, err
			}
			attrs := []*pb.AttributeProto{
				attrInts("kernel_shape", int64(a.Kernel[0]), int64(a.Kernel[1])),
				attrInts("strides", stride[0], stride[1]),
				attrInts("pads", pad...),
				attrInt("ceil_mode", int64(b2i(a.CeilMode))),
			}
			switch {
			case opType == "MaxPool":
				attrs = append(attrs, attrInts("dilations", dil[0], dil[1]))
			case dil != [2]int64{1, 1}:
				return nil, fmt.Errorf("dilation %v: AveragePool has dilations from opset 19 only; expected none at opset %d", a.Dilation, Opset)
			default:
				attrs = append(attrs, attrInt("count_include_pad", int64(b2i(a.CountIncludePad))))
			}
			return &val{batch: c.vs[0].batch, name: e.apply(opType, []string{c.vs[0].name}, attrs...)}, nil
		}
	}
	register("max_pool2d", pool("MaxPool"))
	register("avg_pool2d", pool("AveragePool"))
	register("global_avg_pool2d", func(e *exporter, c call) (*val, error) {
		if err := imageInput(c); err != nil {
			return nil, err
		}
		// GlobalAveragePool keeps [N, C, 1, 1]; Plumb's is [N, C].
		p := e.apply("GlobalAveragePool", []string{c.vs[0].name})
		return &val{batch: c.vs[0].batch, name: e.apply("Flatten", []string{p}, attrInt("axis", 1))}, nil
	})
	register("batch_norm", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.BatchNormAttrs)
		if a.Training {
			return nil, fmt.Errorf("batch norm in training mode; expected inference (the eval tape's moving statistics)")
		}
		x := c.vs[0]
		if x.seq != nil || c.in[0].Rank() < 2 {
			return nil, fmt.Errorf("input is not [N, C, ...]; expected a dense batch of rank 2 or more")
		}
		names := []string{x.name}
		for _, v := range c.vs[1:] {
			if !v.konst {
				return nil, fmt.Errorf("the scale, shift or statistics are computed from the inputs; expected constants")
			}
			names = append(names, v.name)
		}
		// ONNX's inputs are X, scale, B, input_mean, input_var: Plumb's order.
		return &val{batch: x.batch, name: e.apply("BatchNormalization", names, attrFloat("epsilon", a.Epsilon))}, nil
	})
}

// imageInput checks the call's input 0 is a dense [N, C, H, W] batch.
func imageInput(c call) error {
	if c.vs[0].seq != nil || c.in[0].Rank() != 4 {
		return fmt.Errorf("input is not a dense [N, C, H, W] batch")
	}
	return nil
}

// norm2 returns a pair with zeros replaced by def, as int64.
func norm2(a [2]int, def int) [2]int64 {
	out := [2]int64{int64(a[0]), int64(a[1])}
	for i := range out {
		if out[i] == 0 {
			out[i] = int64(def)
		}
	}
	return out
}

// pads returns ONNX's pads (top, left, bottom, right) for Plumb's padding
// mode and (top, bottom, left, right) pad on an h×w input.
func pads(mode ops.PadMode, pad [4]int, h, w, kh, kw int, stride, dil [2]int64) ([]int64, error) {
	switch mode {
	case ops.PadValid:
		pad = [4]int{}
	case ops.PadSame:
		var err error
		pad, err = ops.SamePadding(h, w, kh, kw, int(stride[0]), int(stride[1]), int(dil[0]), int(dil[1]))
		if err != nil {
			return nil, err
		}
	}
	return []int64{int64(pad[0]), int64(pad[2]), int64(pad[1]), int64(pad[3])}, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
