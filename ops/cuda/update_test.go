//go:build cuda

package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// TestOptimizersOnDevice takes three steps of each of optim's rules, with
// L2 and global-norm clipping, on parameters on the device (optim runs the
// device's update and clip kernels) and on the CPU, from the same values
// with the same gradients, and compares the parameters and the slots.
// The kernels round each product and sum as the CPU kernels do, so they
// agree to a few float32 ulp (tolElementwise).
func TestOptimizersOnDevice(t *testing.T) {
	type mk func([]*graph.Param, ...optim.Option) (optim.Optimizer, error)
	for _, c := range []struct {
		name string
		new  mk
		opts []optim.Option
	}{
		{"sgd", optim.NewSGD, []optim.Option{optim.LR(0.1)}},
		{"sgd l2 clip", optim.NewSGD, []optim.Option{optim.LR(0.1), optim.L2(0.01), optim.GlobalClipNorm(0.5)}},
		{"momentum", optim.NewMomentum, []optim.Option{optim.LR(0.1), optim.Momentum(0.9)}},
		{"nesterov", optim.NewMomentum, []optim.Option{optim.LR(0.1), optim.Momentum(0.9), optim.Nesterov()}},
		{"adam", optim.NewAdam, []optim.Option{optim.LR(0.01), optim.L2(0.001)}},
		{"adamw clip", optim.NewAdamW, []optim.Option{optim.LR(0.01), optim.WeightDecay(0.1), optim.GlobalClipNorm(1)}},
		{"rmsprop", optim.NewRMSProp, []optim.Option{optim.LR(0.01)}},
		{"rmsprop momentum centered", optim.NewRMSProp, []optim.Option{optim.LR(0.01), optim.Momentum(0.5), optim.Centered()}},
		{"adagrad", optim.NewAdagrad, []optim.Option{optim.LR(0.1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(dev tensor.Device) ([]*graph.Param, []*graph.Param) {
				rng := rand.New(rand.NewPCG(1, 2))
				ps := []*graph.Param{graph.NewParam("w", randn(t, rng, 7, 5)), graph.NewParam("b", randn(t, rng, 5))}
				o, err := c.new(ps, c.opts...)
				require.NoError(t, err)
				require.NoError(t, graph.ParamsTo(ps, dev))
				for step := range 3 {
					g := rand.New(rand.NewPCG(3, uint64(step)))
					for _, p := range ps {
						p.Grad, err = randn(t, g, p.Value.Shape()...).To(dev)
						require.NoError(t, err)
					}
					require.NoError(t, o.Step())
				}
				return ps, o.State()
			}
			wantP, wantS := run(nil)
			gotP, gotS := run(dev)
			for i := range wantP {
				requireCloseHost(t, wantP[i].Value, toHost(t, gotP[i].Value), tolElementwise, wantP[i].Name)
			}
			for i := range wantS {
				got := gotS[i].Value
				if got.Device() != nil {
					got = toHost(t, got)
				}
				requireCloseHost(t, wantS[i].Value, got, tolElementwise, wantS[i].Name)
			}
		})
	}
}
