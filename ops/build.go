package ops

import (
	"fmt"
	"sort"

	"github.com/plumbml/plumb/tensor"
)

// Attrs holds the attributes of any op, named as the parity goldens'
// case.json names them (TensorFlow's names where TensorFlow has the
// attribute). It is the one description from which Build makes an op, so
// that the parity harness, the gradient checks and the device tests build
// ops the same way. Each op reads only its own fields; the zero value of a
// field is the op's default (Padding "" is explicit padding, Reduction ""
// is the mean).
type Attrs struct {
	// Elementwise: leaky_relu's and elu's alpha, clip's bounds.
	Alpha float64 `json:"alpha"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`

	// matmul.
	TransposeA bool `json:"transpose_a"`
	TransposeB bool `json:"transpose_b"`

	// Reductions (nil axes: every axis), gather, concat, slice, softmax,
	// reshape and transpose.
	Axes     []int `json:"axes"`
	KeepDims bool  `json:"keepdims"`
	Axis     int   `json:"axis"`
	Begin    int   `json:"begin"`
	End      int   `json:"end"`
	Shape    []int `json:"shape"`
	Perm     []int `json:"perm"`

	// Losses: "mean" (or ""), "sum" or "none".
	Reduction string `json:"reduction"`

	// embedding's padding index (negative: none).
	PaddingIdx int `json:"padding_idx"`

	// Ragged sequence ops: the offsets of the (first) ragged input, of
	// sequence_concat's second, sequence_pool's pooling and pad value, and
	// sequence_slice's per-sequence starts and lengths.
	Offsets  []int   `json:"offsets"`
	OffsetsB []int   `json:"offsets_b"`
	Pool     string  `json:"pool"`
	Pad      float64 `json:"pad"`
	Starts   []int   `json:"starts"`
	Lengths  []int   `json:"lengths"`

	// Attention: key-padding lengths, the causal mask and the score scale
	// (0: 1/sqrt(d)).
	KeyLengths []int   `json:"key_lengths"`
	Causal     bool    `json:"causal"`
	Scale      float64 `json:"scale"`

	// Recurrent ops: reverse processing (Keras go_backwards) and the GRU's
	// reset_after form.
	Reverse    bool `json:"reverse"`
	ResetAfter bool `json:"reset_after"`
	// The LSTM's candidate and cell-output activations (tanh when zero);
	// not in the goldens, which record TensorFlow's tanh LSTM.
	Candidate RNNActivation `json:"-"`
	Cell      RNNActivation `json:"-"`

	// linear_softmax_cross_entropy's rows per chunk (0: its default).
	ChunkRows int `json:"chunk_rows"`

	// sequence_conv's context window.
	ContextStart  int `json:"context_start"`
	ContextLength int `json:"context_length"`

	// Normalisation and dropout. Momentum and Epsilon are batch norm's
	// (layer norm's Epsilon too); Seed seeds dropout's mask, which comes
	// from Plumb's generator, not from the case file.
	Training bool    `json:"training"`
	NormAxes int     `json:"norm_axes"`
	Momentum float64 `json:"momentum"`
	Epsilon  float64 `json:"epsilon"`
	Rate     float64 `json:"rate"`
	Seed     uint64  `json:"-"`

	// Convolutions and pools: strides, dilations and kernel size as
	// [h, w]; padding "SAME", "VALID" or "EXPLICIT" (or "") with Pads as
	// [top, bottom, left, right]; conv2d_transpose's extra output rows and
	// columns as [h, w].
	Strides       []int  `json:"strides"`
	Dilations     []int  `json:"dilations"`
	Padding       string `json:"padding"`
	Pads          []int  `json:"pads"`
	Groups        int    `json:"groups"`
	Kernel        []int  `json:"kernel"`
	OutputPadding []int  `json:"output_padding"`
}

// Build returns the op called name with the attributes a. An unknown name
// or attributes that do not parse (an unknown padding or reduction) are an
// error naming the op; attributes that parse but do not fit the inputs
// fail later, in Forward, as for an op made by its constructor.
func Build(name string, a Attrs) (Op, error) {
	b, ok := builders[name]
	if !ok {
		return nil, fmt.Errorf("ops.Build: no op %q", name)
	}
	op, err := b(a)
	if err != nil {
		return nil, fmt.Errorf("ops.Build %s: %w", name, err)
	}
	return op, nil
}

