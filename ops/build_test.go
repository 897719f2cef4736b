package ops

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryOpHasBuilder fails for a registered op that Build cannot make
// (the parity harness, the gradient checks and the device tests would have
// no way to build it), for a builder whose op has another name, and for a
// builder of an op that is not registered.
func TestEveryOpHasBuilder(t *testing.T) {
	for _, s := range Registered() {
		op, err := Build(s.Name, Attrs{})
		if assert.NoErrorf(t, err, "op %s has no builder: run go generate ./ops", s.Name) {
			assert.Equal(t, s.Name, op.Name(), "Build(%q) made another op", s.Name)
		}
	}
	for _, name := range Buildable() {
		_, ok := Lookup(name)
		assert.Truef(t, ok, "builders has %s, which is not a registered op", name)
	}
}

func TestBuildAttrs(t *testing.T) {
	tests := []struct {
		name  string
		op    string
		attrs Attrs
		want  Op
	}{
		{name: "conv2d same", op: "conv2d", attrs: Attrs{Strides: [2]int{2, 1}, Padding: PadSame, Groups: 2},
			want: Conv2DOp(Conv2DAttrs{Stride: [2]int{2, 1}, Padding: PadSame, Groups: 2})},
		{name: "conv2d explicit", op: "conv2d", attrs: Attrs{Padding: PadExplicit, Pads: [4]int{1, 0, 2, 1}, Dilations: [2]int{2, 2}},
			want: Conv2DOp(Conv2DAttrs{Pad: [4]int{1, 0, 2, 1}, Dilation: [2]int{2, 2}})},
		{name: "conv2d_transpose valid", op: "conv2d_transpose", attrs: Attrs{Padding: PadValid, OutputPadding: [2]int{1, 0}},
			want: Conv2DTransposeOp(Conv2DTransposeAttrs{Conv2DAttrs: Conv2DAttrs{Padding: PadValid}, OutputPadding: [2]int{1, 0}})},
		{name: "max pool", op: "max_pool2d", attrs: Attrs{Kernel: [2]int{3, 3}, Strides: [2]int{2, 2}, Padding: PadSame},
			want: MaxPool2DOp(Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: PadSame})},
		{name: "loss sum", op: "softmax_cross_entropy_soft", attrs: Attrs{Reduction: LossSum}, want: SoftmaxCrossEntropySoftOp(LossSum)},
		{name: "loss none", op: "softmax_cross_entropy", attrs: Attrs{Reduction: LossNone}, want: SoftmaxCrossEntropyOp(LossNone)},
		{name: "loss default mean", op: "softmax_cross_entropy", attrs: Attrs{}, want: SoftmaxCrossEntropyOp(LossMean)},
		{name: "sum keepdims", op: "sum", attrs: Attrs{Axes: []int{1}, KeepDims: true}, want: ReduceOp("sum", []int{1}, true)},
		{name: "batch norm", op: "batch_norm", attrs: Attrs{Momentum: 0.9, Epsilon: 1e-3, Training: true},
			want: BatchNormOp(BatchNormAttrs{Momentum: 0.9, Epsilon: 1e-3, Training: true})},
		{name: "gru", op: "gru", attrs: Attrs{Offsets: []int{0, 2}, Reverse: true, ResetAfter: true},
			want: GRUOp(GRUAttrs{Offsets: []int{0, 2}, Reverse: true, ResetAfter: true})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Build(tc.op, tc.attrs)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// The elementwise ops hold functions, which assert.Equal cannot compare:
// check their scalar attributes instead.
func TestBuildUnaryParams(t *testing.T) {
	tests := []struct {
		op    string
		attrs Attrs
		want  [2]float64
	}{
		{op: "clip", attrs: Attrs{Lo: -1, Hi: 2, Alpha: 5}, want: [2]float64{-1, 2}},
		{op: "leaky_relu", attrs: Attrs{Alpha: 0.3, Lo: 5}, want: [2]float64{0.3, 0}},
		{op: "elu", attrs: Attrs{Alpha: 1.5}, want: [2]float64{1.5, 0}},
		{op: "relu", attrs: Attrs{Alpha: 1.5, Lo: 1, Hi: 2}, want: [2]float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			got, err := Build(tc.op, tc.attrs)
			require.NoError(t, err)
			u, ok := got.(*unaryOp)
			require.True(t, ok, "Build(%q) is a %T", tc.op, got)
			assert.Equal(t, tc.op, u.name)
			assert.Equal(t, tc.want, u.p)
		})
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name  string
		op    string
		attrs Attrs
		want  string
	}{
		{name: "unknown op", op: "convolve", want: `ops.Build: no op "convolve"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.op, tc.attrs)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The bag's names that do not parse fail as the case file is read.
func TestAttrsJSONErrors(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"unknown padding", `{"padding": "FULL"}`, `unknown padding "FULL"`},
		{"unknown reduction", `{"reduction": "avg"}`, `unknown reduction "avg"`},
		{"three pads fit", `{"pads": [1, 1, 1]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Attrs
			err := json.Unmarshal([]byte(tc.json), &a)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
	var a Attrs
	require.NoError(t, json.Unmarshal([]byte(`{"padding": "SAME", "reduction": "sum", "strides": [2, 1]}`), &a))
	assert.Equal(t, Attrs{Padding: PadSame, Reduction: LossSum, Strides: [2]int{2, 1}}, a)
}
