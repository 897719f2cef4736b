//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/mnist/embedded"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/parity"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

var (
	mnistOnce             sync.Once
	mnistTrain, mnistTest *data.Dataset
	mnistErr              error
)

// loadMNIST returns the embedded MNIST digits, decoded once per binary.
func loadMNIST(t testing.TB) (train, test *data.Dataset) {
	t.Helper()
	mnistOnce.Do(func() { mnistTrain, mnistTest, mnistErr = embedded.Load() })
	require.NoError(t, mnistErr)
	return mnistTrain, mnistTest
}

// cnnHost returns models/mnist's CNN initialised from seed and a copy of
// its tensors by name, for the device.
func cnnHost(t testing.TB, seed uint64) (mnist.Model, map[string]*tensor.Tensor) {
	t.Helper()
	net, err := mnist.NewCNN(tensor.NewRNG(seed))
	require.NoError(t, err)
	host := map[string]*tensor.Tensor{}
	for _, p := range net.Params() {
		host[p.Name] = p.Value.Clone()
	}
	return net, host
}

func maxAbs(t *tensor.Tensor) float64 {
	m := 0.0
	for i := 0; i < t.Size(); i++ {
		m = max(m, math.Abs(t.At(i)))
	}
	return m
}

// TestMNISTCNNStepMatchesCPU runs one training step of the book CNN with
// Adam (lr 1e-3, models/mnist's recipe) from the same initial weights on
// the same batch, on the CPU (models/mnist with graph and optim) and on
// the device, and compares the loss, every gradient, every parameter
// after the update and batch norm's moving statistics.
//
// Gradients are sums of up to N·576 float32 products accumulated in other
// orders, so they are held to 2e-3 of their tensor's largest magnitude
// (δ below). Adam's first update is lr·g/(|g| + c) with
// c = eps/sqrt(1-beta2): nearly lr·sign(g), so a gradient within δ of 0
// may flip sign. Each parameter is held to float32 rounding plus the
// change of that function over [g-δ, g+δ], at most
// 2δ·lr·c/(max(|g|-δ, 0) + c)² and never more than 2·lr.
func TestMNISTCNNStepMatchesCPU(t *testing.T) {
	train, _ := loadMNIST(t)
	const lr, eps, beta2 = 1e-3, 1e-7, 0.999
	for _, n := range []int{64, 13} {
		t.Run(fmt.Sprint("batch ", n), func(t *testing.T) {
			net, host := cnnHost(t, 1)
			loader, err := data.NewLoader(train, n, data.Shuffle(2))
			require.NoError(t, err)
			var b *data.Batch
			for b, err = range loader.Batches(0) {
				break
			}
			require.NoError(t, err)
			cfg := DefaultOptimConfig(Adam)
			cfg.LR, _ = optim.Constant(lr)
			gpu, err := dev.NewMNISTCNN(host, 64, cfg)
			require.NoError(t, err)
			defer gpu.Free()

			opt, err := optim.NewAdam(net.Params(), optim.LR(lr))
			require.NoError(t, err)
			tape := graph.NewTape()
			loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(b.Tensor("image"))), b.Tensor("label"))
			require.NoError(t, tape.Backward(loss))
			want, err := loss.Item()
			require.NoError(t, err)
			grads := map[string]*tensor.Tensor{}
			for _, p := range net.Params() {
				if p.Grad != nil {
					grads[p.Name] = p.Grad.Clone()
				}
			}
			require.NoError(t, opt.Step())

			require.NoError(t, gpu.Step(b.Tensor("image"), b.Tensor("label")))
			got, steps, err := gpu.LossSum()
			require.NoError(t, err)
			require.Equal(t, 1, steps)
			require.InDelta(t, want, got, 1e-5+1e-4*math.Abs(want), "loss")

			c := eps / math.Sqrt(1-beta2)
			for _, p := range net.Params() {
				dp := gpu.Param(p.Name)
				require.NotNil(t, dp, p.Name)
				g, trained := grads[p.Name]
				if !trained { // the moving statistics
					requireClose(t, p.Value, dp, tolReduce, p.Name)
					continue
				}
				delta := 2e-3 * maxAbs(g)
				requireClose(t, g, gpu.Grad(p.Name), tol{rtol: 1e-3, atol: delta}, p.Name+" gradient")
				h, err := dp.Download()
				require.NoError(t, err)
				for i := 0; i < h.Size(); i++ {
					w, gi := p.Value.At(i), math.Abs(g.At(i))
					d := max(gi-delta, 0) + c
					bound := 1e-6 + 1e-5*math.Abs(w) + min(2*lr, 2*delta*lr*c/(d*d))
					if math.Abs(h.At(i)-w) > bound {
						t.Fatalf("%s element %d is %v after the step, want %v within %g (gradient %v)", p.Name, i, h.At(i), w, bound, g.At(i))
					}
				}
			}
		})
	}
}

