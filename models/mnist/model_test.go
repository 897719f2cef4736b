package mnist

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/mnist/embedded"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

func TestShapesAndParams(t *testing.T) {
	for _, c := range []struct {
		name   string
		params int // trainable parameter count of the book's network
	}{
		{"mlp", 784*128 + 128 + 128*64 + 64 + 64*10 + 10},
		{"cnn", 20*25 + 20 + 2*20 + 50*20*25 + 50 + 800*10 + 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			net, err := New(c.name, tensor.NewRNG(1))
			require.NoError(t, err)
			n := 0
			for _, p := range layers.Trainable(net.Params()) {
				n += p.Value.Size()
			}
			require.Equal(t, c.params, n)
			x := tensor.Zeros(tensor.Float32, 3, 1, 28, 28)
			y, err := net.Forward(graph.NewEvalTape().Const(x)).Tensor()
			require.NoError(t, err)
			require.Equal(t, tensor.Shape{3, 10}, y.Shape())
		})
	}
	_, err := New("rnn", tensor.NewRNG(1))
	require.ErrorContains(t, err, `unknown model "rnn"`)
}

// Both book models learn real digits: a short run on a subset must clearly
// beat chance (10%) on held-out images. The full-data bars are checked by
// `plumb train mnist` (see docs/benchmarks.md).
func TestModelsLearn(t *testing.T) {
	train, test, err := embedded.Load()
	require.NoError(t, err)
	train, test = train.Take(3000), test.Take(1000)
	for _, c := range []struct {
		name  string
		floor float64
	}{{"mlp", 0.80}, {"cnn", 0.85}} {
		t.Run(c.name, func(t *testing.T) {
			net, err := New(c.name, tensor.NewRNG(7))
			require.NoError(t, err)
			opt, err := optim.NewAdam(net.Params(), optim.LR(1e-3))
			require.NoError(t, err)
			var epochs []Epoch
			require.NoError(t, Train(net, opt, train, test, Config{Epochs: 1, Batch: 32, Seed: 3}, nil,
				func(e Epoch) { epochs = append(epochs, e) }))
			require.Len(t, epochs, 1)
			require.Greater(t, epochs[0].TestAccuracy, c.floor)
			acc, _, err := Evaluate(net, test, 250)
			require.NoError(t, err)
			require.Equal(t, epochs[0].TestAccuracy, acc, "evaluation is deterministic")
		})
	}
}

func TestTrainRejectsBadConfig(t *testing.T) {
	net, _ := NewMLP(tensor.NewRNG(1))
	opt, _ := optim.NewAdam(net.Params())
	empty, err := data.NewDataset(data.DenseField("image", tensor.Zeros(tensor.Float32, 0, 1, 28, 28)), data.DenseField("label", tensor.Zeros(tensor.Int64, 0)))
	require.NoError(t, err)
	require.ErrorContains(t, Train(net, opt, empty, empty, Config{Epochs: 0, Batch: 64}, nil, nil), "epochs=0")
	_, _, err = Evaluate(net, empty, 10)
	require.ErrorContains(t, err, "empty")

	train, test, err := embedded.Load()
	require.NoError(t, err)
	train, test = train.Take(64), test.Take(64)
	cfg := Config{Epochs: 1, Batch: 32}
	for _, c := range []struct {
		name        string
		net         Model
		opt         optim.Optimizer
		train, test *data.Dataset
		want        string
	}{
		{"empty training set", net, opt, empty, test, "training set is empty"},
		{"empty test set", net, opt, train, empty, "test set is empty"},
		{"nil test set", net, opt, train, nil, "needs a training and a test set"},
		{"nil training set", net, opt, nil, test, "needs a training and a test set"},
		{"nil model", nil, opt, train, test, "needs a model and an optimizer"},
		{"nil optimizer", net, nil, train, test, "needs a model and an optimizer"},
	} {
		require.ErrorContains(t, Train(c.net, c.opt, c.train, c.test, cfg, nil, nil), c.want, c.name)
	}
	for _, batch := range []int{0, -1} {
		_, _, err = Evaluate(net, test, batch)
		require.ErrorContains(t, err, "batch size", batch)
	}
	_, _, err = Evaluate(net, nil, 10)
	require.ErrorContains(t, err, "needs a model and a dataset")
	_, _, err = Evaluate(nil, test, 10)
	require.ErrorContains(t, err, "needs a model and a dataset")
}

// A NaN in the data makes the loss NaN: training stops at that step with
// an error naming it, before the optimizer writes NaN into the parameters.
func TestTrainStopsOnNonFiniteLoss(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		net, err := NewMLP(tensor.NewRNG(1))
		require.NoError(t, err)
		opt, err := optim.NewAdam(net.Params())
		require.NoError(t, err)
		img := tensor.Zeros(tensor.Float32, 96, 1, 28, 28)
		tensor.Data[float32](img)[40*784+5] = bad // image 40, in whichever batch the shuffle puts it
		ds, err := data.NewDataset(data.DenseField("image", img), data.DenseField("label", tensor.Zeros(tensor.Int64, 96)))
		require.NoError(t, err)
		err = Train(net, opt, ds, ds, Config{Epochs: 1, Batch: 32, Seed: 1}, nil, nil)
		require.ErrorContains(t, err, "mnist: train: epoch 1, step ")
		require.ErrorContains(t, err, "loss is ")
		for _, p := range net.Params() {
			for _, v := range tensor.Data[float32](p.Value) {
				require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0), "%s holds %v", p.Name, v)
			}
		}
	}
}
