//go:build cuda

package cuda

import (
	"fmt"
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// factory builds an op's kernel on d from the CPU op's typed attributes
// (its <Op>Attrs, as ops.Attributed gives them).
type factory func(d *Device, attrs any) (kernel, error)

// typed makes a factory of f, which takes the op's typed attributes A.
func typed[A any](f func(d *Device, a A) (kernel, error)) factory {
	return func(d *Device, attrs any) (kernel, error) {
		a, ok := attrs.(A)
		if !ok {
			return kernel{}, fmt.Errorf("attributes %T, want %T", attrs, *new(A))
		}
		return f(d, a)
	}
}

// kernels maps each op of package ops whose declaration says
// CUDA: ops.DeviceKernel (kernelOps, generated) to its factory; init adds
// the elementwise ops and reductions from their code tables and registers
// every entry of kernelOps with ops, so that ops.Dispatch runs the op here
// for inputs on a Device. Each must have a float32 golden that
// TestParityGoldens runs on the device (TestEveryCUDAKernelIsTested).
var kernels = map[string]factory{
	"softmax":                    softmaxKernel(false),
	"log_softmax":                softmaxKernel(true),
	"softmax_cross_entropy":      xentKernel(false),
	"softmax_cross_entropy_soft": xentKernel(true),
	"matmul":                     typed(matmulKernel),
	"linear":                     typed(linearKernel),
	"conv2d":                     typed(convKernel),
	"conv2d_transpose":           typed(convTransposeKernel),
	"max_pool2d":                 poolKernel(true),
	"avg_pool2d":                 poolKernel(false),
	"batch_norm":                 typed(batchNormKernel),
	"layer_norm":                 typed(layerNormKernel),
	"rms_norm":                   typed(rmsNormKernel),
	"embedding":                  typed(embeddingKernel),
	"attention":                  typed(attentionKernel),
	"lstm":                       typed(lstmKernel),
	"lstm_cell":                  typed(lstmCellKernel),
	"gru":                        typed(gruKernel),
	"gru_cell":                   typed(gruCellKernel),
	"sequence_pool":              typed(seqPoolKernel),
	"sequence_softmax":           typed(seqSoftmaxKernel),
	"sequence_expand":            seqRowsKernel("sequence_expand"),
	"sequence_reverse":           seqRowsKernel("sequence_reverse"),
	"sequence_slice":             seqRowsKernel("sequence_slice"),
	"sequence_concat":            typed(seqConcatKernel),
}

// registerErrs holds the registrations ops refused (a name it does not
// know); TestEveryCUDAKernelIsTested fails on any.
var registerErrs []error

func init() {
	for name := range unaryCodes {
		kernels[name] = unaryKernel(name)
	}
	for name := range binaryCodes {
		kernels[name] = binaryKernel(name)
	}
	for name := range reduceCodes {
		kernels[name] = reduceKernel(name)
	}
	for name := range kernels {
		if !slices.Contains(kernelOps, name) {
			registerErrs = append(registerErrs, fmt.Errorf("cuda: %s has a kernel but its declaration does not say CUDA: ops.DeviceKernel", name))
		}
	}
	for _, name := range kernelOps {
		f, ok := kernels[name]
		if !ok {
			registerErrs = append(registerErrs, fmt.Errorf("cuda: %s's declaration says CUDA: ops.DeviceKernel but kernels has no factory", name))
			continue
		}
		err := ops.RegisterKernel(name, "cuda", tensor.Float32, func(dev tensor.Device, a any) (ops.Op, error) {
			d, ok := dev.(*Device)
			if !ok {
				return nil, fmt.Errorf("cuda: kernel of %s asked for device %v", name, dev)
			}
			k, err := f(d, a)
			if err != nil {
				return nil, err
			}
			return &op{name: name, d: d, k: k}, nil
		})
		if err != nil {
			registerErrs = append(registerErrs, err)
		}
	}
	for _, name := range layoutOps {
		err := ops.RegisterKernel(name, "cuda", tensor.Float32, func(dev tensor.Device, a any) (ops.Op, error) {
			r, ok := a.(ops.ReshapeAttrs)
			if !ok {
				return nil, fmt.Errorf("cuda: %s: attributes %T, want ops.ReshapeAttrs", name, a)
			}
			return &reshapeOp{d: dev.(*Device), shape: r.Shape}, nil
		})
		if err != nil {
			registerErrs = append(registerErrs, err)
		}
	}
	for _, name := range fallbacks {
		if err := ops.RegisterFallback(name, "cuda", tensor.Float32); err != nil {
			registerErrs = append(registerErrs, err)
		}
	}
	if err := ops.RegisterUpdate("cuda", update, clip); err != nil {
		registerErrs = append(registerErrs, err)
	}
}

// one returns the single gradient g as a gradient list.
func one(g *Buffer, err error) ([]*Buffer, error) { return []*Buffer{g}, err }

func unaryKernel(name string) factory {
	return typed(func(d *Device, a ops.UnaryAttrs) (kernel, error) {
		p := a.Params(name)
		return kernel{
			forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
				return d.unaryFwd(name, in[0], p...)
			},
			backward: func(in []*Buffer, out, gout *Buffer, _ []bool) ([]*Buffer, error) {
				return one(d.unaryBwd(name, in[0], out, gout, p...))
			},
		}, nil
	})
}