// Buildable returns the names Build knows, sorted.
func Buildable() []string {
	names := make([]string, 0, len(builders))
	for n := range builders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// builders maps each op's name to its construction from Attrs. The
// elementwise ops and reductions are added by init from their tables.
var builders = map[string]func(a Attrs) (Op, error){
	"matmul":           func(a Attrs) (Op, error) { return MatMulOp(a.TransposeA, a.TransposeB), nil },
	"linear":           func(a Attrs) (Op, error) { return LinearOp(), nil },
	"linear_concat":    func(a Attrs) (Op, error) { return LinearConcatOp(), nil },
	"gather":           func(a Attrs) (Op, error) { return GatherOp(a.Axis), nil },
	"where":            func(a Attrs) (Op, error) { return WhereOp(), nil },
	"embedding":        func(a Attrs) (Op, error) { return EmbeddingOp(a.PaddingIdx), nil },
	"sequence_reverse": func(a Attrs) (Op, error) { return SequenceReverseOp(a.Offsets), nil },
	"sequence_expand":  func(a Attrs) (Op, error) { return SequenceExpandOp(a.Offsets), nil },
	"sequence_softmax": func(a Attrs) (Op, error) { return SequenceSoftmaxOp(a.Offsets), nil },
	"sequence_concat":  func(a Attrs) (Op, error) { return SequenceConcatOp(a.Offsets, a.OffsetsB), nil },
	"sequence_slice":   func(a Attrs) (Op, error) { return SequenceSliceOp(a.Offsets, a.Starts, a.Lengths), nil },
	"sequence_pool": func(a Attrs) (Op, error) {
		return SequencePoolOp(SequencePoolType(a.Pool), a.Pad, a.Offsets), nil
	},
	"sequence_conv": func(a Attrs) (Op, error) {
		return SequenceConvOp(a.Offsets, a.ContextStart, a.ContextLength), nil
	},
	"sequence_conv_pool_max": func(a Attrs) (Op, error) {
		return SequenceConvPoolMaxOp(a.Offsets, a.ContextStart, a.ContextLength), nil
	},
	"attention":          func(a Attrs) (Op, error) { return AttentionOp(a.Attention()), nil },
	"additive_attention": func(a Attrs) (Op, error) { return AdditiveAttentionOp(a.Attention()), nil },
	"lstm": func(a Attrs) (Op, error) {
		return LSTMOp(LSTMAttrs{Offsets: a.Offsets, Reverse: a.Reverse, Candidate: a.Candidate, Cell: a.Cell}), nil
	},
	"lstm_cell":                    func(a Attrs) (Op, error) { return LSTMCellActsOp(a.Candidate, a.Cell), nil },
	"linear_softmax_cross_entropy": func(a Attrs) (Op, error) { return LinearSoftmaxCrossEntropyOp(a.ChunkRows), nil },
	"lstm_projected": func(a Attrs) (Op, error) {
		return LSTMProjectedOp(LSTMAttrs{Offsets: a.Offsets, Reverse: a.Reverse}), nil
	},
	"gru": func(a Attrs) (Op, error) {
		return GRUOp(GRUAttrs{Offsets: a.Offsets, Reverse: a.Reverse, ResetAfter: a.ResetAfter}), nil
	},
	"gru_cell":          func(a Attrs) (Op, error) { return GRUCellOp(a.ResetAfter), nil },
	"rnn_final_state":   func(a Attrs) (Op, error) { return RNNFinalStateOp(a.Offsets, a.Reverse), nil },
	"crf":               func(a Attrs) (Op, error) { return CRFOp(a.Offsets), nil },
	"reshape":           func(a Attrs) (Op, error) { return ReshapeOp(a.Shape...), nil },
	"transpose":         func(a Attrs) (Op, error) { return TransposeOp(a.Perm...), nil },
	"concat":            func(a Attrs) (Op, error) { return ConcatOp(a.Axis), nil },
	"slice":             func(a Attrs) (Op, error) { return SliceOp(a.Axis, a.Begin, a.End), nil },
	"softmax":           func(a Attrs) (Op, error) { return SoftmaxOp(a.Axis), nil },
	"log_softmax":       func(a Attrs) (Op, error) { return LogSoftmaxOp(a.Axis), nil },
	"layer_norm":        func(a Attrs) (Op, error) { return LayerNormOp(a.NormAxes, a.Epsilon), nil },
	"global_avg_pool2d": func(a Attrs) (Op, error) { return GlobalAvgPool2DOp(), nil },
	"batch_norm":        func(a Attrs) (Op, error) { return BatchNormOp(a.BatchNorm()), nil },
	"dropout":           func(a Attrs) (Op, error) { return DropoutOp(a.Rate, tensor.NewRNG(a.Seed)), nil },

	"softmax_cross_entropy":      lossBuilder(SoftmaxCrossEntropyOp),
	"softmax_cross_entropy_soft": lossBuilder(SoftmaxCrossEntropySoftOp),
	"sigmoid_cross_entropy":      lossBuilder(SigmoidCrossEntropyOp),
	"mse":                        lossBuilder(MSEOp),

	"conv2d": func(a Attrs) (Op, error) {
		c, err := a.Conv2D()
		return Conv2DOp(c), err
	},
	"conv2d_transpose": func(a Attrs) (Op, error) {
		c, err := a.Conv2DTranspose()
		return Conv2DTransposeOp(c), err
	},
	"max_pool2d": func(a Attrs) (Op, error) {
		p, err := a.Pool2D()
		return MaxPool2DOp(p), err
	},
	"avg_pool2d": func(a Attrs) (Op, error) {
		p, err := a.Pool2D()
		return AvgPool2DOp(p), err
	},
}

func init() {
	for name := range binaryFns {
		builders[name] = func(Attrs) (Op, error) { return BinaryOp(name), nil }
	}
	for name := range unaryFns {
		builders[name] = func(a Attrs) (Op, error) { return UnaryOp(name, a.UnaryParams(name)...), nil }
	}
	for _, name := range reduceNames {
		builders[name] = func(a Attrs) (Op, error) { return ReduceOp(name, a.Axes, a.KeepDims), nil }
	}
}

// lossBuilder builds a loss op with the reduction a names.
func lossBuilder(mk func(LossReduction) Op) func(a Attrs) (Op, error) {
	return func(a Attrs) (Op, error) {
		r, err := a.LossReduction()
		return mk(r), err
	}
}

// UnaryParams returns the scalar attributes of the elementwise op name:
// alpha for leaky_relu and elu, lo and hi for clip, none for the others.
func (a Attrs) UnaryParams(name string) []float64 {
	switch name {
	case "clip":
		return []float64{a.Lo, a.Hi}
	case "leaky_relu", "elu":
		return []float64{a.Alpha}
	}
	return nil
}

// LossReduction returns the reduction a names.
func (a Attrs) LossReduction() (LossReduction, error) {
	switch a.Reduction {
	case "", "mean":
		return LossMean, nil
	case "sum":
		return LossSum, nil
	case "none":
		return LossNone, nil
	}
	return 0, fmt.Errorf("unknown reduction %q (want mean, sum or none)", a.Reduction)
}

// Attention returns the attention ops' attributes.
func (a Attrs) Attention() AttentionAttrs {
	return AttentionAttrs{KeyLengths: a.KeyLengths, Causal: a.Causal, Scale: a.Scale}
}

// BatchNorm returns batch norm's attributes.
func (a Attrs) BatchNorm() BatchNormAttrs {
	return BatchNormAttrs{Momentum: a.Momentum, Epsilon: a.Epsilon, Training: a.Training}
}

// Conv2D returns conv2d's attributes.
func (a Attrs) Conv2D() (Conv2DAttrs, error) {
	mode, pad, err := a.padding()
	return Conv2DAttrs{Stride: pair(a.Strides), Dilation: pair(a.Dilations), Pad: pad, Padding: mode, Groups: a.Groups}, err
}

// Conv2DTranspose returns conv2d_transpose's attributes.
func (a Attrs) Conv2DTranspose() (Conv2DTransposeAttrs, error) {
	c, err := a.Conv2D()
	return Conv2DTransposeAttrs{Conv2DAttrs: c, OutputPadding: pair(a.OutputPadding)}, err
}

// Pool2D returns the 2-D pools' attributes.
func (a Attrs) Pool2D() (Pool2DAttrs, error) {
	mode, pad, err := a.padding()
	return Pool2DAttrs{Kernel: pair(a.Kernel), Stride: pair(a.Strides), Pad: pad, Padding: mode}, err
}

// padding maps TF's padding names onto the pad modes and checks the pads.
func (a Attrs) padding() (PadMode, [4]int, error) {
	var pad [4]int
	switch a.Padding {
	case "SAME":
		return PadSame, pad, nil
	case "VALID":
		return PadValid, pad, nil
	case "EXPLICIT", "":
		if len(a.Pads) != 4 && (a.Padding != "" || len(a.Pads) != 0) {
			return 0, pad, fmt.Errorf("explicit padding wants pads [top, bottom, left, right], got %v", a.Pads)
		}
		copy(pad[:], a.Pads)
		return PadExplicit, pad, nil
	}
	return 0, pad, fmt.Errorf("unknown padding %q (want SAME, VALID or EXPLICIT)", a.Padding)
}

// pair reads an [h, w] attribute; absent is {0, 0}, which the ops read as
// their default.
func pair(s []int) [2]int {
	var p [2]int
	copy(p[:], s)
	return p
}
