//go:build cuda

package cuda

import (
	"fmt"
	"runtime"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"gorgonia.org/cu"
)

// The book's MNIST CNN (models/mnist.NewCNN): conv 5×5×20 + relu + max
// pool 2 → batch norm → conv 5×5×50 + relu + max pool 2 → fc 10, VALID
// convolutions, on images [N, 1, 28, 28].
const (
	cnnClasses = 10
	cnnFC      = 50 * 4 * 4 // the flattened second pool
)

// cnnParams are the CNN's tensors with models/mnist's names and shapes:
// the cnnTrained trainable ones, then batch norm's moving statistics.
var cnnParams = []struct {
	name  string
	shape tensor.Shape
}{
	{"conv1/kernel", tensor.Shape{20, 1, 5, 5}}, {"conv1/bias", tensor.Shape{20}},
	{"bn1/gamma", tensor.Shape{20}}, {"bn1/beta", tensor.Shape{20}},
	{"conv2/kernel", tensor.Shape{50, 20, 5, 5}}, {"conv2/bias", tensor.Shape{50}},
	{"fc/kernel", tensor.Shape{cnnFC, cnnClasses}}, {"fc/bias", tensor.Shape{cnnClasses}},
	{"bn1/moving_mean", tensor.Shape{20}}, {"bn1/moving_variance", tensor.Shape{20}},
}

const cnnTrained = 8

// Indices into cnnParams.
const (
	pConv1W = iota
	pConv1B
	pGamma
	pBeta
	pConv2W
	pConv2B
	pFCW
	pFCB
	pMovingMean
	pMovingVar
)

// MNISTCNN trains and evaluates the book's MNIST CNN (models/mnist.NewCNN)
// entirely on the device: a training step uploads the batch, then runs the
// forward pass, the softmax cross-entropy (mean over the batch), the
// backward pass and the optimizer update as kernels queued on the stream
// with no copy back to the host; the batch's loss is added to a device
// accumulator that LossSum reads when the caller wants it. Every
// activation and gradient buffer is allocated once, for the largest
// batch. The parameters start as the host tensors handed to NewMNISTCNN
// (models/mnist's initialisation) and are read back with Param.
type MNISTCNN struct {
	d     *Device
	batch int

	params []*Buffer // in cnnParams order
	grads  []*Buffer // of the cnnTrained trainable parameters
	opt    *Optimizer

	conv1, conv2 *Conv2D
	bn, bnEval   *BatchNorm

	// Activations for batch images, and their gradients.
	x, a1, r1, p1, b1, a2, r2, p2, logits *Buffer
	arg1, arg2                            *Buffer // int64: each pool output's input index
	labels                                *Buffer // int32
	rowMax, logSum, perRow, loss, one     *Buffer
	dLogits, dP2, dR2, dA2, dB1, dP1, dR1 *Buffer
	dA1                                   *Buffer

	lossSum   *Buffer // float64 [1]: Σ batch losses since LossSum
	evalStats *Buffer // float64 [2]: hits and Σ losses since EvalTotals
	steps     int     // steps in lossSum
	evalN     int     // images in evalStats
	hostLab   []int32
}

// MNISTCNNParamNames returns the names of the CNN's tensors as
// models/mnist's CNN names them: the trainable parameters, then batch
// norm's moving statistics.
func MNISTCNNParamNames() []string {
	names := make([]string, len(cnnParams))
	for i, p := range cnnParams {
		names[i] = p.name
	}
	return names
}

// TrainableNames returns the names of the trainable parameters in the
// order of the optimizer's parameters (Optimizer().Slots(i) belongs to
// the i-th).
func (m *MNISTCNN) TrainableNames() []string { return MNISTCNNParamNames()[:cnnTrained] }