func binaryKernel(name string) factory {
	return typed(func(d *Device, _ ops.NoAttrs) (kernel, error) {
		return kernel{
			forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
				as, bs := in[0].shape, in[1].shape
				if len(bs) > len(as) || !slices.Equal(as[len(as)-len(bs):], bs) {
					return nil, fmt.Errorf("%s of %v and %v: %w (b of a's shape or of its trailing dims)", name, as, bs, errUnsupported)
				}
				return d.binaryFwd(name, in[0], in[1])
			},
			backward: func(in []*Buffer, out, gout *Buffer, need []bool) ([]*Buffer, error) {
				da, db, err := d.binaryBwd(name, in[0], in[1], out, gout, at(need, 0), at(need, 1))
				return []*Buffer{da, db}, err
			},
		}, nil
	})
}

func reduceKernel(name string) factory {
	return typed(func(d *Device, a ops.ReduceAttrs) (kernel, error) {
		o := d.reduceOp(name, a.Axes, a.KeepDims)
		return kernel{
			forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
				return o.Forward(in[0])
			},
			backward: func(_ []*Buffer, _, gout *Buffer, _ []bool) ([]*Buffer, error) { return one(o.Backward(gout)) },
			free:     o.Free,
		}, nil
	})
}

func softmaxKernel(log bool) factory {
	return typed(func(d *Device, a ops.SoftmaxAttrs) (kernel, error) {
		fwd, bwd := d.softmaxFwd, d.softmaxBwd
		if log {
			fwd, bwd = d.logSoftmaxFwd, d.logSoftmaxBwd
		}
		return kernel{
			forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
				return fwd(in[0], a.Axis)
			},
			backward: func(_ []*Buffer, out, gout *Buffer, _ []bool) ([]*Buffer, error) { return one(bwd(out, gout, a.Axis)) },
		}, nil
	})
}

func xentKernel(soft bool) factory {
	return typed(func(d *Device, a ops.LossAttrs) (kernel, error) {
		r := a.Reduction
		o := d.softmaxXentOp(r)
		if soft {
			o = d.softmaxXentSoftOp(r)
		}
		return kernel{
			forward: func(in []*Buffer, host func(int) (*tensor.Tensor, error)) (*Buffer, error) {
				if soft {
					return o.ForwardSoft(in[0], in[1])
				}
				labels, err := host(1) // the kernel takes the labels from the host, as ops reads them
				if err != nil {
					return nil, err
				}
				return o.Forward(in[0], labels)
			},
			backward: func(_ []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
				dz, dy, err := o.Backward(gout, soft && at(need, 1))
				return []*Buffer{dz, dy}, err
			},
			free: o.Free,
		}, nil
	})
}

func matmulKernel(d *Device, a ops.MatMulAttrs) (kernel, error) {
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			return d.matMul(in[0], in[1], a.TransposeA, a.TransposeB)
		},
		backward: func(in []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
			da, db, err := d.matMulGrad(in[0], in[1], gout, a.TransposeA, a.TransposeB, at(need, 0), at(need, 1))
			return []*Buffer{da, db}, err
		},
	}, nil
}

