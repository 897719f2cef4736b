package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// refConv3D is the direct loop of a grouped, strided, dilated, padded 3-D
// cross-correlation in float64 (pads: front, back, top, bottom, left,
// right; strides and dilations written out), and its gradients for dy.
func refConv3D(x, w, b, dy *tensor.Tensor, s, d [3]int, pad [6]int, groups int) (y, dx, dw, db *tensor.Tensor) {
	n, c, o := x.Dim(0), x.Dim(1), w.Dim(0)
	in := [3]int{x.Dim(2), x.Dim(3), x.Dim(4)}
	k := [3]int{w.Dim(2), w.Dim(3), w.Dim(4)}
	var out [3]int
	for i := range 3 {
		out[i] = (in[i]+pad[2*i]+pad[2*i+1]-((k[i]-1)*d[i]+1))/s[i] + 1
	}
	y = tensor.Zeros(tensor.Float64, n, o, out[0], out[1], out[2])
	dx, dw = tensor.Zeros(tensor.Float64, x.Shape()...), tensor.Zeros(tensor.Float64, w.Shape()...)
	db = tensor.Zeros(tensor.Float64, o)
	cg, og := c/groups, o/groups
	xi := func(b, ch, i, j, l int) int { return (((b*c+ch)*in[0]+i)*in[1]+j)*in[2] + l }
	wi := func(oc, ch, i, j, l int) int { return (((oc*cg+ch)*k[0]+i)*k[1]+j)*k[2] + l }
	for b0 := range n {
		for oc := range o {
			gr := oc / og
			for od := range out[0] {
				for oh := range out[1] {
					for ow := range out[2] {
						yi := (((b0*o+oc)*out[0]+od)*out[1]+oh)*out[2] + ow
						g := 0.0
						if dy != nil {
							g = dy.At(yi)
						}
						sum := 0.0
						if b != nil {
							sum = b.At(oc)
						}
						db.SetAt(oc, db.At(oc)+g)
						for ch := range cg {
							for kd := range k[0] {
								for kh := range k[1] {
									for kw := range k[2] {
										id, ih, iw := od*s[0]-pad[0]+kd*d[0], oh*s[1]-pad[2]+kh*d[1], ow*s[2]-pad[4]+kw*d[2]
										if id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2] {
											continue
										}
										xa, wa := xi(b0, gr*cg+ch, id, ih, iw), wi(oc, ch, kd, kh, kw)
										sum += x.At(xa) * w.At(wa)
										dx.SetAt(xa, dx.At(xa)+g*w.At(wa))
										dw.SetAt(wa, dw.At(wa)+g*x.At(xa))
									}
								}
							}
						}
						y.SetAt(yi, sum)
					}
				}
			}
		}
	}
	return y, dx, dw, db
}

var conv3dCases = []struct {
	name   string
	x, w   []int
	s, d   [3]int
	pad    [6]int
	groups int
	bias   bool
}{
	{"k3_s1", []int{2, 3, 4, 5, 4}, []int{4, 3, 3, 3, 3}, [3]int{1, 1, 1}, [3]int{1, 1, 1}, [6]int{}, 1, true},
	{"strided_padded_asym", []int{1, 2, 5, 7, 6}, []int{3, 2, 2, 3, 2}, [3]int{2, 1, 3}, [3]int{1, 1, 1}, [6]int{1, 0, 2, 1, 0, 1}, 1, true},
	{"dilated", []int{1, 2, 7, 6, 5}, []int{2, 2, 2, 3, 2}, [3]int{1, 2, 1}, [3]int{2, 1, 3}, [6]int{0, 1, 1, 1, 0, 0}, 1, false},
	{"groups", []int{2, 4, 3, 5, 5}, []int{6, 2, 1, 3, 3}, [3]int{1, 2, 2}, [3]int{1, 1, 1}, [6]int{0, 0, 1, 1, 1, 1}, 2, true},
	{"pointwise", []int{1, 5, 2, 3, 3}, []int{3, 5, 1, 1, 1}, [3]int{1, 1, 1}, [3]int{1, 1, 1}, [6]int{}, 1, true},
	{"odd_17_channels", []int{1, 17, 3, 3, 2}, []int{1, 17, 2, 2, 1}, [3]int{1, 1, 1}, [3]int{1, 1, 1}, [6]int{1, 1, 0, 0, 0, 0}, 1, true},
}

// TestConv3DMatchesReference checks the GEMM kernel against refConv3D on
// odd shapes, in float64 and float32, forward and every gradient.
func TestConv3DMatchesReference(t *testing.T) {
	for i, c := range conv3dCases {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				x, w := cast(t, randn(uint64(2000+i), c.x...), dt), cast(t, randn(uint64(2100+i), c.w...), dt)
				in := []*tensor.Tensor{x, w}
				var b64 *tensor.Tensor
				if c.bias {
					in = append(in, cast(t, randn(uint64(2200+i), c.w[0]), dt))
					b64 = cast(t, in[2], tensor.Float64)
				}
				op := Conv3DOp(Conv3DAttrs{Stride: c.s, Dilation: c.d, Pad: c.pad, Groups: c.groups})
				y, err := op.Forward(in)
				require.NoError(t, err)
				dy := cast(t, randn(uint64(2300+i), y.Shape()...), dt)
				need := make([]bool, len(in))
				for j := range need {
					need[j] = true
				}
				grads, err := op.Backward(in, y, dy, need)
				require.NoError(t, err)
				wy, wdx, wdw, wdb := refConv3D(cast(t, x, tensor.Float64), cast(t, w, tensor.Float64), b64, cast(t, dy, tensor.Float64), c.s, c.d, c.pad, c.groups)
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 2e-5
				}
				requireClose(t, wy, cast(t, y, tensor.Float64), tol, tol)
				requireClose(t, wdx, cast(t, grads[0], tensor.Float64), tol, tol)
				requireClose(t, wdw, cast(t, grads[1], tensor.Float64), tol, tol)
				if c.bias {
					requireClose(t, wdb, cast(t, grads[2], tensor.Float64), tol, tol)
				}
			})
		}
	}
}