// NewMNISTCNN uploads the CNN's tensors, params by name (float32, with
// models/mnist's names and shapes; see MNISTCNNParamNames), allocates the
// buffers of batches of up to batch images and the optimizer cfg over the
// trainable parameters.
func (d *Device) NewMNISTCNN(params map[string]*tensor.Tensor, batch int, cfg OptimConfig) (*MNISTCNN, error) {
	if batch < 1 {
		return nil, fmt.Errorf("cuda: mnist cnn: batch %d must be positive", batch)
	}
	for _, p := range cnnParams {
		t := params[p.name]
		if t == nil || t.DType() != tensor.Float32 || !t.Shape().Equal(p.shape) {
			got := "none"
			if t != nil {
				got = fmt.Sprintf("%v%v", t.DType(), t.Shape())
			}
			return nil, fmt.Errorf("cuda: mnist cnn: parameter %s is %s, want float32%v", p.name, got, p.shape)
		}
	}
	m := &MNISTCNN{d: d, batch: batch, hostLab: make([]int32, batch)}
	m.conv1 = d.Conv2DOp(ops.Conv2DAttrs{Padding: ops.PadValid})
	m.conv2 = d.Conv2DOp(ops.Conv2DAttrs{Padding: ops.PadValid})
	bn := ops.BatchNormAttrs{Momentum: ops.DefaultBatchNormMomentum, Epsilon: ops.DefaultBatchNormEpsilon, Training: true}
	m.bn = d.BatchNormOp(bn)
	bn.Training = false
	m.bnEval = d.BatchNormOp(bn)
	err := d.do(func() error {
		for _, p := range cnnParams {
			b, err := d.newBuffer(tensor.Float32, p.shape)
			if err != nil {
				return err
			}
			m.params = append(m.params, b)
			if err := d.copyHtoD(b, params[p.name]); err != nil {
				return err
			}
		}
		for _, p := range cnnParams[:cnnTrained] {
			b, err := d.newBuffer(tensor.Float32, p.shape)
			if err != nil {
				return err
			}
			m.grads = append(m.grads, b)
		}
		n := batch
		for _, a := range []struct {
			b     **Buffer
			dt    tensor.DType
			shape tensor.Shape
		}{
			{&m.x, tensor.Float32, tensor.Shape{n, 1, 28, 28}},
			{&m.a1, tensor.Float32, tensor.Shape{n, 20, 24, 24}}, {&m.r1, tensor.Float32, tensor.Shape{n, 20, 24, 24}},
			{&m.p1, tensor.Float32, tensor.Shape{n, 20, 12, 12}}, {&m.arg1, tensor.Int64, tensor.Shape{n, 20, 12, 12}},
			{&m.b1, tensor.Float32, tensor.Shape{n, 20, 12, 12}},
			{&m.a2, tensor.Float32, tensor.Shape{n, 50, 8, 8}}, {&m.r2, tensor.Float32, tensor.Shape{n, 50, 8, 8}},
			{&m.p2, tensor.Float32, tensor.Shape{n, 50, 4, 4}}, {&m.arg2, tensor.Int64, tensor.Shape{n, 50, 4, 4}},
			{&m.logits, tensor.Float32, tensor.Shape{n, cnnClasses}},
			{&m.labels, tensor.Int32, tensor.Shape{n}},
			{&m.rowMax, tensor.Float32, tensor.Shape{n}}, {&m.logSum, tensor.Float32, tensor.Shape{n}},
			{&m.perRow, tensor.Float32, tensor.Shape{n}}, {&m.loss, tensor.Float32, tensor.Shape{}},
			{&m.one, tensor.Float32, tensor.Shape{}},
			{&m.dLogits, tensor.Float32, tensor.Shape{n, cnnClasses}},
			{&m.dP2, tensor.Float32, tensor.Shape{n, 50, 4, 4}},
			{&m.dR2, tensor.Float32, tensor.Shape{n, 50, 8, 8}}, {&m.dA2, tensor.Float32, tensor.Shape{n, 50, 8, 8}},
			{&m.dB1, tensor.Float32, tensor.Shape{n, 20, 12, 12}}, {&m.dP1, tensor.Float32, tensor.Shape{n, 20, 12, 12}},
			{&m.dR1, tensor.Float32, tensor.Shape{n, 20, 24, 24}}, {&m.dA1, tensor.Float32, tensor.Shape{n, 20, 24, 24}},
			{&m.lossSum, tensor.Float64, tensor.Shape{1}}, {&m.evalStats, tensor.Float64, tensor.Shape{2}},
		} {
			var err error
			if *a.b, err = d.newBuffer(a.dt, a.shape); err != nil {
				return err
			}
		}
		if err := d.fill(m.one, 1); err != nil {
			return err
		}
		if err := d.zero(m.lossSum); err != nil {
			return err
		}
		return d.zero(m.evalStats)
	})
	if err != nil {
		m.Free()
		return nil, err
	}
	if m.opt, err = d.NewOptimizer(m.params[:cnnTrained], cfg); err != nil {
		m.Free()
		return nil, err
	}
	return m, nil
}

