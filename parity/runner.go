package parity

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

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

// buildOp makes a case's op: ops.Build, the one builder that the gradient
// checks and the device tests use too. It is a variable so that a test can
// check that the harness catches a wrong op.
var buildOp = ops.Build

// evaluateOp runs Forward on the recorded inputs and Backward with the
// recorded upstream gradient, asking for the recorded input gradients.
func evaluateOp(c *Case) ([]pair, error) {
	attrs := c.Attrs.Attrs
	attrs.Seed = uint64(c.Seed) // dropout's mask comes from Plumb's RNG; see dropoutPairs
	op, err := buildOp(c.Op, attrs)
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

// golden pairs got with the golden <name>.npy and, when the case has it,
// the float64 truth truth_<name>.npy (record.py writes one for every
// tensor of a float32 op or model case; goldens recorded before it have
// none and keep the tolerance alone).
func (c *Case) golden(name string, got *tensor.Tensor) (pair, error) {
	want, err := c.load(name + ".npy")
	if err != nil {
		return pair{}, err
	}
	p := pair{name: name, got: got, want: want}
	truth := "truth_" + name + ".npy"
	if c.fsys == nil {
		return p, nil
	}
	if _, err := fs.Stat(c.fsys, path.Join(c.dir, truth)); errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if p.truth, err = c.load(truth); err != nil {
		return pair{}, err
	}
	if p.truth.DType() != tensor.Float64 || !tensor.SameShape(p.truth, want) || c.DType != "float32" {
		return pair{}, fmt.Errorf("%s is %v%v for a %s golden %v%v; want a float32 case's float64 truth of its shape",
			truth, p.truth.DType(), p.truth.Shape(), c.DType, want.DType(), want.Shape())
	}
	return p, nil
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
	if c == nil {
		return CaseResult{Err: errors.New("parity: CheckCase: nil case (load cases with LoadCases)")}
	}
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