// linearKernel is x·W (+ b) as ops.LinearOp: x [..., In] flattened to
// [N, In] for the GEMM, the bias added along the last axis, and its
// gradient the column sums of gout.
func linearKernel(d *Device, _ ops.NoAttrs) (kernel, error) {
	const name = "linear"
	rows := func(b *Buffer) *Buffer {
		n := b.shape[len(b.shape)-1]
		return &Buffer{dev: b.dev, ptr: b.ptr, dtype: b.dtype, shape: tensor.Shape{b.Size() / max(n, 1), n}, gone: b.gone}
	}
	var sum *reduceLauncher
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			if err := d.checkInputs(name, in...); err != nil {
				return nil, err
			}
			x, w := in[0], in[1]
			y, err := d.matMul(rows(x), w, false, false)
			if err != nil {
				return nil, err
			}
			if len(in) == 3 {
				yb, err := d.binaryFwd("add", y, in[2])
				freeAll(y)
				if y = yb; err != nil {
					return nil, err
				}
			}
			y.shape = append(x.shape[:len(x.shape)-1:len(x.shape)-1], w.shape[1])
			return y, nil
		},
		backward: func(in []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
			g := rows(gout)
			dx, dw, err := d.matMulGrad(rows(in[0]), in[1], g, false, false, at(need, 0), at(need, 1))
			if err != nil {
				return nil, err
			}
			if dx != nil {
				dx.shape = in[0].shape.Clone()
			}
			grads := []*Buffer{dx, dw}
			if len(in) == 3 && at(need, 2) {
				sum = d.reduceOp("sum", []int{0}, false)
				db, err := sum.Forward(g)
				sum.Free()
				if err != nil {
					freeAll(dx, dw)
					return nil, err
				}
				grads = append(grads, db)
			}
			return grads, nil
		},
	}, nil
}

// convLike is the kernel of an op with inputs x, w and an optional bias
// and a Forward(x, w, b) / Backward(gout, need) pair.
func convLike(name string, fwd func(x, w, b *Buffer) (*Buffer, error), bwd func(gout *Buffer, need [3]bool) (dx, dw, db *Buffer, err error)) kernel {
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			var b *Buffer // input count checked by ops.Dispatch (the op's Check)
			if len(in) == 3 {
				b = in[2]
			}
			return fwd(in[0], in[1], b)
		},
		backward: func(in []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
			dx, dw, db, err := bwd(gout, [3]bool{at(need, 0), at(need, 1), len(in) == 3 && at(need, 2)})
			return []*Buffer{dx, dw, db}, err
		},
	}
}

func convKernel(d *Device, c ops.Conv2DAttrs) (kernel, error) {
	o := d.conv2dOp(c)
	return convLike("conv2d", o.Forward, o.Backward), nil
}

func convTransposeKernel(d *Device, c ops.Conv2DTransposeAttrs) (kernel, error) {
	o := d.conv2dTransposeOp(c)
	return convLike("conv2d_transpose", o.Forward, o.Backward), nil
}

func poolKernel(isMax bool) factory {
	return typed(func(d *Device, p ops.Pool2DAttrs) (kernel, error) {
		// The kernels are TF's pools: dilated, ceil-mode and
		// count-include-pad pools run the CPU op on host copies.
		if p.Dilation[0] > 1 || p.Dilation[1] > 1 || p.CeilMode || p.CountIncludePad {
			return kernel{}, fmt.Errorf("%s with dilation %v, ceil_mode %v, count_include_pad %v: %w",
				map[bool]string{true: "max_pool2d", false: "avg_pool2d"}[isMax], p.Dilation, p.CeilMode, p.CountIncludePad, ops.ErrFallback)
		}
		o := d.avgPool2DOp(p)
		if isMax {
			o = d.maxPool2DOp(p)
		}
		return single(o.name(), o.Forward, o.Backward, o.Free), nil
	})
}

// single is the kernel of a one-input op with a Forward(x) / Backward(gout)
// pair and saved state that free releases.
func single(name string, fwd func(x *Buffer) (*Buffer, error), bwd func(gout *Buffer) (*Buffer, error), free func()) kernel {
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			return fwd(in[0])
		},
		backward: func(_ []*Buffer, _, gout *Buffer, _ []bool) ([]*Buffer, error) { return one(bwd(gout)) },
		free:     free,
	}
}

