package tensor

import (
	"fmt"
	"strconv"
	"strings"
)

// maxShown is how many leading and trailing entries per axis String prints
// before eliding the middle with "...", as NumPy does for long arrays.
const maxShown = 3

// String prints the tensor NumPy-style, eliding long axes:
//
//	float32[2 3]
//	[[1 2 3]
//	 [4 5 6]]
func (t *Tensor) String() string {
	var b strings.Builder
	if t.dev != nil {
		fmt.Fprintf(&b, "%v%v on %v", t.dtype, t.shape, t.Device())
		return b.String()
	}
	fmt.Fprintf(&b, "%v%v\n", t.dtype, t.shape)
	if t.Rank() == 0 {
		b.WriteString(t.formatElem(0))
		return b.String()
	}
	t.format(&b, 0, 0)
	return b.String()
}

func (t *Tensor) format(b *strings.Builder, axis, off int) {
	n := t.shape[axis]
	stride := t.shape[axis+1:].Size()
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if n > 2*maxShown && i == maxShown {
			if axis == t.Rank()-1 {
				b.WriteString("... ")
			} else {
				b.WriteString("..." + strings.Repeat("\n", t.Rank()-1-axis) + strings.Repeat(" ", axis+1))
			}
			i = n - maxShown
		}
		if axis == t.Rank()-1 {
			b.WriteString(t.formatElem(off + i))
			if i < n-1 {
				b.WriteByte(' ')
			}
			continue
		}
		t.format(b, axis+1, off+i*stride)
		if i < n-1 {
			b.WriteString(strings.Repeat("\n", t.Rank()-1-axis) + strings.Repeat(" ", axis+1))
		}
	}
	b.WriteByte(']')
}

// formatElem prints element i of the flat storage: integers exactly (labels
// and token ids must not turn into 1.23457e+06), floats with six significant
// digits, as NumPy's default print precision.
func (t *Tensor) formatElem(i int) string {
	switch s := t.data.(type) {
	case []int32:
		return strconv.FormatInt(int64(s[i]), 10)
	case []int64:
		return strconv.FormatInt(s[i], 10)
	}
	return strconv.FormatFloat(t.At(i), 'g', 6, 64)
}
