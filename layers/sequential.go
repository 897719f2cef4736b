package layers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plumbml/plumb/graph"
)

// Sequential applies its layers in order.
type Sequential []Layer

// Forward runs x through every layer. A failed value passes straight through
// (every op returns it unchanged), so the first error surfaces at the end.
func (s Sequential) Forward(x *graph.Value) *graph.Value {
	if x == nil {
		return noTape("sequential", x)
	}
	for i, l := range s {
		if l == nil {
			return x.Tape().Fail(fmt.Errorf("layers: sequential: layer %d is nil", i))
		}
		x = l.Forward(x)
		if len(l.Params()) == 0 { // layers with parameters report their own calls
			out(kindOf(l), nil, x.Err(), x)
		}
	}
	return x
}

// kindOf names a layer without parameters in a Summary.
func kindOf(l Layer) string {
	switch l.(type) {
	case MaxPool2D, *MaxPool2D:
		return "max pool 2d"
	case AvgPool2D, *AvgPool2D:
		return "avg pool 2d"
	case Flatten, *Flatten:
		return "flatten"
	case Dropout, *Dropout:
		return "dropout"
	case Activation:
		return "activation"
	}
	return strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%T", l), "*layers."))
}

// Params returns the parameters of every layer, in order.
func (s Sequential) Params() []*graph.Param { return List(s).Params() }

// Activation wraps a function of one value, such as graph.Relu, as a layer
// without parameters.
type Activation func(*graph.Value) *graph.Value

// Forward applies the function.
func (a Activation) Forward(x *graph.Value) *graph.Value {
	if a == nil {
		return x.Tape().Fail(errors.New("layers: nil Activation"))
	}
	return a(x)
}

// Params returns nothing: an activation has no parameters.
func (Activation) Params() []*graph.Param { return nil }
