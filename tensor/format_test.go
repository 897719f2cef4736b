package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestString(t *testing.T) {
	tests := []struct {
		name string
		x    *Tensor
		want string
	}{
		{name: "small matrix", x: MustFromSlice([]float32{1, 2.5, 3, 4, 5, 6}, 2, 3),
			want: "float32[2 3]\n[[1 2.5 3]\n [4 5 6]]"},
		{name: "six significant digits", x: MustFromSlice([]float64{1.0 / 3, 1e-7, 123456789}),
			want: "float64[3]\n[0.333333 1e-07 1.23457e+08]"},
		{name: "float scalar", x: Scalar[float32](0.1), want: "float32[]\n0.1"},
		{name: "int scalar", x: Scalar(int32(-4)), want: "int32[]\n-4"},
		{name: "ints exactly", x: MustFromSlice([]int64{1234567, -3}), want: "int64[2]\n[1234567 -3]"},
		{name: "six elements not elided", x: MustFromSlice(iota64(6)), want: "float64[6]\n[0 1 2 3 4 5]"},
		{name: "elided vector", x: MustFromSlice(iota64(10)), want: "float64[10]\n[0 1 2 ... 7 8 9]"},
		{name: "elided matrix", x: MustFromSlice(iota64(56), 7, 8),
			want: "float64[7 8]\n" +
				"[[0 1 2 ... 5 6 7]\n" +
				" [8 9 10 ... 13 14 15]\n" +
				" [16 17 18 ... 21 22 23]\n" +
				" ...\n" +
				" [32 33 34 ... 37 38 39]\n" +
				" [40 41 42 ... 45 46 47]\n" +
				" [48 49 50 ... 53 54 55]]"},
		{name: "elided rank 3", x: MustFromSlice([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, 7, 2, 1),
			want: "int32[7 2 1]\n" +
				"[[[0]\n  [1]]\n\n" +
				" [[2]\n  [3]]\n\n" +
				" [[4]\n  [5]]\n\n" +
				" ...\n\n" +
				" [[8]\n  [9]]\n\n" +
				" [[10]\n  [11]]\n\n" +
				" [[12]\n  [13]]]"},
		{name: "empty", x: Zeros(Float32, 0, 3), want: "float32[0 3]\n[]"},
		{name: "empty rows", x: Zeros(Float32, 2, 0), want: "float32[2 0]\n[[]\n []]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.x.String())
		})
	}
}
