package parity

import (
	"fmt"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// opBuilders build, from a case's attrs, the Plumb op its name stands for,
// through ops' public constructors. The elementwise ops and reductions are
// added by init from their name lists below.
var opBuilders = map[string]func(c *Case) (ops.Op, error){
	"matmul":    func(c *Case) (ops.Op, error) { return ops.MatMulOp(c.Attrs.TransposeA, c.Attrs.TransposeB), nil },
	"linear":    func(c *Case) (ops.Op, error) { return ops.LinearOp(), nil },
	"gather":    func(c *Case) (ops.Op, error) { return ops.GatherOp(c.Attrs.Axis), nil },
	"where":     func(c *Case) (ops.Op, error) { return ops.WhereOp(), nil },
	"embedding": func(c *Case) (ops.Op, error) { return ops.EmbeddingOp(c.Attrs.PaddingIdx), nil },
	"sequence_pool": func(c *Case) (ops.Op, error) {
		return ops.SequencePoolOp(ops.SequencePoolType(c.Attrs.Pool), c.Attrs.Pad, c.Attrs.Offsets), nil
	},
	"sequence_reverse": func(c *Case) (ops.Op, error) { return ops.SequenceReverseOp(c.Attrs.Offsets), nil },
	"sequence_slice": func(c *Case) (ops.Op, error) {
		return ops.SequenceSliceOp(c.Attrs.Offsets, c.Attrs.Starts, c.Attrs.Lengths), nil
	},
	"sequence_expand": func(c *Case) (ops.Op, error) { return ops.SequenceExpandOp(c.Attrs.Offsets), nil },
	"sequence_concat": func(c *Case) (ops.Op, error) { return ops.SequenceConcatOp(c.Attrs.Offsets, c.Attrs.OffsetsB), nil },
	"attention": func(c *Case) (ops.Op, error) {
		return ops.AttentionOp(ops.AttentionAttrs{KeyLengths: c.Attrs.KeyLengths, Causal: c.Attrs.Causal, Scale: c.Attrs.Scale}), nil
	},
	"additive_attention": func(c *Case) (ops.Op, error) {
		return ops.AdditiveAttentionOp(ops.AttentionAttrs{KeyLengths: c.Attrs.KeyLengths, Causal: c.Attrs.Causal}), nil
	},
	"sequence_softmax": func(c *Case) (ops.Op, error) { return ops.SequenceSoftmaxOp(c.Attrs.Offsets), nil },
	"sequence_conv": func(c *Case) (ops.Op, error) {
		return ops.SequenceConvOp(c.Attrs.Offsets, c.Attrs.ContextStart, c.Attrs.ContextLength), nil
	},
	"lstm": func(c *Case) (ops.Op, error) {
		return ops.LSTMOp(ops.LSTMAttrs{Offsets: c.Attrs.Offsets, Reverse: c.Attrs.Reverse}), nil
	},
	"lstm_cell": func(c *Case) (ops.Op, error) { return ops.LSTMCellOp(), nil },
	"gru": func(c *Case) (ops.Op, error) {
		return ops.GRUOp(ops.GRUAttrs{Offsets: c.Attrs.Offsets, Reverse: c.Attrs.Reverse, ResetAfter: c.Attrs.ResetAfter}), nil
	},
	"gru_cell":        func(c *Case) (ops.Op, error) { return ops.GRUCellOp(c.Attrs.ResetAfter), nil },
	"rnn_final_state": func(c *Case) (ops.Op, error) { return ops.RNNFinalStateOp(c.Attrs.Offsets, c.Attrs.Reverse), nil },
	"crf":             func(c *Case) (ops.Op, error) { return ops.CRFOp(c.Attrs.Offsets), nil },
	"linear_softmax_cross_entropy": func(c *Case) (ops.Op, error) {
		return ops.LinearSoftmaxCrossEntropyOp(c.Attrs.ChunkRows), nil
	},
	"reshape":           func(c *Case) (ops.Op, error) { return ops.ReshapeOp(c.Attrs.Shape...), nil },
	"transpose":         func(c *Case) (ops.Op, error) { return ops.TransposeOp(c.Attrs.Perm...), nil },
	"concat":            func(c *Case) (ops.Op, error) { return ops.ConcatOp(c.Attrs.Axis), nil },
	"slice":             func(c *Case) (ops.Op, error) { return ops.SliceOp(c.Attrs.Axis, c.Attrs.Begin, c.Attrs.End), nil },
	"softmax":           func(c *Case) (ops.Op, error) { return ops.SoftmaxOp(c.Attrs.Axis), nil },
	"log_softmax":       func(c *Case) (ops.Op, error) { return ops.LogSoftmaxOp(c.Attrs.Axis), nil },
	"layer_norm":        func(c *Case) (ops.Op, error) { return ops.LayerNormOp(c.Attrs.NormAxes, c.Attrs.Epsilon), nil },
	"global_avg_pool2d": func(c *Case) (ops.Op, error) { return ops.GlobalAvgPool2DOp(), nil },
	"batch_norm": func(c *Case) (ops.Op, error) {
		return ops.BatchNormOp(ops.BatchNormAttrs{Momentum: c.Attrs.Momentum, Epsilon: c.Attrs.Epsilon, Training: c.Attrs.Training}), nil
	},
	// The mask comes from Plumb's RNG, not TF's; see dropoutPairs.
	"dropout":                    func(c *Case) (ops.Op, error) { return ops.DropoutOp(c.Attrs.Rate, tensor.NewRNG(uint64(c.Seed))), nil },
	"softmax_cross_entropy":      lossBuilder(ops.SoftmaxCrossEntropyOp),
	"softmax_cross_entropy_soft": lossBuilder(ops.SoftmaxCrossEntropySoftOp),
	"sigmoid_cross_entropy":      lossBuilder(ops.SigmoidCrossEntropyOp),
	"mse":                        lossBuilder(ops.MSEOp),
	"conv2d": func(c *Case) (ops.Op, error) {
		a, err := convAttrs(c)
		return ops.Conv2DOp(a), err
	},
	"conv2d_transpose": func(c *Case) (ops.Op, error) {
		a, err := convAttrs(c)
		return ops.Conv2DTransposeOp(ops.Conv2DTransposeAttrs{Conv2DAttrs: a, OutputPadding: pair2(c.Attrs.OutputPadding)}), err
	},
	"max_pool2d": func(c *Case) (ops.Op, error) {
		a, err := poolAttrs(c)
		return ops.MaxPool2DOp(a), err
	},
	"avg_pool2d": func(c *Case) (ops.Op, error) {
		a, err := poolAttrs(c)
		return ops.AvgPool2DOp(a), err
	},
}

// The elementwise ops and reductions that ops builds by name.
var (
	binaryOps = []string{"add", "sub", "mul", "div", "pow", "maximum", "minimum"}
	unaryOps  = []string{"neg", "exp", "log", "sqrt", "rsqrt", "square", "abs", "clip", "relu", "relu6",
		"leaky_relu", "elu", "gelu", "gelu_tanh", "sigmoid", "tanh", "softplus", "swish"}
	reduceOps = []string{"sum", "mean", "max", "min", "variance", "logsumexp"}
)

func init() {
	for _, name := range binaryOps {
		opBuilders[name] = func(c *Case) (ops.Op, error) { return ops.BinaryOp(c.Op), nil }
	}
	for _, name := range unaryOps {
		opBuilders[name] = func(c *Case) (ops.Op, error) {
			switch c.Op {
			case "clip":
				return ops.UnaryOp(c.Op, c.Attrs.Lo, c.Attrs.Hi), nil
			case "leaky_relu", "elu":
				return ops.UnaryOp(c.Op, c.Attrs.Alpha), nil
			}
			return ops.UnaryOp(c.Op), nil
		}
	}
	for _, name := range reduceOps {
		opBuilders[name] = func(c *Case) (ops.Op, error) { return ops.ReduceOp(c.Op, c.Attrs.Axes, c.Attrs.KeepDims), nil }
	}
}

// lossBuilder builds a loss op from the case's "reduction".
func lossBuilder(mk func(ops.LossReduction) ops.Op) func(c *Case) (ops.Op, error) {
	return func(c *Case) (ops.Op, error) {
		r, ok := map[string]ops.LossReduction{"mean": ops.LossMean, "sum": ops.LossSum, "none": ops.LossNone}[c.Attrs.Reduction]
		if !ok {
			return nil, fmt.Errorf("unknown reduction %q", c.Attrs.Reduction)
		}
		return mk(r), nil
	}
}

// pair2 reads an [h, w] attr; absent is {0, 0}, which ops read as the default.
func pair2(s []int) [2]int {
	var p [2]int
	copy(p[:], s)
	return p
}

// padMode maps TF's padding names onto ops' modes and checks the pads.
func padMode(c *Case) (ops.PadMode, [4]int, error) {
	var pad [4]int
	switch c.Attrs.Padding {
	case "SAME":
		return ops.PadSame, pad, nil
	case "VALID":
		return ops.PadValid, pad, nil
	case "EXPLICIT":
		if len(c.Attrs.Pads) != 4 {
			return 0, pad, fmt.Errorf("explicit padding wants pads [top, bottom, left, right], got %v", c.Attrs.Pads)
		}
		copy(pad[:], c.Attrs.Pads)
		return ops.PadExplicit, pad, nil
	}
	return 0, pad, fmt.Errorf("unknown padding %q", c.Attrs.Padding)
}

func convAttrs(c *Case) (ops.Conv2DAttrs, error) {
	mode, pad, err := padMode(c)
	return ops.Conv2DAttrs{Stride: pair2(c.Attrs.Strides), Dilation: pair2(c.Attrs.Dilations), Pad: pad, Padding: mode, Groups: c.Attrs.Groups}, err
}

func poolAttrs(c *Case) (ops.Pool2DAttrs, error) {
	mode, pad, err := padMode(c)
	return ops.Pool2DAttrs{Kernel: pair2(c.Attrs.Kernel), Stride: pair2(c.Attrs.Strides), Pad: pad, Padding: mode}, err
}

// optimizers build, from a case's attrs (Keras' arguments), the Plumb
// optimizer its name stands for, over params.
var optimizers = map[string]func(a Attrs, ps []*graph.Param) (optim.Optimizer, error){
	"optim_sgd": func(a Attrs, ps []*graph.Param) (optim.Optimizer, error) {
		return optim.NewSGD(ps, optim.LR(a.LearningRate))
	},
	"optim_momentum": func(a Attrs, ps []*graph.Param) (optim.Optimizer, error) {
		return optim.NewMomentum(ps, optim.LR(a.LearningRate), optim.Momentum(a.Momentum))
	},
	"optim_nesterov": func(a Attrs, ps []*graph.Param) (optim.Optimizer, error) {
		return optim.NewMomentum(ps, optim.LR(a.LearningRate), optim.Momentum(a.Momentum), optim.Nesterov())
	},
	"optim_adam": func(a Attrs, ps []*graph.Param) (optim.Optimizer, error) {
		return optim.NewAdam(ps, optim.LR(a.LearningRate), optim.Beta1(a.Beta1), optim.Beta2(a.Beta2), optim.Epsilon(a.Epsilon))
	},
	"optim_adamw": func(a Attrs, ps []*graph.Param) (optim.Optimizer, error) {
		return optim.NewAdamW(ps, optim.LR(a.LearningRate), optim.Beta1(a.Beta1), optim.Beta2(a.Beta2),
			optim.Epsilon(a.Epsilon), optim.WeightDecay(a.WeightDecay))
	},
	"optim_rmsprop": func(a Attrs, ps []*graph.Param) (optim.Optimizer, error) {
		opts := []optim.Option{optim.LR(a.LearningRate), optim.Rho(a.Rho), optim.Momentum(a.Momentum), optim.Epsilon(a.Epsilon)}
		if a.Centered {
			opts = append(opts, optim.Centered())
		}
		return optim.NewRMSProp(ps, opts...)
	},
	"optim_adagrad": func(a Attrs, ps []*graph.Param) (optim.Optimizer, error) {
		return optim.NewAdagrad(ps, optim.LR(a.LearningRate), optim.InitialAccumulator(a.InitialAccumulator), optim.Epsilon(a.Epsilon))
	},
}

// evaluate runs a case through Plumb and pairs each result with its golden.
func evaluate(c *Case) ([]pair, error) {
	dt, err := c.dtype()
	if err != nil {
		return nil, err
	}
	var pairs []pair
	switch c.Kind {
	case "op":
		pairs, err = evaluateOp(c)
	case "optimizer":
		pairs, err = evaluateOptimizer(c)
	case "model":
		pairs, err = evaluateModel(c)
	case "decode":
		pairs, err = evaluateDecode(c)
	default:
		return nil, fmt.Errorf("unknown kind %q", c.Kind)
	}
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		if p.want.DType() != dt {
			return nil, fmt.Errorf("golden %s is %v in a %v case", p.name, p.want.DType(), dt)
		}
	}
	return pairs, nil
}

