package train

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/testdev"
	_ "github.com/plumbml/plumb/internal/testdev/kernels"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// regressionSet is y = x·[1, -2] + 0.5 over 40 fixed points, with a
// ragged "tag" field the loss reads on the host.
func regressionSet(t *testing.T) *data.Dataset {
	rng := tensor.NewRNG(5)
	x := tensor.Zeros(tensor.Float64, 40, 2)
	y := tensor.Zeros(tensor.Float64, 40, 1)
	tags := make([][]int64, 40)
	for k := range 40 {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		x.Float64s()[2*k], x.Float64s()[2*k+1], y.Float64s()[k] = a, b, a-2*b+0.5
		tags[k] = []int64{int64(k)}
	}
	ds, err := data.NewDataset(data.DenseField("x", x), data.DenseField("y", y), data.SeqField("tag", tags))
	require.NoError(t, err)
	return ds
}

// With Config.Device the trainer moves each batch to the model's device
// (the test device, whose kernels are the CPU's) before the loss sees it,
// leaving HostFields on the host; the run ends with the parameters of the
// same run on the host. The evaluation moves its batches too (EvaluateOn).
func TestConfigDeviceMovesBatches(t *testing.T) {
	ds := regressionSet(t)
	runOn := func(dev tensor.Device) ([]float64, float64) {
		net, err := layers.NewLinear("lin", 2, 1, tensor.NewRNG(3), layers.DType(tensor.Float64))
		require.NoError(t, err)
		require.NoError(t, graph.ParamsTo(net.Params(), dev))
		opt, err := optim.NewSGD(net.Params(), optim.LR(0.1))
		require.NoError(t, err)
		loader, err := data.NewLoader(ds, 8, data.Shuffle(1))
		require.NoError(t, err)
		eval := func(t *graph.Tape, b *data.Batch) (Metrics, int, error) {
			l, err := graph.MSE(net.Forward(t.Const(b.Tensor("x"))), t.Const(b.Tensor("y"))).Item()
			return Metrics{"mse": l}, b.Len(), err
		}
		evalLoader, err := data.NewLoader(ds, 16)
		require.NoError(t, err)
		_, err = Run(Config[*data.Batch]{
			Params: net.Params(), Optimizer: opt, Train: loader, Epochs: 6, Device: dev, HostFields: []string{"tag"},
			Loss: func(tp *graph.Tape, b *data.Batch) (*graph.Value, int) {
				require.Equal(t, dev, b.Tensor("x").Device(), "the batch is on the model's device")
				require.Nil(t, b.Ragged("tag").Values.Device(), "a host field stays on the host")
				return graph.MSE(net.Forward(tp.Const(b.Tensor("x"))), tp.Const(b.Tensor("y"))), b.Len()
			},
			Evaluate: func(report func(done, total int)) (Metrics, error) {
				return EvaluateOn(dev, evalLoader, eval, report)
			},
		})
		require.NoError(t, err)
		m, err := EvaluateOn(dev, evalLoader, eval, nil)
		require.NoError(t, err)
		var w []float64
		for _, p := range net.Params() {
			h, err := p.Value.To(nil)
			require.NoError(t, err)
			w = append(w, h.Float64s()...)
		}
		return w, m["mse"]
	}
	hostW, hostMSE := runOn(nil)
	devW, devMSE := runOn(testdev.New("test:0"))
	require.InDeltaSlice(t, hostW, devW, 1e-12)
	require.InDelta(t, hostMSE, devMSE, 1e-12)
	require.Less(t, hostMSE, 0.5, "it learned")
}

// A Device with a batch type that cannot move is refused before training.
func TestConfigDeviceNeedsMovableBatches(t *testing.T) {
	s := newSetup(t, nil)
	cfg := s.config(regression{n: 16, size: 8, seed: 1}, 1)
	cfg.Device = testdev.New("test:0")
	_, err := Run(cfg)
	require.ErrorContains(t, err, "batch type train.pair has no MapTensors method")
	b, err := MoveBatch(graph.NewTape(), nil, pair{}, "x")
	require.NoError(t, err, "to the host, nothing moves")
	require.Equal(t, pair{}, b)
}

// OnDevice and MeanLossOn move each batch before the loss sees it, as the
// trainer does; the mean loss is the host's.
func TestOnDeviceAndMeanLossOn(t *testing.T) {
	ds := regressionSet(t)
	loader, err := data.NewLoader(ds, 16)
	require.NoError(t, err)
	mean := func(dev tensor.Device) float64 {
		net, err := layers.NewLinear("lin", 2, 1, tensor.NewRNG(3), layers.DType(tensor.Float64))
		require.NoError(t, err)
		require.NoError(t, graph.ParamsTo(net.Params(), dev))
		loss := func(tp *graph.Tape, b *data.Batch) (*graph.Value, int) {
			require.Equal(t, dev, b.Tensor("x").Device())
			require.Nil(t, b.Ragged("tag").Values.Device())
			return graph.MSE(net.Forward(tp.Const(b.Tensor("x"))), tp.Const(b.Tensor("y"))), b.Len()
		}
		m, err := MeanLossOn(dev, loader, loss, nil, "tag")
		require.NoError(t, err)
		return m
	}
	host := mean(nil)
	require.InDelta(t, host, mean(testdev.New("test:0")), 1e-12)
	require.Greater(t, host, 0.0)
}