func batchNormKernel(d *Device, a ops.BatchNormAttrs) (kernel, error) {
	o := d.batchNormOp(a)
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			return o.Forward(in[0], in[1], in[2], in[3], in[4])
		},
		backward: func(_ []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
			dx, dg, db, err := o.Backward(gout, [3]bool{at(need, 0), at(need, 1), at(need, 2)})
			return []*Buffer{dx, dg, db}, err
		},
		free: o.Free,
	}, nil
}

func layerNormKernel(d *Device, a ops.LayerNormAttrs) (kernel, error) {
	o := d.layerNormOp(a.NormAxes, a.Epsilon)
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			return o.Forward(in[0], in[1], in[2])
		},
		backward: func(_ []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
			dx, dg, db, err := o.Backward(gout, [3]bool{at(need, 0), at(need, 1), at(need, 2)})
			return []*Buffer{dx, dg, db}, err
		},
		free: o.Free,
	}, nil
}

// rmsNormKernel is ops.RMSNormOp on the device: rms_fwd and rms_bwd_dx
// (kernels/layernorm.cu), and dgamma through layer norm's parameter sums
// with the means held at zero.
func rmsNormKernel(d *Device, a ops.RMSNormAttrs) (kernel, error) {
	const name = "rms_norm"
	ln := d.layerNormOp(1, a.Epsilon) // holds x, gamma and the saved statistics for Backward
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			if err := d.checkInputs(name, in...); err != nil {
				return nil, err
			}
			x, gamma := in[0], in[1]
			ln.Free()
			ln.dim = gamma.shape[0]
			ln.rows, ln.x, ln.gamma = x.Size()/max(ln.dim, 1), x, gamma
			var y *Buffer
			err := d.do(func() error {
				var err error
				if y, err = d.newBuffer(tensor.Float32, x.shape); err != nil {
					return err
				}
				if ln.mean, err = d.newBuffer(tensor.Float64, tensor.Shape{ln.rows}); err != nil {
					return err
				}
				if err := d.zero(ln.mean); err != nil { // RMS norm is layer norm about zero
					return err
				}
				if ln.invStd, err = d.newBuffer(tensor.Float64, tensor.Shape{ln.rows}); err != nil || ln.rows == 0 || ln.dim == 0 {
					return err
				}
				return d.launch("rms_fwd", rowGrid(ln.rows), rowBlock(ln.dim), ptr(x), ptr(gamma), ptr(y), ptr(ln.invStd),
					i64(ln.rows), i64(ln.dim), f64(a.Epsilon))
			})
			if err != nil {
				ln.Free()
			}
			return done(y, err)
		},
		backward: func(_ []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
			_, dgamma, _, err := ln.Backward(gout, [3]bool{false, at(need, 1), false})
			if err != nil || !at(need, 0) {
				return []*Buffer{nil, dgamma}, err
			}
			var dx *Buffer
			err = d.do(func() error {
				var err error
				if dx, err = d.newBuffer(tensor.Float32, ln.x.shape); err != nil || ln.rows == 0 || ln.dim == 0 {
					return err
				}
				return d.launch("rms_bwd_dx", rowGrid(ln.rows), rowBlock(ln.dim), ptr(ln.x), ptr(ln.gamma), ptr(gout),
					ptr(ln.invStd), ptr(dx), i64(ln.rows), i64(ln.dim))
			})
			if err != nil {
				freeAll(dx, dgamma)
				return nil, err
			}
			return []*Buffer{dx, dgamma}, nil
		},
		free: ln.Free,
	}, nil
}

func embeddingKernel(d *Device, a ops.EmbeddingAttrs) (kernel, error) {
	o := d.embeddingOp(a.PaddingIdx)
	return kernel{
		forward: func(in []*Buffer, host func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			ids, err := host(1) // the lookup plan is made on the host, as ops makes it
			if err != nil {
				return nil, err
			}
			return o.Forward(in[0], ids)
		},
		backward: func(_ []*Buffer, _, gout *Buffer, _ []bool) ([]*Buffer, error) { return one(o.Backward(gout)) },
	}, nil
}

