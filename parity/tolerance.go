package parity

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// Tolerance bounds an element's error: |got - want| <= ATol + RTol·|want|.
type Tolerance struct {
	RTol, ATol float64
}

// Bound is the largest error allowed against want.
func (t Tolerance) Bound(want float64) float64 {
	if want < 0 {
		want = -want
	}
	return t.ATol + t.RTol*want
}

func (t Tolerance) String() string {
	if t.ATol == 0 {
		return fmt.Sprintf("rtol %.0e", t.RTol)
	}
	return fmt.Sprintf("atol %.0e + rtol %.0e", t.ATol, t.RTol)
}

// toleranceClass is a named pair of per-dtype bounds with the reason it
// exists. A case names its class in case.json's "tolerance".
type toleranceClass struct {
	f32, f64 Tolerance
	reason   string
}

// toleranceClasses is the tolerance policy (docs/parity.md, "Tolerance
// policy").
// Every class but "default" is looser and must say why; record.py assigns a
// looser class only to the cases that need it. A float32 case that holds
// its float64 truth is held to max(class bound, 1.5 × TF's error) against
// the truth instead (compareTruth), which is what lets long float32
// reductions such as convolutions keep the default class.
var toleranceClasses = map[string]toleranceClass{
	// float32: TF's own assertAllClose uses 1e-6; both sides round each
	// result to float32, and Plumb accumulates in float64 where TF does
	// not, so a few ulps (6e-8 each) of difference is the expected floor.
	// float64: both compute in float64, so only summation order differs.
	"default": {
		f32:    Tolerance{RTol: 1e-5, ATol: 1e-6},
		f64:    Tolerance{RTol: 1e-10},
		reason: "the default policy",
	},
	// tf.nn.gelu casts its Python constants (1/sqrt(2) for the exact form,
	// 0.044715 for the tanh form) to the input dtype through a float32
	// tensor, so TF's float64 gelu runs with constants off by up to 2e-8
	// relative. Through erfc's slope that grows to about 2x²·2e-8 relative
	// in the result (3e-7 at |x| = 3 in the recorded draws; recomputing
	// TF's formula with the float32-rounded constant in float64 matches
	// TF's output to 3e-16). Plumb uses the exact constants. float32 is
	// unaffected.
	"tf_gelu": {
		f32:    Tolerance{RTol: 1e-5, ATol: 1e-6},
		f64:    Tolerance{RTol: 2e-6},
		reason: "TF's float64 gelu uses float32-rounded constants",
	},
	// Some gradients are zero in exact arithmetic: a key bias in
	// attention (it adds q·b_k to every key's score alike, which softmax
	// ignores) and a conv bias whose channel stays in relu's linear region
	// up to batch norm (which removes per-channel shifts). Both sides then
	// return the roundoff of sums of O(1) terms, up to about 3e-16 in
	// float64, of either sign, and small gradients that cancel the same
	// way (the MNIST fc kernel's, down to 1e-7) carry that absolute error
	// too. An absolute floor of 1e-14 in float64 bounds the noise; float32
	// keeps the default, whose atol already does.
	"cancellation": {
		f32:    Tolerance{RTol: 1e-5, ATol: 1e-6},
		f64:    Tolerance{RTol: 1e-10, ATol: 1e-14},
		reason: "gradients that are zero in exact arithmetic come out as float64 roundoff",
	},
	// Keras' float32 Adam computes alpha = lr·sqrt(1-beta_2^t)/(1-beta_1^t)
	// in float32, where 1 - 0.999^t cancels: at t <= 3 it keeps only about
	// 4 significant digits' worth of accuracy (3e-5 relative), so each
	// step's update of size lr = 1/16 differs from Plumb's (which computes
	// alpha in float64) by up to about 1e-6 absolute, three steps by up to
	// 3e-6. Values that pass near zero then break atol 1e-6.
	"keras_adam_f32": {
		f32:    Tolerance{RTol: 1e-5, ATol: 5e-6},
		f64:    Tolerance{RTol: 1e-10},
		reason: "Keras' float32 Adam cancels in 1 - beta_2^t",
	},
}

// toleranceFor returns the bound a case is held to.
func toleranceFor(c *Case, dt tensor.DType) (Tolerance, error) {
	cl, ok := toleranceClasses[c.Tolerance]
	if !ok {
		return Tolerance{}, fmt.Errorf("%s: unknown tolerance class %q", c.ID(), c.Tolerance)
	}
	if dt == tensor.Float64 {
		return cl.f64, nil
	}
	return cl.f32, nil
}