// view returns b's first elements as a buffer of the given shape, sharing
// b's memory; it must never be freed.
func view(b *Buffer, shape ...int) *Buffer {
	return &Buffer{dev: b.dev, ptr: b.ptr, dtype: b.dtype, shape: tensor.Shape(shape)}
}

// Batch returns the largest batch the CNN takes.
func (m *MNISTCNN) Batch() int { return m.batch }

// Param returns the device buffer of the tensor called name (see
// MNISTCNNParamNames), or nil; the caller must not free it.
func (m *MNISTCNN) Param(name string) *Buffer {
	for i, p := range cnnParams {
		if p.name == name {
			return m.params[i]
		}
	}
	return nil
}

// Grad returns the gradient of the trainable parameter called name from
// the last Step, or nil for another name; the caller must not free it.
func (m *MNISTCNN) Grad(name string) *Buffer {
	for i, p := range cnnParams[:cnnTrained] {
		if p.name == name {
			return m.grads[i]
		}
	}
	return nil
}

// Optimizer returns the optimizer over the trainable parameters, in
// cnnParams order, whose slots a checkpoint saves.
func (m *MNISTCNN) Optimizer() *Optimizer { return m.opt }

// batchInput checks a batch on the host, images float32 [n, 1, 28, 28]
// and labels int32 or int64 [n] in [0, 10) with 1 <= n <= m.batch, and
// stages the labels as int32.
func (m *MNISTCNN) batchInput(op string, images, labels *tensor.Tensor) (int, error) {
	if images == nil || labels == nil {
		return 0, fmt.Errorf("cuda: mnist cnn %s: nil images or labels", op)
	}
	n := 0
	if images.Rank() == 4 {
		n = images.Dim(0)
	}
	if images.DType() != tensor.Float32 || !images.Shape().Equal(tensor.Shape{n, 1, 28, 28}) || n < 1 || n > m.batch {
		return 0, fmt.Errorf("cuda: mnist cnn %s: images %v%v, want float32 [N, 1, 28, 28] with 1 <= N <= %d", op, images.DType(), images.Shape(), m.batch)
	}
	ls, err := labels.Ints()
	if err != nil || labels.Rank() != 1 || len(ls) != n {
		return 0, fmt.Errorf("cuda: mnist cnn %s: labels %v%v, want int32 or int64 [%d]", op, labels.DType(), labels.Shape(), n)
	}
	for i, l := range ls {
		if l < 0 || l >= cnnClasses {
			return 0, fmt.Errorf("cuda: mnist cnn %s: label %d at row %d out of range [0, %d)", op, l, i, cnnClasses)
		}
		m.hostLab[i] = int32(l)
	}
	return n, nil
}

// upload copies the batch's images and the staged labels to the device;
// called inside do.
func (m *MNISTCNN) upload(n int, images *tensor.Tensor) error {
	if err := m.d.copyHtoD(view(m.x, n, 1, 28, 28), images); err != nil {
		return err
	}
	return m.d.copyHtoD(view(m.labels, n), tensor.MustFromSlice(m.hostLab[:n]))
}

// pool2x2 returns the 2×2, stride-2 max pool over planes planes of h×w.
func (m *MNISTCNN) pool2x2(planes, h, w int) *Pool2D {
	return &Pool2D{d: m.d, max: true, g: geom{C: planes, H: h, W: w, KH: 2, KW: 2, SH: 2, SW: 2, DH: 1, DW: 1, OH: h / 2, OW: w / 2}}
}

