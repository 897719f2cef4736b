//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"testing"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/parity"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// cpuOptimizer returns package optim's optimizer with the rule and
// hyperparameters of c, the reference of the device's Optimizer.
func cpuOptimizer(t *testing.T, c OptimConfig, ps []*graph.Param) optim.Optimizer {
	t.Helper()
	opts := []optim.Option{optim.LRSchedule(c.LR)}
	if c.L2 > 0 {
		opts = append(opts, optim.L2(c.L2))
	}
	if c.GlobalClipNorm > 0 {
		opts = append(opts, optim.GlobalClipNorm(c.GlobalClipNorm))
	}
	var o optim.Optimizer
	var err error
	switch c.Rule {
	case SGD:
		o, err = optim.NewSGD(ps, opts...)
	case Momentum:
		opts = append(opts, optim.Momentum(c.Momentum))
		if c.Nesterov {
			opts = append(opts, optim.Nesterov())
		}
		o, err = optim.NewMomentum(ps, opts...)
	case Adam, AdamW:
		opts = append(opts, optim.Beta1(c.Beta1), optim.Beta2(c.Beta2), optim.Epsilon(c.Epsilon), optim.WeightDecay(c.WeightDecay))
		if c.Rule == Adam {
			o, err = optim.NewAdam(ps, opts...)
		} else {
			o, err = optim.NewAdamW(ps, opts...)
		}
	case RMSProp:
		opts = append(opts, optim.Rho(c.Rho), optim.Momentum(c.Momentum), optim.Epsilon(c.Epsilon))
		if c.Centered {
			opts = append(opts, optim.Centered())
		}
		o, err = optim.NewRMSProp(ps, opts...)
	case Adagrad:
		opts = append(opts, optim.InitialAccumulator(c.InitialAccumulator), optim.Epsilon(c.Epsilon))
		o, err = optim.NewAdagrad(ps, opts...)
	}
	require.NoError(t, err)
	return o
}

// TestOptimizers runs several steps of every rule on random parameters
// and gradients of odd sizes, on the device and with package optim, and
// compares the parameters after each step and the slots at the end. The
// kernels round every operation as Go's float32 arithmetic does, so the
// tolerance is elementwise.
func TestOptimizers(t *testing.T) {
	decay, err := optim.ExponentialDecay(0.05, 2, 0.5, false)
	require.NoError(t, err)
	with := func(r OptimRule, f func(c *OptimConfig)) OptimConfig {
		c := DefaultOptimConfig(r)
		f(&c)
		return c
	}
	for _, c := range []OptimConfig{
		DefaultOptimConfig(SGD),
		with(SGD, func(c *OptimConfig) { c.L2 = 0.01; c.LR = decay }),
		DefaultOptimConfig(Momentum),
		with(Momentum, func(c *OptimConfig) { c.Nesterov = true; c.Momentum = 0.5 }),
		DefaultOptimConfig(Adam),
		with(Adam, func(c *OptimConfig) { c.Beta1, c.Beta2, c.Epsilon, c.LR = 0.5, 0.75, 1e-3, decay }),
		DefaultOptimConfig(AdamW),
		with(AdamW, func(c *OptimConfig) { c.WeightDecay, c.L2 = 0.125, 0.001 }),
		DefaultOptimConfig(RMSProp),
		with(RMSProp, func(c *OptimConfig) { c.Momentum, c.Centered = 0.9, true }),
		with(RMSProp, func(c *OptimConfig) { c.Centered = true }),
		DefaultOptimConfig(Adagrad),
		with(Adagrad, func(c *OptimConfig) { c.InitialAccumulator, c.Epsilon = 0.5, 0 }),
		// The random gradients' global norm is about 45: clipped to 1, and
		// a bound above it that leaves them as they are.
		with(Adam, func(c *OptimConfig) { c.GlobalClipNorm = 1 }),
		with(Momentum, func(c *OptimConfig) { c.GlobalClipNorm, c.L2 = 1, 0.5 }),
		with(SGD, func(c *OptimConfig) { c.GlobalClipNorm = 1e4 }),
	} {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			rng := tensor.NewRNG(31)
			shapes := [][]int{{1}, {3}, {17, 3}, {127}, {513, 3}, {0, 5}}
			var ps []*graph.Param
			var bufs []*Buffer
			for i, s := range shapes {
				v := randn(t, rng, s...)
				ps = append(ps, graph.NewParam(fmt.Sprint("p", i), v))
				bufs = append(bufs, up(t, v.Clone()))
			}
			cpu := cpuOptimizer(t, c, ps)
			gpu, err := dev.NewOptimizer(bufs, c)
			require.NoError(t, err)
			defer gpu.Free()
			for step := 1; step <= 4; step++ {
				grads := make([]*Buffer, len(ps))
				for i, p := range ps {
					g := randn(t, rng, shapes[i]...)
					p.Grad = g.Clone()
					grads[i] = up(t, g)
				}
				require.NoError(t, cpu.Step())
				require.NoError(t, gpu.Step(grads))
				for i, p := range ps {
					requireClose(t, p.Value, bufs[i], tolElementwise, fmt.Sprintf("step %d %s", step, p.Name))
				}
			}
			require.EqualValues(t, 4, gpu.Iterations())
			state := map[string]*tensor.Tensor{}
			for _, s := range cpu.State() {
				state[s.Name] = s.Value
			}
			for i, p := range ps {
				for j, name := range gpu.SlotNames() {
					want, ok := state[p.Name+"/"+name]
					require.True(t, ok, "optim has no slot %s/%s", p.Name, name)
					requireClose(t, want, gpu.Slots(i)[j], tolElementwise, p.Name+"/"+name)
				}
			}
		})
	}
}

