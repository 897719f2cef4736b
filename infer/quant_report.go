package infer

import (
	"errors"
	"fmt"
	"math"

	"github.com/plumbml/plumb/tensor"
)

// LayerError compares one int8 stage's output with the float32 graph's
// value there, on the same input: the accuracy report of plumb quantize
// (the per-layer comparison of ONNX Runtime's qdq_loss_debug and
// PyTorch's Numeric Suite).
type LayerError struct {
	Layer  string  // the layer (or op) name
	Op     string  // conv2d, linear, max_pool2d, relu or flatten
	Cosine float64 // cosine similarity of the int8 output and the float32 one
	MaxAbs float64 // the largest absolute difference
	MaxRef float64 // the float32 output's largest magnitude, for scale
}

// Report runs the float32 graph and each int8 segment on in and returns
// every int8 stage's error against the float32 value it replaces. Each
// segment starts from the float32 input it would see, so the errors
// within a segment accumulate, as they do in the int8 plan, and do not
// carry over from an earlier segment.
func (q *Quantized) Report(in ...*tensor.Tensor) ([]LayerError, error) {
	if q == nil || q.prep == nil {
		return nil, errors.New("infer: Report of a Quantized that Quantize did not make")
	}
	fg := q.prep.clone()
	fg.outputs = nil
	for _, s := range q.segs {
		fg.outputs = append(fg.outputs, s.inRef)
		if s.resRef >= 0 {
			fg.outputs = append(fg.outputs, s.resRef)
		}
		for _, st := range s.stages {
			fg.outputs = append(fg.outputs, st.ref)
		}
	}
	plan, err := fg.Compile(Options{NoFusion: true})
	if err != nil {
		return nil, fmt.Errorf("infer: Report: %w", err)
	}
	outs, err := plan.Forward(in...)
	if err != nil {
		return nil, fmt.Errorf("infer: Report: %w", err)
	}
	val := map[Ref]*tensor.Tensor{}
	for i, r := range fg.outputs {
		val[r] = outs[i]
	}
	var rep []LayerError
	for _, s := range q.segs {
		y := make([]float32, shapeSize(s.out))
		var res []float32
		if s.resRef >= 0 {
			res = val[s.resRef].Float32s()
		}
		err := s.run(val[s.inRef].Float32s(), res, y, func(st *qStage, v []float32) {
			rep = append(rep, compareOutputs(st, v, val[st.ref].Float32s()))
		})
		if err != nil {
			return nil, fmt.Errorf("infer: Report: %w", err)
		}
	}
	return rep, nil
}

var stageOps = map[stageKind]string{stConv: "conv2d", stLinear: "linear", stPool: "max_pool2d", stRelu: "relu", stFlatten: "flatten", stAdd: "add", stGAP: "global_avg_pool2d"}

func compareOutputs(st *qStage, got, want []float32) LayerError {
	e := LayerError{Layer: st.layer, Op: stageOps[st.kind]}
	var gw, gg, ww float64
	for i, w := range want {
		a, b := float64(got[i]), float64(w)
		gw, gg, ww = gw+a*b, gg+a*a, ww+b*b
		e.MaxAbs = max(e.MaxAbs, math.Abs(a-b))
		e.MaxRef = max(e.MaxRef, math.Abs(b))
	}
	switch {
	case gg == 0 && ww == 0:
		e.Cosine = 1
	case gg == 0 || ww == 0:
		e.Cosine = 0
	default:
		e.Cosine = gw / math.Sqrt(gg*ww)
	}
	return e
}
