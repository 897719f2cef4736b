package run

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// layout 1 (batch-first X, Y and states) gives the layout-0 results
// transposed. ONNX Runtime has no batch-first recurrent kernels, so the
// recorded layout-0 model is the reference.
func TestRecurrentBatchFirstLayout(t *testing.T) {
	for _, name := range []string{"gru_lbr1", "lstm"} {
		t.Run(name, func(t *testing.T) {
			r := loadRecorded(t, name)
			m0, err := onnx.Load(filepath.Join("testdata", r.Model))
			require.NoError(t, err)
			c0, err := Compile(m0)
			require.NoError(t, err)
			m1, err := onnx.Load(filepath.Join("testdata", r.Model))
			require.NoError(t, err)
			n := &m1.Graph.Nodes[0]
			n.Attrs = append(n.Attrs, onnx.Attr{Name: "layout", Value: int64(1)})
			for i, v := range m1.Graph.Inputs {
				s := v.Shape
				switch len(s) {
				case 3: // X [seq, batch, in] and states [dirs, batch, H] swap their first two dims
					s[0], s[1] = s[1], s[0]
				}
				m1.Graph.Inputs[i].Shape = s
			}
			c1, err := Compile(m1)
			require.NoError(t, err)
			c := r.Cases[1]
			in0, in1 := map[string]*tensor.Tensor{}, map[string]*tensor.Tensor{}
			for k, v := range c.Inputs {
				x := v.tensor(t)
				in0[k] = x
				if x.Rank() == 3 {
					x, err = x.Transpose(1, 0, 2)
					require.NoError(t, err)
				}
				in1[k] = x
			}
			out0, err := c0.Run(in0)
			require.NoError(t, err)
			out1, err := c1.Run(in1)
			require.NoError(t, err)
			for k, y0 := range out0 {
				perm := []int{1, 0, 2}
				if y0.Rank() == 4 {
					perm = []int{2, 0, 1, 3}
				}
				want, err := y0.Transpose(perm...)
				require.NoError(t, err)
				assert.Equal(t, want.Shape(), out1[k].Shape(), k)
				assert.Equal(t, want.Float32s(), out1[k].Float32s(), k)
			}
		})
	}
}

// Slice's bounds follow the spec's clamping for both step signs; Gather
// counts negative indices from the end; Expand broadcasts both ways.
func TestSliceGatherExpandSemantics(t *testing.T) {
	x := tensor.MustFromSlice([]int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10)
	for _, tc := range []struct {
		name                      string
		starts, ends, axes, steps []int64
		want                      []int64
	}{
		{"plain", []int64{2}, []int64{5}, nil, nil, []int64{2, 3, 4}},
		{"negative bounds", []int64{-3}, []int64{-1}, nil, nil, []int64{7, 8}},
		{"clamped end", []int64{8}, []int64{1 << 62}, []int64{0}, nil, []int64{8, 9}},
		{"step 3", []int64{1}, []int64{10}, []int64{-1}, []int64{3}, []int64{1, 4, 7}},
		{"reverse all", []int64{-1}, []int64{-1 << 62}, nil, []int64{-1}, []int64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
		{"reverse step 4 clamped start", []int64{100}, []int64{0}, nil, []int64{-4}, []int64{9, 5, 1}},
		{"empty", []int64{5}, []int64{2}, nil, nil, []int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl, err := sliceSpec([]int{10}, [][]int64{tc.starts, tc.ends, tc.axes, tc.steps})
			require.NoError(t, err)
			assert.Equal(t, tc.want, append([]int64{}, sl.apply(x).Int64s()...))
		})
	}
	_, err := sliceSpec([]int{10}, [][]int64{{0}, {1}, nil, {0}})
	assert.ErrorContains(t, err, "expected nonzero steps")

	g := graphOf(13, []onnx.Value{input("x", elemFloat, 2, 3)}, map[string]*tensor.Tensor{"i": ints(-1, 0, -3)}, []string{"y"},
		nodeOf("g", "Gather", []string{"x", "i"}, []string{"y"}, onnx.Attr{Name: "axis", Value: int64(1)}))
	y := runOne(t, g, tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	assert.Equal(t, []float32{3, 1, 1, 6, 4, 4}, y.Float32s())

	e := graphOf(13, []onnx.Value{input("x", elemFloat, 3, 1)}, map[string]*tensor.Tensor{"s": ints(2, 1, 4)}, []string{"y"},
		nodeOf("e", "Expand", []string{"x", "s"}, []string{"y"}))
	y = runOne(t, e, tensor.MustFromSlice([]float32{1, 2, 3}, 3, 1))
	assert.Equal(t, []int{2, 3, 4}, []int(y.Shape()))
	assert.Equal(t, []float32{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, y.Float32s())
}
