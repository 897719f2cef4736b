package graph

import "github.com/plumbml/plumb/ops"

// The graph forms of ops' convolutions and pools over NCHW images. Each
// records the op on the inputs' tape; see the ops function of the same name
// for shapes, padding rules and the TF and PyTorch ops they follow.

// Conv2D returns the 2-D convolution of x [N, C, H, W] with weights
// w [O, C/groups, KH, KW] plus b [O]; b may be nil.
func Conv2D(x, w, b *Value, attrs ops.Conv2DAttrs) *Value {
	if b == nil {
		return apply(ops.Conv2DOp(attrs), x, w)
	}
	return apply(ops.Conv2DOp(attrs), x, w, b)
}

// Conv2DTranspose returns the transposed convolution of x [N, C, H, W]
// with weights w [C, O/groups, KH, KW] plus b [O]; b may be nil.
func Conv2DTranspose(x, w, b *Value, attrs ops.Conv2DTransposeAttrs) *Value {
	if b == nil {
		return apply(ops.Conv2DTransposeOp(attrs), x, w)
	}
	return apply(ops.Conv2DTransposeOp(attrs), x, w, b)
}

// MaxPool2D returns the 2-D max pool of x [N, C, H, W].
func MaxPool2D(x *Value, attrs ops.Pool2DAttrs) *Value { return apply(ops.MaxPool2DOp(attrs), x) }

// AvgPool2D returns the 2-D average pool of x [N, C, H, W], padding left
// out of each window's divisor unless attrs.CountIncludePad.
func AvgPool2D(x *Value, attrs ops.Pool2DAttrs) *Value { return apply(ops.AvgPool2DOp(attrs), x) }

// Conv3D returns the 3-D convolution of x [N, C, D, H, W] with
// w [O, C/groups, KD, KH, KW] plus the optional bias b [O] (nil for none).
func Conv3D(x, w, b *Value, attrs ops.Conv3DAttrs) *Value {
	if b == nil {
		return apply(ops.Conv3DOp(attrs), x, w)
	}
	return apply(ops.Conv3DOp(attrs), x, w, b)
}

// MaxPool3D returns the 3-D max pool of x [N, C, D, H, W].
func MaxPool3D(x *Value, attrs ops.Pool3DAttrs) *Value { return apply(ops.MaxPool3DOp(attrs), x) }

// AvgPool3D returns the 3-D average pool of x [N, C, D, H, W], padding left
// out of each window's divisor unless attrs.CountIncludePad.
func AvgPool3D(x *Value, attrs ops.Pool3DAttrs) *Value { return apply(ops.AvgPool3DOp(attrs), x) }

// GlobalAvgPool2D returns the mean of each channel of x [N, C, H, W] as [N, C].
func GlobalAvgPool2D(x *Value) *Value { return apply(ops.GlobalAvgPool2DOp(), x) }