// TestConv3DSame checks SAME padding against explicit padding of TF's
// SAME amounts.
func TestConv3DSame(t *testing.T) {
	x, w := randn(3, 1, 2, 5, 4, 6), randn(4, 3, 2, 3, 2, 3)
	// Kernel (3, 2, 3), SAME, strides (2, 1, 2), dilation (1, 2, 1): outs 3, 4, 3; total pads 2 (1+1), 2 (1+1), 1 (0+1).
	same, err := Conv3D(x, w, nil, Conv3DAttrs{Stride: [3]int{2, 1, 2}, Dilation: [3]int{1, 2, 1}, Padding: PadSame})
	require.NoError(t, err)
	explicit, err := Conv3D(x, w, nil, Conv3DAttrs{Stride: [3]int{2, 1, 2}, Dilation: [3]int{1, 2, 1}, Pad: [6]int{1, 1, 1, 1, 0, 1}})
	require.NoError(t, err)
	require.Equal(t, []int{1, 3, 3, 4, 3}, []int(same.Shape()))
	requireSameBits(t, explicit.Float64s(), same.Float64s())
}

func TestConv3DErrors(t *testing.T) {
	z := func(shape ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, shape...) }
	tests := []struct {
		name string
		in   []*tensor.Tensor
		a    Conv3DAttrs
		want string
	}{
		{"rank", ins(z(1, 2, 3, 3), z(1, 2, 1, 1, 1)), Conv3DAttrs{}, "conv3d: inputs float32[1 2 3 3], float32[1 2 1 1 1]: want x [N, C, D, H, W]"},
		{"channels", ins(z(1, 2, 3, 3, 3), z(1, 3, 1, 1, 1)), Conv3DAttrs{}, "w's dim 1 must be C/groups = 2"},
		{"groups", ins(z(1, 4, 3, 3, 3), z(3, 2, 1, 1, 1)), Conv3DAttrs{Groups: 2}, "groups 2 must divide"},
		{"too_big", ins(z(1, 1, 3, 3, 3), z(1, 1, 2, 2, 2)), Conv3DAttrs{Dilation: [3]int{1, 1, 3}}, "dilated kernel 4 along axis 4 is larger than the padded input 3"},
		{"negative", ins(z(1, 1, 3, 3, 3), z(1, 1, 1, 1, 1)), Conv3DAttrs{Stride: [3]int{1, -1, 1}}, "must be positive"},
		{"negative_pad", ins(z(1, 1, 3, 3, 3), z(1, 1, 1, 1, 1)), Conv3DAttrs{Pad: [6]int{0, 0, 0, -1}}, "negative padding"},
		{"same_with_pad", ins(z(1, 1, 3, 3, 3), z(1, 1, 1, 1, 1)), Conv3DAttrs{Padding: PadSame, Pad: [6]int{1}}, "takes no explicit Pad"},
		{"bias", ins(z(1, 1, 3, 3, 3), z(2, 1, 1, 1, 1), z(3)), Conv3DAttrs{}, "want bias [2]"},
		{"count", ins(z(1, 1, 3, 3, 3)), Conv3DAttrs{}, "want inputs x, w and an optional bias, got 1"},
		{"dtypes", ins(z(1, 1, 3, 3, 3), tensor.Zeros(tensor.Float64, 1, 1, 1, 1, 1)), Conv3DAttrs{}, "one dtype"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := Conv3DOp(tt.a)
			_, err := op.Forward(tt.in)
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, op.(Checker).Check(tt.in), tt.want)
		})
	}
	_, err := Conv3DOp(Conv3DAttrs{}).Backward(ins(z(1, 1, 2, 2, 2), z(1, 1, 1, 1, 1)), nil, z(1, 1, 2, 2, 2), []bool{true, true})
	require.ErrorContains(t, err, "conv3d")
}

var _ = addGradCases("conv3d",
	gradCase{name: "strided_padded", attrs: Attrs{StridesDhw: [3]int{2, 1, 2}, PadsDhw: [6]int{1, 0, 0, 1, 1, 1}},
		in: ins(randn(2400, 2, 2, 4, 3, 4), randn(2401, 3, 2, 2, 2, 2), randn(2402, 3)), wrt: []int{0, 1, 2}},
	gradCase{name: "dilated_groups_same", attrs: Attrs{DilationsDhw: [3]int{2, 1, 1}, Groups: 2, Padding: PadSame},
		in: ins(randn(2403, 1, 4, 4, 3, 3), randn(2404, 2, 2, 2, 2, 1)), wrt: []int{0, 1}},
)
