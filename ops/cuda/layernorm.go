//go:build cuda

package cuda

import (
	"github.com/plumbml/plumb/tensor"
)

// layerNormLauncher is one application of ops.LayerNormOp(axes, epsilon) on the
// device: layer normalisation of x over its last axes axes, as Keras'
// LayerNormalization,
//
//	y = gamma·(x - mean)/sqrt(variance + epsilon) + beta
//
// with the mean and biased variance of each row of the normalised axes,
// and gamma and beta of those axes' shape. Forward saves each row's mean
// and 1/sqrt(variance + epsilon) (in float64, as ops) and keeps references
// to x and gamma, which must stay unchanged until Backward; Free releases
// the saved statistics.
type layerNormLauncher struct {
	d       *Device
	axes    int
	epsilon float64

	// Saved by Forward.
	rows, dim    int
	x, gamma     *Buffer
	mean, invStd *Buffer
}

// layerNormOp returns the op of ops.LayerNormOp(axes, epsilon) on the
// device.
func (d *Device) layerNormOp(axes int, epsilon float64) *layerNormLauncher {
	return &layerNormLauncher{d: d, axes: axes, epsilon: epsilon}
}

// Forward normalises x with gamma and beta; see LayerNorm.
func (o *layerNormLauncher) Forward(x, gamma, beta *Buffer) (*Buffer, error) {
	const op = "layer_norm"
	in := []*Buffer{x, gamma, beta}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	norm := x.shape[len(x.shape)-o.axes:] // shapes and epsilon checked by ops.Dispatch (layerNormOp.Check)
	o.Free()
	o.rows, o.dim, o.x, o.gamma = x.shape[:len(x.shape)-o.axes].Size(), norm.Size(), x, gamma
	d := o.d
	var y *Buffer
	err := d.do(func() error {
		var err error
		if y, err = d.newBuffer(tensor.Float32, x.shape); err != nil {
			return err
		}
		if o.mean, err = d.newBuffer(tensor.Float64, tensor.Shape{o.rows}); err != nil {
			return err
		}
		if o.invStd, err = d.newBuffer(tensor.Float64, tensor.Shape{o.rows}); err != nil || o.rows == 0 {
			return err
		}
		return d.launch("ln_fwd", rowGrid(o.rows), rowBlock(o.dim), ptr(x), ptr(gamma), ptr(beta), ptr(y),
			ptr(o.mean), ptr(o.invStd), i64(o.rows), i64(o.dim), f64(o.epsilon))
	})
	if err != nil {
		o.Free()
	}
	return done(y, err)
}

// Layer norm's parameter gradients sum over rows in chunks of at least
// lnChunk rows, at most lnMaxChunks of them, each block of ln_param_part
// covering lnTile columns of one chunk (kernels/layernorm.cu).
const (
	lnChunk     = 64
	lnMaxChunks = 4096
	lnTile      = 32
	lnLanes     = 8
)

// Backward returns the gradients of x, gamma and beta that need asks for
// (nil for the others) for the upstream gradient gout of x's shape: with
// x̂ = (x - mean)/std and g = gout·gamma per row,
// dx = (g - mean(g) - x̂·mean(g·x̂))/std, dgamma = Σ_rows gout·x̂ and
// dbeta = Σ_rows gout (ops' layerNormGrad).
func (o *layerNormLauncher) Backward(gout *Buffer, need [3]bool) (dx, dgamma, dbeta *Buffer, err error) {
	const op = "layer_norm"
	in := []*Buffer{o.x, o.gamma, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, nil, nil, err
	}
	d, rows, dim := o.d, o.rows, o.dim
	err = d.do(func() error {
		var err error
		if need[0] {
			if dx, err = d.newBuffer(tensor.Float32, o.x.shape); err != nil {
				return err
			}
			if rows > 0 && dim > 0 {
				if err := d.launch("ln_bwd_dx", rowGrid(rows), rowBlock(dim), ptr(o.x), ptr(o.gamma), ptr(gout),
					ptr(o.mean), ptr(o.invStd), ptr(dx), i64(rows), i64(dim)); err != nil {
					return err
				}
			}
		}
		if !need[1] && !need[2] {
			return nil
		}
		for _, p := range []struct {
			want bool
			out  **Buffer
		}{{need[1], &dgamma}, {need[2], &dbeta}} {
			if !p.want {
				continue
			}
			if *p.out, err = d.newBuffer(tensor.Float32, o.gamma.shape); err != nil {
				return err
			}
			if rows == 0 { // no rows: the sums are empty
				if err := d.zero(*p.out); err != nil {
					return err
				}
			}
		}
		if rows == 0 || dim == 0 {
			return nil
		}
		chunk := max(lnChunk, (rows+lnMaxChunks-1)/lnMaxChunks)
		chunks := (rows + chunk - 1) / chunk
		part, err := d.newBuffer(tensor.Float64, tensor.Shape{2, chunks, dim})
		if err != nil {
			return err
		}
		defer part.Free()
		partB := uint64(part.ptr) + uint64(chunks*dim*8)
		if err := d.launch("ln_param_part", [3]int{(dim + lnTile - 1) / lnTile, chunks, 1}, [3]int{lnTile, lnLanes, 1},
			ptr(o.x), ptr(gout), ptr(o.mean), ptr(o.invStd), ptr(part), partB, i64(rows), i64(dim), i64(chunk)); err != nil {
			return err
		}
		return d.launch("ln_param_sum", grid1(dim), block1, ptr(part), partB, ptr(dgamma), ptr(dbeta), i64(chunks), i64(dim))
	})
	if err != nil {
		freeAll(dx, dgamma, dbeta)
		return nil, nil, nil, err
	}
	return dx, dgamma, dbeta, nil
}

// Free releases the statistics Forward saved.
func (o *layerNormLauncher) Free() {
	freeAll(o.mean, o.invStd)
	o.mean, o.invStd, o.x, o.gamma = nil, nil, nil, nil
}