// relu writes y = max(x, 0) over n elements; called inside do.
func (m *MNISTCNN) relu(x, y *Buffer, n int) error {
	return m.d.launch("unary_fwd", grid1(n), block1, i64(unaryCodes["relu"]), ptr(x), ptr(y), i64(n), f64(0), f64(0))
}

// forward runs the network on the n uploaded images up to the logits and
// the per-row losses, with batch norm in training or inference mode;
// called inside do.
func (m *MNISTCNN) forward(n int, training bool) error {
	d, P := m.d, m.params
	if err := m.conv1.check(view(m.x, n, 1, 28, 28), P[pConv1W], P[pConv1B]); err != nil {
		return err
	}
	if err := m.conv1.forward(view(m.a1, n, 20, 24, 24)); err != nil {
		return err
	}
	if err := m.relu(m.a1, m.r1, n*20*24*24); err != nil {
		return err
	}
	pool1 := m.pool2x2(n*20, 24, 24)
	if err := d.launch("pool_fwd", grid1(n*20*12*12), block1, append([]uint64{1, ptr(m.r1), ptr(m.p1), ptr(m.arg1)}, pool1.params()...)...); err != nil {
		return err
	}
	bn := m.bnEval
	if training {
		bn = m.bn
	}
	if err := bn.check(view(m.p1, n, 20, 12, 12), P[pGamma], P[pBeta], P[pMovingMean], P[pMovingVar]); err != nil {
		return err
	}
	if err := bn.forward(view(m.p1, n, 20, 12, 12), P[pGamma], P[pBeta], P[pMovingMean], P[pMovingVar], view(m.b1, n, 20, 12, 12)); err != nil {
		return err
	}
	if err := m.conv2.check(view(m.b1, n, 20, 12, 12), P[pConv2W], P[pConv2B]); err != nil {
		return err
	}
	if err := m.conv2.forward(view(m.a2, n, 50, 8, 8)); err != nil {
		return err
	}
	if err := m.relu(m.a2, m.r2, n*50*8*8); err != nil {
		return err
	}
	pool2 := m.pool2x2(n*50, 8, 8)
	if err := d.launch("pool_fwd", grid1(n*50*4*4), block1, append([]uint64{1, ptr(m.r2), ptr(m.p2), ptr(m.arg2)}, pool2.params()...)...); err != nil {
		return err
	}
	// logits [n, 10] = flatten(p2) [n, 800] · W [800, 10] + b.
	if err := (gemmCall{m: n, n: cnnClasses, k: cnnFC, batch: 1, alpha: 1,
		a: m.p2, lda: cnnFC, b: P[pFCW], ldb: cnnClasses, c: m.logits, ldc: cnnClasses}).run(d); err != nil {
		return err
	}
	if err := d.launch("add_bias", grid1(n*cnnClasses), block1, ptr(m.logits), ptr(P[pFCB]), i64(n), i64(cnnClasses), i64(1)); err != nil {
		return err
	}
	return d.launch("xent_fwd", rowGrid(n), rowBlock(cnnClasses), ptr(m.logits), ptr(m.labels), 0,
		i64(n), i64(cnnClasses), ptr(m.rowMax), ptr(m.logSum), ptr(m.perRow))
}