// TestMNISTCNNTrains trains the CNN on the device for one epoch over 8192
// digits and checks that the loss falls and that the test accuracy is
// sane; then it copies the parameters to models/mnist's CPU model and
// checks that mnist.Evaluate there agrees with the device's evaluation.
func TestMNISTCNNTrains(t *testing.T) {
	train, test := loadMNIST(t)
	train, test = train.Take(8192), test.Take(1000)
	net, host := cnnHost(t, 1)
	gpu, err := dev.NewMNISTCNN(host, 64, DefaultOptimConfig(Adam))
	require.NoError(t, err)
	defer gpu.Free()
	var means []float64
	loader, err := data.NewLoader(train, 64, data.Shuffle(1))
	require.NoError(t, err)
	for b, err := range loader.Batches(0) {
		require.NoError(t, err)
		require.NoError(t, gpu.Step(b.Tensor("image"), b.Tensor("label")))
		if gpu.steps == 16 {
			s, k, err := gpu.LossSum()
			require.NoError(t, err)
			means = append(means, s/float64(k))
		}
	}
	require.Len(t, means, 8192/64/16)
	require.Less(t, means[len(means)-1], means[0]/2, "mean loss per 16 steps: %v", means)

	testLoader, err := data.NewLoader(test, 64)
	require.NoError(t, err)
	for b, err := range testLoader.Batches(0) {
		require.NoError(t, err)
		require.NoError(t, gpu.Eval(b.Tensor("image"), b.Tensor("label")))
	}
	acc, loss, images, err := gpu.EvalTotals()
	require.NoError(t, err)
	require.Equal(t, test.Len(), images)
	require.Greater(t, acc, 0.9, "test accuracy after 128 steps")

	for _, p := range net.Params() {
		require.NoError(t, gpu.Param(p.Name).CopyTo(p.Value), p.Name)
	}
	cpuAcc, cpuLoss, err := mnist.Evaluate(net, test, 500)
	require.NoError(t, err)
	require.InDelta(t, cpuAcc, acc, 2.0/float64(test.Len()), "accuracy: a near-tie may go either way")
	require.InDelta(t, cpuLoss, loss, 1e-3*cpuLoss, "loss")
}

func TestMNISTCNNErrors(t *testing.T) {
	_, host := cnnHost(t, 1)
	bad := map[string]*tensor.Tensor{}
	for k, v := range host {
		bad[k] = v
	}
	bad["fc/bias"] = tensor.Zeros(tensor.Float32, 11)
	_, err := dev.NewMNISTCNN(bad, 8, DefaultOptimConfig(Adam))
	require.ErrorContains(t, err, "fc/bias")
	_, err = dev.NewMNISTCNN(host, 0, DefaultOptimConfig(Adam))
	require.ErrorContains(t, err, "batch")

	m, err := dev.NewMNISTCNN(host, 8, DefaultOptimConfig(Adam))
	require.NoError(t, err)
	defer m.Free()
	img := tensor.Zeros(tensor.Float32, 9, 1, 28, 28)
	require.ErrorContains(t, m.Step(img, tensor.Zeros(tensor.Int64, 9)), "1 <= N <= 8")
	img = tensor.Zeros(tensor.Float32, 2, 1, 28, 28)
	require.ErrorContains(t, m.Step(img, tensor.MustFromSlice([]int64{1, 10})), "label 10 at row 1")
	require.ErrorContains(t, m.Eval(img, tensor.Zeros(tensor.Int64, 3)), "want int32 or int64 [2]")
	_, steps, err := m.LossSum()
	require.NoError(t, err)
	require.Zero(t, steps)
}

