package ops

// Attributed is an op that gives back its attributes as Attrs, the inverse
// of Build: Build(op.Name(), op.Attrs()) makes the same op. Dispatch hands
// them to a device's kernel factory, so a device kernel is built from the
// CPU op's attributes however the CPU op was made (by its constructor, a
// graph function or Build). Every op with a registered device kernel must
// implement it (TestAttrsRoundTrip checks the inverse).
type Attributed interface {
	Attrs() Attrs
}

func (o *unaryOp) Attrs() Attrs {
	switch o.name {
	case "clip":
		return Attrs{Lo: o.p[0], Hi: o.p[1]}
	case "leaky_relu", "elu":
		return Attrs{Alpha: o.p[0]}
	}
	return Attrs{}
}

func (o *binaryOp) Attrs() Attrs { return Attrs{} }

func (o *reduceOp) Attrs() Attrs { return Attrs{Axes: o.axes, KeepDims: o.keepDims} }

func (o *softmaxOp) Attrs() Attrs { return Attrs{Axis: o.axis} }

func (o *softmaxXentOp) Attrs() Attrs { return Attrs{Reduction: o.r.attr()} }

// attr is the reduction's name in Attrs.
func (r LossReduction) attr() string {
	switch r {
	case LossSum:
		return "sum"
	case LossNone:
		return "none"
	}
	return "mean"
}

func (o *matmulOp) Attrs() Attrs { return Attrs{TransposeA: o.transA, TransposeB: o.transB} }

func (linearOp) Attrs() Attrs { return Attrs{} }

func (o *conv2dOp) Attrs() Attrs { return convAttrs(o.attrs) }

func (o *conv2dTransposeOp) Attrs() Attrs {
	a := convAttrs(o.attrs.Conv2DAttrs)
	a.OutputPadding = o.attrs.OutputPadding[:]
	return a
}

func convAttrs(c Conv2DAttrs) Attrs {
	a := Attrs{Strides: c.Stride[:], Dilations: c.Dilation[:], Groups: c.Groups}
	a.Padding, a.Pads = padAttrs(c.Padding, c.Pad)
	return a
}

func (o *pool2dOp) Attrs() Attrs {
	a := Attrs{Kernel: o.attrs.Kernel[:], Strides: o.attrs.Stride[:]}
	a.Padding, a.Pads = padAttrs(o.attrs.Padding, o.attrs.Pad)
	return a
}

// padAttrs is the inverse of Attrs.padding.
func padAttrs(m PadMode, pad [4]int) (string, []int) {
	switch m {
	case PadSame:
		return "SAME", nil
	case PadValid:
		return "VALID", nil
	}
	return "EXPLICIT", pad[:]
}

func (o *batchNormOp) Attrs() Attrs {
	return Attrs{Momentum: o.a.Momentum, Epsilon: o.a.Epsilon, Training: o.a.Training}
}

func (o *layerNormOp) Attrs() Attrs { return Attrs{NormAxes: o.axes, Epsilon: o.epsilon} }

func (o *embeddingOp) Attrs() Attrs { return Attrs{PaddingIdx: o.padding} }

func (o *attentionOp) Attrs() Attrs {
	return Attrs{KeyLengths: o.a.KeyLengths, Causal: o.a.Causal, Scale: o.a.Scale}
}

func (o *lstmOp) Attrs() Attrs {
	a := o.attrs
	return Attrs{Offsets: a.Offsets, Reverse: a.Reverse, Candidate: a.Candidate, Cell: a.Cell}
}

func (o *gruOp) Attrs() Attrs {
	return Attrs{Offsets: o.attrs.Offsets, Reverse: o.attrs.Reverse, ResetAfter: o.attrs.ResetAfter}
}

func (o *sequencePoolOp) Attrs() Attrs {
	return Attrs{Pool: string(o.kind), Pad: o.pad, Offsets: o.offsets}
}

func (o *sequenceSoftmaxOp) Attrs() Attrs { return Attrs{Offsets: o.offsets} }

func (o *rowsOp) Attrs() Attrs { return o.attrs }

func (o *sequenceConcatOp) Attrs() Attrs { return Attrs{Offsets: o.offA, OffsetsB: o.offB} }

func (o *reshapeOp) Attrs() Attrs { return Attrs{Shape: o.shape} }