func TestOptimizerErrors(t *testing.T) {
	p := up(t, tensor.Zeros(tensor.Float32, 3))
	bad := DefaultOptimConfig(Adam)
	bad.Beta1 = 1
	_, err := dev.NewOptimizer([]*Buffer{p}, bad)
	require.ErrorContains(t, err, "Beta1")
	bad = DefaultOptimConfig(SGD)
	bad.GlobalClipNorm = -1
	_, err = dev.NewOptimizer([]*Buffer{p}, bad)
	require.ErrorContains(t, err, "GlobalClipNorm")
	bad = DefaultOptimConfig(SGD)
	bad.WeightDecay = 0.1
	_, err = dev.NewOptimizer([]*Buffer{p}, bad)
	require.ErrorContains(t, err, "WeightDecay")
	_, err = dev.NewOptimizer([]*Buffer{up(t, tensor.Zeros(tensor.Float64, 3))}, DefaultOptimConfig(SGD))
	require.ErrorContains(t, err, "float32")

	o, err := dev.NewOptimizer([]*Buffer{p}, DefaultOptimConfig(SGD))
	require.NoError(t, err)
	defer o.Free()
	require.ErrorContains(t, o.Step(nil), "0 gradients for 1 parameters")
	require.ErrorContains(t, o.Step([]*Buffer{up(t, tensor.Zeros(tensor.Float32, 4))}), "its gradient is")
	neg := DefaultOptimConfig(SGD)
	neg.LR = optim.ScheduleFunc(func(int64) float64 { return -1 })
	o2, err := dev.NewOptimizer([]*Buffer{p}, neg)
	require.NoError(t, err)
	defer o2.Free()
	require.ErrorContains(t, o2.Step([]*Buffer{p}), "learning rate")
	require.Zero(t, o2.Iterations())
}

// TestParityOptimizers runs the float32 optimizer goldens (TensorFlow's
// updates, recorded steps of one variable) through the device optimizer.
func TestParityOptimizers(t *testing.T) {
	cases, err := parity.LoadCases(os.DirFS(parityDir))
	require.NoError(t, err)
	rules := map[string]OptimRule{"optim_sgd": SGD, "optim_momentum": Momentum, "optim_nesterov": Momentum,
		"optim_adam": Adam, "optim_adamw": AdamW, "optim_rmsprop": RMSProp, "optim_adagrad": Adagrad}
	ran := 0
	for _, c := range cases {
		rule, ok := rules[c.Op]
		if c.Kind != "optimizer" || c.DType != "float32" || !ok {
			continue
		}
		t.Run(c.ID(), func(t *testing.T) {
			load := func(name string) *tensor.Tensor { return loadGolden(t, c, name) }
			a := c.Attrs
			cfg := DefaultOptimConfig(rule)
			cfg.LR, err = optim.Constant(a.LearningRate)
			require.NoError(t, err)
			switch rule {
			case Momentum:
				cfg.Momentum, cfg.Nesterov = a.Momentum, c.Op == "optim_nesterov"
			case Adam, AdamW:
				cfg.Beta1, cfg.Beta2, cfg.Epsilon = a.Beta1, a.Beta2, a.Epsilon
				if rule == AdamW {
					cfg.WeightDecay = a.WeightDecay
				}
			case RMSProp:
				cfg.Rho, cfg.Momentum, cfg.Epsilon, cfg.Centered = a.Rho, a.Momentum, a.Epsilon, a.Centered
			case Adagrad:
				cfg.InitialAccumulator, cfg.Epsilon = a.InitialAccumulator, a.Epsilon
			}
			v := up(t, load("in0"))
			o, err := dev.NewOptimizer([]*Buffer{v}, cfg)
			require.NoError(t, err)
			defer o.Free()
			for k := 1; k <= c.Steps; k++ {
				require.NoError(t, o.Step([]*Buffer{up(t, load(fmt.Sprintf("step%d_grad", k)))}))
				requireClose(t, load(fmt.Sprintf("step%d_var", k)), v, tol{rtol: 1e-4, atol: 1e-5}, fmt.Sprintf("step%d_var", k))
			}
			ran++
		})
	}
	require.NotZero(t, ran, "no optimizer golden ran on the GPU")
}
