package ops

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "hard_sigmoid", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(HardSigmoidOp), CUDA: DeviceFallback})
}

// HardSigmoidAttrs are hard_sigmoid's attributes, ONNX HardSigmoid's alpha
// and beta. They have their own struct rather than fields of UnaryAttrs so
// that the other elementwise ops do not list a beta they ignore. ONNX's
// defaults are alpha 0.2 and beta 0.5 (DefaultHardSigmoidAttrs); the zero
// value is the constant 0 function.
type HardSigmoidAttrs struct {
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
}

// DefaultHardSigmoidAttrs returns ONNX HardSigmoid's default attributes,
// alpha 0.2 and beta 0.5.
func DefaultHardSigmoidAttrs() HardSigmoidAttrs { return HardSigmoidAttrs{Alpha: 0.2, Beta: 0.5} }

// hardSigmoidFn is max(0, min(1, αx+β)) with p = (α, β); the derivative is
// α where 0 < αx+β < 1 and 0 elsewhere, at the kinks included, as relu6's
// is (hard_sigmoid with α = 1/6 and β = 1/2 is relu6(x+3)/6).
var hardSigmoidFn = unaryFn{
	f: func(x float64, p [2]float64) float64 { return math.Max(0, math.Min(1, p[0]*x+p[1])) },
	d: func(x, y float64, p [2]float64) float64 {
		v := p[0]*x + p[1]
		return p[0] * b2f(v > 0 && v < 1)
	},
}

// hardSigmoidOp is the elementwise op hard_sigmoid: the unary family's
// kernels with its own attributes.
type hardSigmoidOp struct{ unaryOp }

// HardSigmoidOp returns the op max(0, min(1, a.Alpha·x + a.Beta)), ONNX
// HardSigmoid (opset 6). Keras's hard_sigmoid is the case alpha 1/6, beta
// 1/2 (relu6(x+3)/6). The gradient is alpha strictly inside the linear
// part and 0 elsewhere.
func HardSigmoidOp(a HardSigmoidAttrs) Op {
	return &hardSigmoidOp{unaryOp{name: "hard_sigmoid", fn: hardSigmoidFn, p: [2]float64{a.Alpha, a.Beta}}}
}

// HardSigmoid returns max(0, min(1, alpha·x + beta)); see HardSigmoidOp.
func HardSigmoid(x *tensor.Tensor, alpha, beta float64) (*tensor.Tensor, error) {
	return run(HardSigmoidOp(HardSigmoidAttrs{Alpha: alpha, Beta: beta}), x)
}

func (o *hardSigmoidOp) Attrs() any { return HardSigmoidAttrs{Alpha: o.p[0], Beta: o.p[1]} }