func attentionKernel(d *Device, a ops.AttentionAttrs) (kernel, error) {
	o := d.attentionOp(a)
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			var mask *Buffer // input count checked by ops.Dispatch (attentionOp.Check)
			if len(in) == 4 {
				mask = in[3]
			}
			return o.Forward(in[0], in[1], in[2], mask)
		},
		backward: func(_ []*Buffer, _, gout *Buffer, _ []bool) ([]*Buffer, error) {
			dq, dk, dv, err := o.Backward(gout)
			return []*Buffer{dq, dk, dv}, err
		},
		free: o.Free,
	}, nil
}

// rnnKernel is the kernel of a fused recurrent op whose inputs map onto
// the launcher's argument slots (slots[i] is input i's slot) and whose
// Backward returns the gradients by slot.
func rnnKernel[G [5]*Buffer | [7]*Buffer, N [5]bool | [7]bool](name string, slots func(n int) ([]int, error),
	fwd func(b []*Buffer) (*Buffer, error), bwd func(gout *Buffer, need N) (G, error), free func()) kernel {
	var order []int
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			var err error
			if order, err = slots(len(in)); err != nil {
				return nil, opError(name, in, "%v", err)
			}
			var b [7]*Buffer
			for i, s := range order {
				b[s] = in[i]
			}
			return fwd(b[:])
		},
		backward: func(_ []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
			var n N
			for i, s := range order {
				n[s] = at(need, i)
			}
			g, err := bwd(gout, n)
			if err != nil {
				return nil, err
			}
			out := make([]*Buffer, len(order))
			for i, s := range order {
				out[i], g[s] = g[s], nil
			}
			for i := range len(g) {
				g[i].Free()
			}
			return out, nil
		},
		free: free,
	}
}

// lstmSlots maps lstm's inputs x, W, U, b, [peephole], [h0, c0] onto the
// launcher's slots.
func lstmSlots(n int) ([]int, error) {
	s := []int{lstmGradX, lstmGradW, lstmGradU, lstmGradB}
	switch n {
	case 4:
	case 5:
		s = append(s, lstmGradPeephole)
	case 6:
		s = append(s, lstmGradH0, lstmGradC0)
	case 7:
		s = append(s, lstmGradPeephole, lstmGradH0, lstmGradC0)
	default:
		return nil, fmt.Errorf("want x, W, U, b, an optional peephole and optional h0, c0; got %d inputs", n)
	}
	return s, nil
}

// lstmFor returns the fused LSTM's launcher for a's form; the kernels
// take the four activations ops.RNNActivation names.
func lstmFor(d *Device, a ops.LSTMAttrs) (*lstmLauncher, error) {
	for _, act := range []ops.RNNActivation{a.Candidate, a.Cell} {
		if act < ops.ActTanh || act > ops.ActIdentity {
			return nil, fmt.Errorf("lstm activation %v: want tanh, sigmoid, relu or identity", act)
		}
	}
	return d.lstmOp(ops.LSTMAttrs{Offsets: a.Offsets, Reverse: a.Reverse, Candidate: a.Candidate, Cell: a.Cell}), nil
}

func lstmKernel(d *Device, a ops.LSTMAttrs) (kernel, error) {
	o, err := lstmFor(d, a)
	if err != nil {
		return kernel{}, err
	}
	return rnnKernel("lstm", lstmSlots, func(b []*Buffer) (*Buffer, error) { return o.Forward(b[0], b[1], b[2], b[3], b[4], b[5], b[6]) },
		o.Backward, o.Free), nil
}

// lstmCellKernel is one step of the fused LSTM over B one-step sequences;
// its inputs are x, h, c, W, U, b and an optional peephole.
func lstmCellKernel(d *Device, a ops.LSTMCellAttrs) (kernel, error) {
	if _, err := lstmFor(d, ops.LSTMAttrs{Candidate: a.Candidate, Cell: a.Cell}); err != nil {
		return kernel{}, err
	}
	var o *lstmLauncher
	slots := func(n int) ([]int, error) {
		s := []int{lstmGradX, lstmGradH0, lstmGradC0, lstmGradW, lstmGradU, lstmGradB, lstmGradPeephole}
		if n != 6 && n != 7 {
			return nil, fmt.Errorf("want x, h, c, W, U, b and an optional peephole; got %d inputs", n)
		}
		return s[:n], nil
	}
	fwd := func(b []*Buffer) (*Buffer, error) {
		o = d.lstmOp(ops.LSTMAttrs{Offsets: steps(b[0].shape[0]), Candidate: a.Candidate, Cell: a.Cell})
		return o.Forward(b[0], b[1], b[2], b[3], b[4], b[5], b[6])
	}
	bwd := func(gout *Buffer, need [7]bool) ([7]*Buffer, error) { return o.Backward(gout, need) }
	return rnnKernel("lstm_cell", slots, fwd, bwd, func() {
		if o != nil {
			o.Free()
		}
	}), nil
}