// evaluateOp runs Forward on the recorded inputs and Backward with the
// recorded upstream gradient, asking for the recorded input gradients.
func evaluateOp(c *Case) ([]pair, error) {
	build, ok := opBuilders[c.Op]
	if !ok {
		return nil, fmt.Errorf("no builder for op %q in parity/runner.go", c.Op)
	}
	op, err := build(c)
	if err != nil {
		return nil, err
	}
	in, err := c.loadInputs()
	if err != nil {
		return nil, err
	}
	out, err := op.Forward(in)
	if err != nil {
		return nil, err
	}
	pairs, err := c.outputs(out, in)
	if err != nil {
		return nil, err
	}
	if len(c.Grads) > 0 {
		gout, err := c.load("gout.npy")
		if err != nil {
			return nil, err
		}
		need := make([]bool, len(in))
		for _, i := range c.Grads {
			need[i] = true
		}
		grads, err := op.Backward(in, out, gout, need)
		if err != nil {
			return nil, err
		}
		for _, i := range c.Grads {
			if i >= len(grads) || grads[i] == nil {
				return nil, fmt.Errorf("backward gave no gradient for input %d", i)
			}
			p, err := c.golden(fmt.Sprintf("grad%d", i), grads[i])
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, p)
		}
	}
	if c.Op == "dropout" {
		return dropoutPairs(in[0], pairs), nil
	}
	return pairs, nil
}

