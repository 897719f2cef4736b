package cifar

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

func countTrainable(ps []*graph.Param) int {
	n := 0
	for _, p := range layers.Trainable(ps) {
		n += p.Value.Size()
	}
	return n
}

// The parameter counts are worked out by hand from the book's layer list
// (ResNet-32: 467,466 with the book's bias on each block's second
// convolution; VGG-16 with batch norm: 15,254,602).
func TestBookModelsHaveTheBooksParameters(t *testing.T) {
	for _, tc := range []struct {
		name      string
		trainable int
	}{
		{"resnet32", 467466},
		{"vgg", 15254602},
	} {
		t.Run(tc.name, func(t *testing.T) {
			net, err := New(tc.name, tensor.NewRNG(1))
			require.NoError(t, err)
			assert.Equal(t, tc.trainable, countTrainable(net.Params()))
		})
	}
}

func TestModelsMapImagesToLogits(t *testing.T) {
	x, err := tensor.RandNormal(tensor.NewRNG(2), tensor.Float32, 0, 1, 2, 3, 32, 32)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		make func(rng *rand.Rand) (*Net, error)
	}{
		{"resnet8_w4", func(rng *rand.Rand) (*Net, error) { return NewResNet(Sizes{Depth: 8, Width: 4, Classes: 10}, rng) }},
		{"resnet14_w2_3class", func(rng *rand.Rand) (*Net, error) { return NewResNet(Sizes{Depth: 14, Width: 2, Classes: 3}, rng) }},
		{"vgg11_w2", func(rng *rand.Rand) (*Net, error) { return NewVGG(Sizes{Depth: 11, Width: 2, Classes: 10}, rng) }},
		{"vgg19_w1_5class", func(rng *rand.Rand) (*Net, error) { return NewVGG(Sizes{Depth: 19, Width: 1, Classes: 5}, rng) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			net, err := tc.make(tensor.NewRNG(1))
			require.NoError(t, err)
			classes := 10
			if tc.name == "resnet14_w2_3class" {
				classes = 3
			} else if tc.name == "vgg19_w1_5class" {
				classes = 5
			}
			for _, tape := range []*graph.Tape{graph.NewTape(), graph.NewEvalTape()} {
				out, err := net.Forward(tape.Const(x)).Tensor()
				require.NoError(t, err)
				assert.Equal(t, []int{2, classes}, []int(out.Shape()))
			}
		})
	}
}

