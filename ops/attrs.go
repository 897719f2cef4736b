package ops

// Attributed is an op that gives back its typed attributes (the <Op>Attrs
// its Spec's Make takes), the inverse of its Make: Make(op.Attrs()) makes
// the same op. Dispatch hands them, typed, to a device's kernel factory, so
// a device kernel is built from the CPU op's attributes however the CPU op
// was made (by its constructor, a graph function or Build). Every op with a
// registered device kernel must implement it (TestAttrsRoundTrip checks the
// inverse).
type Attributed interface {
	Attrs() any
}

func (o *binaryOp) Attrs() any { return NoAttrs{} }

func (o *reduceOp) Attrs() any { return ReduceAttrs{Axes: o.axes, KeepDims: o.keepDims} }

func (o *softmaxOp) Attrs() any { return SoftmaxAttrs{Axis: o.axis} }

func (o *softmaxXentOp) Attrs() any { return LossAttrs{Reduction: o.r} }

func (o *matmulOp) Attrs() any { return MatMulAttrs{TransposeA: o.transA, TransposeB: o.transB} }

func (linearOp) Attrs() any { return NoAttrs{} }

func (o *conv2dOp) Attrs() any { return o.attrs }

func (o *conv2dTransposeOp) Attrs() any { return o.attrs }

func (o *pool2dOp) Attrs() any { return o.attrs }

func (o *batchNormOp) Attrs() any { return o.a }

func (o *layerNormOp) Attrs() any { return LayerNormAttrs{NormAxes: o.axes, Epsilon: o.epsilon} }

func (o *rmsNormOp) Attrs() any { return RMSNormAttrs{Epsilon: o.epsilon} }

func (o *embeddingOp) Attrs() any { return EmbeddingAttrs{PaddingIdx: o.padding} }

func (o *attentionOp) Attrs() any { return o.a }

func (o *lstmOp) Attrs() any {
	if o.name == "lstm_cell" {
		return LSTMCellAttrs{Candidate: o.attrs.Candidate, Cell: o.attrs.Cell}
	}
	return o.attrs
}

func (o *gruOp) Attrs() any {
	if o.name == "gru_cell" {
		return GRUCellAttrs{ResetAfter: o.attrs.ResetAfter}
	}
	return o.attrs
}

func (o *sequencePoolOp) Attrs() any {
	return SequencePoolAttrs{Pool: o.kind, Pad: o.pad, Offsets: o.offsets}
}

func (o *sequenceSoftmaxOp) Attrs() any { return SequenceAttrs{Offsets: o.offsets} }

func (o *rowsOp) Attrs() any { return o.attrs }

func (o *sequenceConcatOp) Attrs() any { return SequenceConcatAttrs{Offsets: o.offA, OffsetsB: o.offB} }

func (o *reshapeOp) Attrs() any { return ReshapeAttrs{Shape: o.shape} }

func (o *sequenceConvOp) Attrs() any {
	return SequenceConvAttrs{Offsets: o.offsets, ContextStart: o.start, ContextLength: o.length}
}

func (o *sequenceConvPoolMaxOp) Attrs() any { return o.conv.Attrs() }

func (o *concatOp) Attrs() any { return ConcatAttrs{Axis: o.axis} }

func (o *sliceOp) Attrs() any { return SliceAttrs{Axis: o.axis, Begin: o.from, End: o.to} }

func (o *rnnFinalStateOp) Attrs() any {
	return RNNFinalStateAttrs{Offsets: o.offsets, Reverse: o.reverse}
}