// loadInputs reads the case's inputs in<i>.npy.
func (c *Case) loadInputs() ([]*tensor.Tensor, error) {
	in := make([]*tensor.Tensor, c.Inputs)
	for i := range in {
		var err error
		if in[i], err = c.load(fmt.Sprintf("in%d.npy", i)); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// outputs pairs out with out.npy and each input in c.After, which the
// forward pass has updated in place (batch norm's moving statistics), with
// its after<i>.npy.
func (c *Case) outputs(out *tensor.Tensor, in []*tensor.Tensor) ([]pair, error) {
	p, err := c.golden("out", out)
	if err != nil {
		return nil, err
	}
	pairs := []pair{p}
	for _, i := range c.After {
		p, err := c.golden(fmt.Sprintf("after%d", i), in[i])
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// golden pairs got with the golden <name>.npy.
func (c *Case) golden(name string, got *tensor.Tensor) (pair, error) {
	want, err := c.load(name + ".npy")
	return pair{name: name, got: got, want: want}, err
}

// dropoutPairs restricts a dropout case to the elements that both Plumb's
// and TF's masks keep: the masks come from different RNGs and cannot
// agree, but every element both keep must be scaled by 1/(1-rate) in the
// output and the gradient alike. Elements either drops are zeroed in both.
func dropoutPairs(x *tensor.Tensor, pairs []pair) []pair {
	var out pair
	for _, p := range pairs {
		if p.name == "out" {
			out = p
		}
	}
	both := make([]bool, x.Size())
	for i := range both {
		both[i] = x.At(i) == 0 || (out.got.At(i) != 0 && out.want.At(i) != 0)
	}
	masked := slices.Clone(pairs)
	for k, p := range masked {
		got, want := p.got.Clone(), p.want.Clone()
		if got.Size() == len(both) && want.Size() == len(both) {
			for i, keep := range both {
				if !keep {
					got.SetAt(i, 0)
					want.SetAt(i, 0)
				}
			}
		}
		masked[k] = pair{name: p.name, got: got, want: want}
	}
	return masked
}

// evaluateOptimizer applies the recorded gradients to the recorded initial
// variable, one Step each, and pairs the variable after each step with
// Keras'.
func evaluateOptimizer(c *Case) ([]pair, error) {
	mk, ok := optimizers[c.Op]
	if !ok {
		return nil, fmt.Errorf("no optimizer for %q in parity/runner.go", c.Op)
	}
	v, err := c.load("in0.npy")
	if err != nil {
		return nil, err
	}
	p := graph.NewParam("var", v)
	opt, err := mk(c.Attrs, []*graph.Param{p})
	if err != nil {
		return nil, err
	}
	var pairs []pair
	for k := 1; k <= c.Steps; k++ {
		if p.Grad, err = c.load(fmt.Sprintf("step%d_grad.npy", k)); err != nil {
			return nil, err
		}
		if err := opt.Step(); err != nil {
			return nil, err
		}
		pr, err := c.golden(fmt.Sprintf("step%d_var", k), p.Value.Clone())
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, pr)
	}
	return pairs, nil
}

// CheckCase runs one case and compares every tensor with its golden.
func CheckCase(c *Case) CaseResult {
	dt, err := c.dtype()
	if err != nil {
		return CaseResult{Case: c, Err: err}
	}
	tol, err := toleranceFor(c, dt)
	if err != nil {
		return CaseResult{Case: c, Err: err}
	}
	pairs, err := evaluate(c)
	if err != nil {
		return CaseResult{Case: c, Tol: tol, Err: err}
	}
	return compare(c, tol, pairs)
}
