package ops

import (
	"fmt"
	"math"
)

// RNNActivation is the nonlinearity of an LSTM's candidate or cell output.
// The zero value is tanh, the LSTM's usual one; Paddle's lstm and
// dynamic_lstm take candidate_activation and cell_activation from tanh,
// sigmoid, relu and identity (the book's SRL model uses relu and sigmoid).
type RNNActivation int

// The activations an LSTM takes for its candidate and cell output.
const (
	ActTanh RNNActivation = iota
	ActSigmoid
	ActRelu
	ActIdentity
)

func (a RNNActivation) String() string {
	switch a {
	case ActTanh:
		return "tanh"
	case ActSigmoid:
		return "sigmoid"
	case ActRelu:
		return "relu"
	case ActIdentity:
		return "identity"
	}
	return fmt.Sprintf("RNNActivation(%d)", int(a))
}

func (a RNNActivation) valid() bool { return a >= ActTanh && a <= ActIdentity }

// apply returns a(x).
func (a RNNActivation) apply(x float64) float64 {
	switch a {
	case ActSigmoid:
		return sigmoid(x)
	case ActRelu:
		return max(x, 0)
	case ActIdentity:
		return x
	}
	return math.Tanh(x)
}

// grad returns a'(x) from y = a(x): 1 − y², y(1 − y), [y > 0] or 1.
func (a RNNActivation) grad(y float64) float64 {
	switch a {
	case ActSigmoid:
		return y * (1 - y)
	case ActRelu:
		if y > 0 {
			return 1
		}
		return 0
	case ActIdentity:
		return 1
	}
	return 1 - y*y
}