// Step trains on one batch, images float32 [n, 1, 28, 28] and labels [n]
// with 1 <= n <= Batch(): forward, mean softmax cross-entropy, backward
// and one optimizer update, with batch norm on the batch's statistics
// (updating its moving ones), as models/mnist.Train's step. The loss stays
// on the device; LossSum reads it.
func (m *MNISTCNN) Step(images, labels *tensor.Tensor) error {
	n, err := m.batchInput("step", images, labels)
	if err != nil {
		return err
	}
	d, P, G := m.d, m.params, m.grads
	return d.do(func() error {
		if err := m.upload(n, images); err != nil {
			return err
		}
		if err := m.forward(n, true); err != nil {
			return err
		}
		if err := d.launch("sum_all", [3]int{1, 1, 1}, block1, ptr(m.perRow), ptr(m.loss), i64(n), f64(1/float64(n))); err != nil {
			return err
		}
		if err := d.launch("loss_acc", [3]int{1, 1, 1}, [3]int{1, 1, 1}, ptr(m.loss), ptr(m.lossSum)); err != nil {
			return err
		}
		// dlogits = (softmax - onehot)/n.
		if err := d.launch("xent_bwd", rowGrid(n), rowBlock(cnnClasses), ptr(m.logits), ptr(m.labels), 0, i64(n), i64(cnnClasses),
			ptr(m.rowMax), ptr(m.logSum), ptr(m.one), 0, f64(1/float64(n)), ptr(m.dLogits), 0); err != nil {
			return err
		}
		// fc: dW = p2ᵀ·dlogits, db = Σ_rows dlogits, dp2 = dlogits·Wᵀ.
		if err := (gemmCall{transA: true, m: cnnFC, n: cnnClasses, k: n, batch: 1, alpha: 1,
			a: m.p2, lda: cnnFC, b: m.dLogits, ldb: cnnClasses, c: G[pFCW], ldc: cnnClasses}).run(d); err != nil {
			return err
		}
		if err := d.launch("channel_sum", rowGrid(cnnClasses), block1, ptr(m.dLogits), ptr(G[pFCB]), i64(n), i64(cnnClasses), i64(1)); err != nil {
			return err
		}
		if err := (gemmCall{transB: true, m: n, n: cnnFC, k: cnnClasses, batch: 1, alpha: 1,
			a: m.dLogits, lda: cnnClasses, b: P[pFCW], ldb: cnnClasses, c: m.dP2, ldc: cnnFC}).run(d); err != nil {
			return err
		}
		// pool2 and relu2.
		pool2 := m.pool2x2(n*50, 8, 8)
		if err := d.launch("pool_bwd", grid1(n*50*8*8), block1, append([]uint64{1, ptr(m.dP2), ptr(m.arg2), ptr(m.dR2)}, pool2.params()...)...); err != nil {
			return err
		}
		if err := d.launch("unary_bwd", grid1(n*50*8*8), block1, i64(unaryCodes["relu"]), ptr(m.a2), ptr(m.r2), ptr(m.dR2), ptr(m.dA2),
			i64(n*50*8*8), f64(0), f64(0)); err != nil {
			return err
		}
		// conv2: dx into the batch norm's output gradient, dw, db.
		if err := m.convGrads(m.conv2, view(m.dA2, n, 50, 8, 8), view(m.dB1, n, 20, 12, 12), G[pConv2W], G[pConv2B]); err != nil {
			return err
		}
		if err := m.bn.backward(view(m.dB1, n, 20, 12, 12), view(m.dP1, n, 20, 12, 12), G[pGamma], G[pBeta]); err != nil {
			return err
		}
		// pool1 and relu1.
		pool1 := m.pool2x2(n*20, 24, 24)
		if err := d.launch("pool_bwd", grid1(n*20*24*24), block1, append([]uint64{1, ptr(m.dP1), ptr(m.arg1), ptr(m.dR1)}, pool1.params()...)...); err != nil {
			return err
		}
		if err := d.launch("unary_bwd", grid1(n*20*24*24), block1, i64(unaryCodes["relu"]), ptr(m.a1), ptr(m.r1), ptr(m.dR1), ptr(m.dA1),
			i64(n*20*24*24), f64(0), f64(0)); err != nil {
			return err
		}
		// conv1: dw and db only.
		if err := m.convGrads(m.conv1, view(m.dA1, n, 20, 24, 24), nil, G[pConv1W], G[pConv1B]); err != nil {
			return err
		}
		if err := m.opt.step(G); err != nil {
			return err
		}
		m.steps++
		return nil
	})
}

