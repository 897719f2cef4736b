package graph

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Param is a named tensor that outlives tapes: a layer's weights, or a
// non-trainable state such as batch norm's running mean (Keras'
// non-trainable weights). Backward adds into its gradient; optimizers read
// the gradient and update Value in place.
//
// The gradient has one of two forms, never both: Grad, dense and of
// Value's shape, or SparseGrad, the few rows that are nonzero. Backward
// keeps it sparse while the parameter is read only through ops that are
// ops.SparseGrader (an embedding table's lookups), so a step over a large
// table costs the looked-up rows, not the table (TensorFlow's IndexedSlices,
// PyTorch's sparse embedding gradients). Any dense use on a tape, or a
// dense gradient already held, makes it dense: the sparse parts are then
// added into the dense gradient. DenseGrad gives either form as a dense
// tensor.
type Param struct {
	Name       string
	Value      *tensor.Tensor
	Grad       *tensor.Tensor // nil until the first Backward that reaches it, and while the gradient is sparse
	SparseGrad *SparseRows    // nil unless the gradient is sparse
	Trainable  bool

	// The Backward or optimizer step holding the parameter, and the
	// value's version (claim.go).
	guard paramGuard
}

// NewParam returns a trainable parameter.
func NewParam(name string, v *tensor.Tensor) *Param {
	return &Param{Name: name, Value: v, Trainable: true}
}

// NewState returns a non-trainable parameter: saved in checkpoints, never
// given a gradient or updated by an optimizer.
func NewState(name string, v *tensor.Tensor) *Param {
	return &Param{Name: name, Value: v}
}

// ZeroGrad clears the accumulated gradient: a dense one is zero-filled,
// keeping its buffer; a sparse one becomes a sparse gradient with no rows.
// Either way the parameter still has a (zero) gradient, so the two forms
// behave alike in an optimizer step.
func (p *Param) ZeroGrad() {
	switch {
	case p.Grad != nil:
		p.Grad.Fill(0)
		p.SparseGrad = nil
	case p.SparseGrad != nil && p.Value != nil:
		p.SparseGrad = emptyRows(p.Value)
	default:
		p.SparseGrad = nil
	}
}

// DenseGrad returns the gradient as a dense tensor of Value's shape: Grad
// itself (not a copy) when the gradient is dense, a new tensor holding
// SparseGrad's rows when it is sparse, nil when there is none. It fails
// for a sparse gradient that does not fit Value, or for both forms at once.
func (p *Param) DenseGrad() (*tensor.Tensor, error) {
	switch {
	case p.SparseGrad == nil:
		return p.Grad, nil
	case p.Grad != nil:
		return nil, fmt.Errorf("graph: parameter %q has both a dense and a sparse gradient", p.Name)
	}
	if err := p.SparseGrad.Validate(p.Value); err != nil {
		return nil, fmt.Errorf("parameter %q: %w", p.Name, err)
	}
	g := tensor.ZerosLike(p.Value)
	scatterAdd(g, p.SparseGrad)
	return g, nil
}

// fits reports whether a gradient tensor g can accumulate into p.
func (p *Param) fits(g *tensor.Tensor) bool {
	return g != nil && g.DType() == p.Value.DType() && tensor.SameShape(g, p.Value)
}

// addGrad adds a dense gradient g of Value's shape; a sparse gradient held
// so far is added into the result, which is dense. A gradient that no
// longer fits Value (the value was replaced) is dropped first.
func (p *Param) addGrad(g *tensor.Tensor) error {
	switch {
	case !p.fits(p.Grad) || p.Grad.Device() != g.Device():
		p.Grad = g.Clone()
	case g.Storage() != nil:
		sum, err := ops.Run(ops.BinaryOp("add"), p.Grad, g)
		if err != nil {
			return fmt.Errorf("graph: parameter %q: %w", p.Name, err)
		}
		p.Grad.Storage().Free() // the parameter's own sum, which nothing else holds
		p.Grad = sum
	default:
		switch dst := p.Grad.Raw().(type) {
		case []float32:
			sumInto(dst, dst, g.Float32s())
		case []float64:
			sumInto(dst, dst, g.Float64s())
		}
	}
	if p.SparseGrad != nil && p.SparseGrad.Validate(p.Value) == nil {
		scatterAdd(p.Grad, p.SparseGrad)
	}
	p.SparseGrad = nil
	return nil
}

// addSparse adds a sparse gradient s, valid for Value: into Grad when the
// gradient is already dense, else merged with the sparse gradient so far.
// s may be kept, so the caller must not change it afterwards.
func (p *Param) addSparse(s *SparseRows) {
	if p.fits(p.Grad) {
		scatterAdd(p.Grad, s)
		return
	}
	p.Grad = nil
	if p.SparseGrad == nil || p.SparseGrad.Validate(p.Value) != nil {
		p.SparseGrad = s
		return
	}
	p.SparseGrad = mergeRows(p.SparseGrad, s)
}

// To moves p's value to dev (nil: host memory) and drops its gradient,
// which belonged to the old place. The value is replaced, not copied into,
// so an optimizer must be made after its parameters have moved.
func (p *Param) To(dev tensor.Device) error {
	if p == nil || p.Value == nil {
		return errors.New("graph: To of a nil parameter or a parameter without a value")
	}
	v, err := p.Value.To(dev)
	if err != nil {
		return fmt.Errorf("graph: parameter %q: %w", p.Name, err)
	}
	p.Value, p.Grad, p.SparseGrad = v, nil, nil
	return nil
}

// ParamsTo moves every parameter of ps to dev (see Param.To): how a model,
// whose parameters its Params method lists, moves to a GPU or back.
func ParamsTo(ps []*Param, dev tensor.Device) error {
	for _, p := range ps {
		if err := p.To(dev); err != nil {
			return err
		}
	}
	return nil
}

// DeviceOf returns the device of the first of ps with a value (nil: host
// memory), the device of a model given its Params: where a training step
// moves its batch (Tape.Move).
func DeviceOf(ps []*Param) tensor.Device {
	for _, p := range ps {
		if p != nil && p.Value != nil {
			return p.Value.Device()
		}
	}
	return nil
}

// ZeroGrads clears the gradients of every parameter in ps.
func ZeroGrads(ps []*Param) {
	for _, p := range ps {
		p.ZeroGrad()
	}
}