// steps returns the offsets of n one-step sequences.
func steps(n int) []int {
	off := make([]int, n+1)
	for i := range off {
		off[i] = i
	}
	return off
}

func gruKernel(d *Device, a ops.GRUAttrs) (kernel, error) {
	o := d.gruOp(a)
	slots := func(n int) ([]int, error) {
		if n != 4 && n != 5 {
			return nil, fmt.Errorf("want x, W, U, b and an optional h0; got %d inputs", n)
		}
		return []int{gruGradX, gruGradW, gruGradU, gruGradB, gruGradH0}[:n], nil
	}
	return rnnKernel("gru", slots, func(b []*Buffer) (*Buffer, error) { return o.Forward(b[0], b[1], b[2], b[3], b[4]) },
		o.Backward, o.Free), nil
}

// gruCellKernel is one step of the fused GRU over B one-step sequences;
// its inputs are x, h, W, U, b.
func gruCellKernel(d *Device, a ops.GRUCellAttrs) (kernel, error) {
	var o *gruLauncher
	slots := func(n int) ([]int, error) {
		if n != 5 {
			return nil, fmt.Errorf("want x, h, W, U and b; got %d inputs", n)
		}
		return []int{gruGradX, gruGradH0, gruGradW, gruGradU, gruGradB}, nil
	}
	fwd := func(b []*Buffer) (*Buffer, error) {
		o = d.gruOp(ops.GRUAttrs{Offsets: steps(b[0].shape[0]), ResetAfter: a.ResetAfter})
		return o.Forward(b[0], b[1], b[2], b[3], b[4])
	}
	bwd := func(gout *Buffer, need [5]bool) ([5]*Buffer, error) { return o.Backward(gout, need) }
	return rnnKernel("gru_cell", slots, fwd, bwd, func() {
		if o != nil {
			o.Free()
		}
	}), nil
}

func seqPoolKernel(d *Device, a ops.SequencePoolAttrs) (kernel, error) {
	o := d.sequencePoolOp(a.Pool, a.Pad, a.Offsets)
	return single("sequence_pool", o.Forward, o.Backward, o.Free), nil
}

func seqSoftmaxKernel(d *Device, a ops.SequenceAttrs) (kernel, error) {
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			return d.sequenceSoftmaxFwd(in[0], a.Offsets)
		},
		backward: func(_ []*Buffer, out, gout *Buffer, _ []bool) ([]*Buffer, error) {
			return one(d.sequenceSoftmaxBwd(out, gout, a.Offsets))
		},
	}, nil
}

// seqRowsKernel serves sequence_expand, sequence_reverse and
// sequence_slice, which move whole rows.
func seqRowsKernel(name string) factory {
	if name == "sequence_slice" {
		return typed(func(d *Device, a ops.SequenceSliceAttrs) (kernel, error) {
			o := d.sequenceSliceOp(a.Offsets, a.Starts, a.Lengths)
			return single(name, o.Forward, o.Backward, nil), nil
		})
	}
	return typed(func(d *Device, a ops.SequenceAttrs) (kernel, error) {
		o := d.sequenceExpandOp(a.Offsets)
		if name == "sequence_reverse" {
			o = d.sequenceReverseOp(a.Offsets)
		}
		return single(name, o.Forward, o.Backward, nil), nil
	})
}

func seqConcatKernel(d *Device, a ops.SequenceConcatAttrs) (kernel, error) {
	o := d.sequenceConcatOp(a.Offsets, a.OffsetsB)
	return kernel{
		forward: func(in []*Buffer, _ func(int) (*tensor.Tensor, error)) (*Buffer, error) {
			return o.Forward(in[0], in[1])
		},
		backward: func(_ []*Buffer, _, gout *Buffer, need []bool) ([]*Buffer, error) {
			da, db, err := o.Backward(gout, [2]bool{at(need, 0), at(need, 1)})
			return []*Buffer{da, db}, err
		},
	}, nil
}