// convGrads writes the gradients of the convolution c (as last checked)
// for gout: dx when not nil, dw, and db = Σ over images and pixels;
// called inside do.
func (m *MNISTCNN) convGrads(c *Conv2D, gout, dx, dw, db *Buffer) error {
	og, kg, p, z := c.o/c.group, c.g.rows()/c.group, c.g.cols(), c.n*c.group
	if dx != nil {
		if err := c.dataGrad(dx, gout, og, kg, p, z); err != nil {
			return err
		}
	}
	if err := c.filterGrad(dw, gout, og, kg, p, z); err != nil {
		return err
	}
	return m.d.launch("channel_sum", rowGrid(c.o), block1, ptr(gout), ptr(db), i64(c.n), i64(c.o), i64(p))
}

// LossSum returns the sum of the batch losses of the steps since the last
// call and their number, and starts a new sum: one copy from the device.
func (m *MNISTCNN) LossSum() (sum float64, steps int, err error) {
	h := tensor.Zeros(tensor.Float64, 1)
	err = m.d.do(func() error {
		if err := m.d.copyDtoH(h, m.lossSum); err != nil {
			return err
		}
		return m.d.zero(m.lossSum)
	})
	if err != nil {
		return 0, 0, err
	}
	steps, m.steps = m.steps, 0
	return h.Float64s()[0], steps, nil
}

// Eval runs the network in inference mode (batch norm on its moving
// statistics) on one batch and adds its number of correct predictions and
// its summed loss to totals on the device, which EvalTotals reads.
func (m *MNISTCNN) Eval(images, labels *tensor.Tensor) error {
	n, err := m.batchInput("eval", images, labels)
	if err != nil {
		return err
	}
	err = m.d.do(func() error {
		if err := m.upload(n, images); err != nil {
			return err
		}
		if err := m.forward(n, false); err != nil {
			return err
		}
		return m.d.launch("eval_acc", [3]int{1, 1, 1}, block1, ptr(m.logits), ptr(m.labels), ptr(m.perRow),
			i64(n), i64(cnnClasses), ptr(m.evalStats))
	})
	if err == nil {
		m.evalN += n
	}
	return err
}

// EvalTotals returns the accuracy and mean loss over the images of the
// Eval calls since the last call, and clears the totals.
func (m *MNISTCNN) EvalTotals() (accuracy, loss float64, images int, err error) {
	h := tensor.Zeros(tensor.Float64, 2)
	err = m.d.do(func() error {
		if err := m.d.copyDtoH(h, m.evalStats); err != nil {
			return err
		}
		return m.d.zero(m.evalStats)
	})
	if err != nil {
		return 0, 0, 0, err
	}
	images, m.evalN = m.evalN, 0
	if images == 0 {
		return 0, 0, 0, nil
	}
	s := h.Float64s()
	return s[0] / float64(images), s[1] / float64(images), images, nil
}

// copyDtoH copies b into the host tensor t of its dtype and size, queued
// behind the work before it; called inside do, whose wait for the stream
// makes t valid once do returns.
func (d *Device) copyDtoH(t *tensor.Tensor, b *Buffer) error {
	if b.bytes() == 0 {
		return nil
	}
	err := cu.MemcpyDtoHAsync(hostPtr(t), cu.DevicePtr(b.ptr), int64(b.bytes()), d.stream)
	runtime.KeepAlive(t)
	if err != nil {
		return &Error{Call: "cuMemcpyDtoHAsync", Detail: fmt.Sprintf("%v from 0x%x", b, b.ptr), Err: err}
	}
	return nil
}

// Free releases every device buffer of the CNN and its optimizer.
func (m *MNISTCNN) Free() {
	if m.opt != nil {
		m.opt.Free()
	}
	m.bn.Free()
	m.bnEval.Free()
	freeAll(m.params...)
	freeAll(m.grads...)
	freeAll(m.x, m.a1, m.r1, m.p1, m.b1, m.a2, m.r2, m.p2, m.logits, m.arg1, m.arg2, m.labels,
		m.rowMax, m.logSum, m.perRow, m.loss, m.one, m.dLogits, m.dP2, m.dR2, m.dA2, m.dB1, m.dP1, m.dR1, m.dA1,
		m.lossSum, m.evalStats)
}