// BenchmarkMNISTCNNStep is one training step of the book CNN on the
// device at batch 64 (upload, forward, loss, backward, Adam), reported in
// samples/s; the loss is read once at the end.
func BenchmarkMNISTCNNStep(b *testing.B) {
	rng := tensor.NewRNG(1)
	_, host := cnnHost(b, 1)
	m, err := dev.NewMNISTCNN(host, 64, DefaultOptimConfig(Adam))
	require.NoError(b, err)
	defer m.Free()
	img, err := tensor.RandUniform(rng, tensor.Float32, 0, 1, 64, 1, 28, 28)
	require.NoError(b, err)
	lab := make([]int64, 64)
	for i := range lab {
		lab[i] = int64(rng.IntN(10))
	}
	labels := tensor.MustFromSlice(lab)
	b.ResetTimer()
	for range b.N {
		if err := m.Step(img, labels); err != nil {
			b.Fatal(err)
		}
	}
	if _, _, err := m.LossSum(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "samples/s")
}

// TestParityMNISTCNN runs the float32 golden of the whole book CNN
// (TensorFlow's loss, parameter gradients and moving statistics for one
// training batch) through the device's training step. The step's
// gradients are for a loss gradient of 1, so they are scaled by the
// golden's upstream gradient; they are held to the tolerance of
// TestMNISTCNNStepMatchesCPU.
func TestParityMNISTCNN(t *testing.T) {
	cases, err := parity.LoadCases(os.DirFS(parityDir))
	require.NoError(t, err)
	ran := 0
	for _, c := range cases {
		if c.Op != "mnist_cnn" || c.Kind != "model" || c.DType != "float32" {
			continue
		}
		t.Run(c.ID(), func(t *testing.T) {
			load := func(name string) *tensor.Tensor { return loadGolden(t, c, name) }
			host := map[string]*tensor.Tensor{}
			for name, i := range c.Params {
				host[name] = load(fmt.Sprint("in", i))
			}
			images, labels := load("in0"), load("in1")
			m, err := dev.NewMNISTCNN(host, images.Dim(0), DefaultOptimConfig(SGD))
			require.NoError(t, err)
			defer m.Free()
			require.NoError(t, m.Step(images, labels))
			loss, _, err := m.LossSum()
			require.NoError(t, err)
			want := load("out").At(0)
			require.InDelta(t, want, loss, 1e-5+1e-4*math.Abs(want), "loss")
			scale := load("gout").At(0)
			for name, i := range c.Params {
				if slices.Contains(c.After, i) {
					requireClose(t, load(fmt.Sprint("after", i)), m.Param(name), tolReduce, name)
					continue
				}
				if !slices.Contains(c.Grads, i) {
					continue
				}
				g, err := m.Grad(name).Download()
				require.NoError(t, err)
				for k, v := range g.Float32s() {
					g.Float32s()[k] = v * float32(scale)
				}
				golden := load(fmt.Sprint("grad", i))
				requireClose(t, golden, up(t, g), tol{rtol: 1e-3, atol: 2e-3 * maxAbs(golden)}, name+" gradient")
			}
			ran++
		})
	}
	require.NotZero(t, ran, "no mnist_cnn golden ran on the GPU")
}
