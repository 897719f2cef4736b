package graph

import (
	"github.com/plumbml/plumb/tensor"
)

// Param is a named tensor that outlives tapes: a layer's weights, or a
// non-trainable state such as batch norm's running mean (Keras'
// non-trainable weights). Backward adds into Grad; optimizers read Grad and
// update Value in place.
type Param struct {
	Name      string
	Value     *tensor.Tensor
	Grad      *tensor.Tensor // nil until the first Backward that reaches it
	Trainable bool
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

// ZeroGrad clears the accumulated gradient, keeping its buffer.
func (p *Param) ZeroGrad() {
	if p.Grad != nil {
		p.Grad.Fill(0)
	}
}

func (p *Param) addGrad(g *tensor.Tensor) {
	if p.Grad == nil || !p.Grad.Shape().Equal(p.Value.Shape()) {
		p.Grad = g.Clone()
		return
	}
	switch dst := p.Grad.Raw().(type) {
	case []float32:
		for i, v := range g.Float32s() {
			dst[i] += v
		}
	case []float64:
		for i, v := range g.Float64s() {
			dst[i] += v
		}
	}
}

// ZeroGrads clears the gradients of every parameter in ps.
func ZeroGrads(ps []*Param) {
	for _, p := range ps {
		p.ZeroGrad()
	}
}