func TestBadModelSizesFail(t *testing.T) {
	rng := tensor.NewRNG(1)
	for _, tc := range []struct {
		name string
		make func() (*Net, error)
		want string
	}{
		{"resnet depth 30", func() (*Net, error) { return NewResNet(Sizes{Depth: 30, Width: 16, Classes: 10}, rng) }, "depth 30"},
		{"resnet depth 2", func() (*Net, error) { return NewResNet(Sizes{Depth: 2, Width: 16, Classes: 10}, rng) }, "depth 2"},
		{"resnet width 0", func() (*Net, error) { return NewResNet(Sizes{Depth: 32, Width: 0, Classes: 10}, rng) }, "width 0"},
		{"vgg depth 15", func() (*Net, error) { return NewVGG(Sizes{Depth: 15, Width: 64, Classes: 10}, rng) }, "depth 15"},
		{"vgg classes 0", func() (*Net, error) { return NewVGG(Sizes{Depth: 16, Width: 64, Classes: 0}, rng) }, "classes 0"},
		{"unknown name", func() (*Net, error) { return New("resnet50", rng) }, "resnet50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.make()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A wrong input shape surfaces as an error naming the op, not a panic.
func TestWrongImageShapeIsAnError(t *testing.T) {
	net, err := NewResNet(Sizes{Depth: 8, Width: 2, Classes: 10}, tensor.NewRNG(1))
	require.NoError(t, err)
	x := tensor.Zeros(tensor.Float32, 2, 1, 32, 32)
	_, err = net.Forward(graph.NewTape().Const(x)).Tensor()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "images [2 1 32 32]: want [N, 3, H, W]")
}

// tinySet is n random images whose label is the brightest of the first
// classes quarter-planes, a task a small network learns in a few steps.
func tinySet(t *testing.T, n, classes int, seed uint64) *data.Dataset {
	rng := tensor.NewRNG(seed)
	x, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, n, 3, 32, 32)
	require.NoError(t, err)
	px := x.Float32s()
	y := make([]int64, n)
	for i := range n {
		y[i] = int64(rng.IntN(classes))
		// brighten a 8-row band of the red channel that depends on the label
		for r := range 8 {
			for c := range 32 {
				px[i*3*1024+((int(y[i])*8+r)%32)*32+c] += 2
			}
		}
	}
	ds, err := data.NewDataset(data.DenseField("image", x), data.DenseField("label", tensor.MustFromSlice(y, n)))
	require.NoError(t, err)
	return ds
}

func TestTrainingLowersTheLoss(t *testing.T) {
	ds := tinySet(t, 32, 4, 3)
	for _, tc := range []struct {
		name    string
		make    func(rng *rand.Rand) (*Net, error)
		augment bool
	}{
		{"resnet8", func(rng *rand.Rand) (*Net, error) { return NewResNet(Sizes{Depth: 8, Width: 4, Classes: 4}, rng) }, true},
		{"vgg11", func(rng *rand.Rand) (*Net, error) { return NewVGG(Sizes{Depth: 11, Width: 8, Classes: 4}, rng) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pcg := rand.NewPCG(7, 7)
			net, err := tc.make(rand.New(pcg))
			require.NoError(t, err)
			opt, err := optim.NewAdam(net.Params(), optim.LR(1e-2))
			require.NoError(t, err)
			var epochs []train.Epoch
			res, err := Train(net, opt, ds, ds, Config{Epochs: 8, Batch: 16, Seed: 1, Augment: tc.augment, RNG: pcg,
				Hooks: []train.Hooks{{Epoch: func(e train.Epoch) error { epochs = append(epochs, e); return nil }}}})
			require.NoError(t, err)
			require.Len(t, res.Epochs, 8)
			require.Len(t, epochs, 8)
			assert.Contains(t, epochs[7].Metrics, "accuracy")
			first, last := epochs[0].TrainLoss, epochs[7].TrainLoss
			assert.Less(t, last, 0.8*first, "train loss %.3f -> %.3f", first, last)
		})
	}
}

func TestTrainChecksItsConfig(t *testing.T) {
	ds := tinySet(t, 4, 2, 1)
	net, err := NewResNet(Sizes{Depth: 8, Width: 2, Classes: 2}, tensor.NewRNG(1))
	require.NoError(t, err)
	opt, err := optim.NewAdam(net.Params())
	require.NoError(t, err)
	_, err = Train(net, opt, ds, ds, Config{Epochs: 1, Batch: 2, Augment: true})
	require.ErrorContains(t, err, "augmentation needs Config.RNG")
	_, err = Train(net, opt, ds, ds, Config{Epochs: 1, Batch: 0})
	require.ErrorContains(t, err, "batch size 0")
	_, _, err = Evaluate(net, ds.Take(0), 2)
	require.ErrorContains(t, err, "empty dataset")
}

// Batch norm has the book's (Paddle's) momentum and epsilon, not Keras'.
func TestBatchNormIsTheBooks(t *testing.T) {
	for _, name := range []string{"resnet32", "vgg"} {
		net, err := New(name, tensor.NewRNG(1))
		require.NoError(t, err)
		var bns []*layers.BatchNorm
		var walk func(l layers.Layer)
		walk = func(l layers.Layer) {
			switch l := l.(type) {
			case layers.Sequential:
				for _, c := range l {
					walk(c)
				}
			case convBN:
				bns = append(bns, l.bn)
			case *basicBlock:
				walk(l.a)
				walk(l.b)
				if l.shortcut != nil {
					walk(*l.shortcut)
				}
			case *layers.BatchNorm:
				bns = append(bns, l)
			}
		}
		walk(net.Body)
		want := map[string]int{"resnet32": 1 + 30 + 2, "vgg": 13 + 1}[name]
		require.Len(t, bns, want, name)
		for _, bn := range bns {
			assert.Equal(t, 0.9, bn.Attrs.Momentum)
			assert.Equal(t, 1e-5, bn.Attrs.Epsilon)
		}
	}
}

// A net not built by a constructor reports that, naming the method,
// instead of panicking on its missing body or normalisation state.
func TestUnbuiltNet(t *testing.T) {
	tape := graph.NewTape()
	x := tape.Const(tensor.Zeros(tensor.Float32, 1, 3, 2, 2))
	for _, n := range []*Net{nil, {}} {
		assert.Nil(t, n.Params())
		require.ErrorContains(t, n.SetNorm(Norm{}), "cifar: Net.SetNorm: a net not built by New")
		require.ErrorContains(t, n.Forward(x).Err(), "cifar: Net.Forward: a net not built by New")
	}
	require.ErrorContains(t, (&Net{}).Forward(nil).Err(), "cifar: Net.Forward: nil images")
}
