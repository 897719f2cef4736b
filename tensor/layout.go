package tensor

import "fmt"

// Reshape returns a view with a new shape and the same elements. One dim may
// be -1 and is inferred.
func (t *Tensor) Reshape(shape ...int) (*Tensor, error) {
	s := Shape(shape).Clone()
	infer := -1
	known := 1
	for i, d := range s {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return nil, fmt.Errorf("tensor: reshape %v to %v: bad dim %d", t.shape, Shape(shape), d)
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || t.Size()%known != 0 {
			return nil, fmt.Errorf("tensor: reshape %v (%d elements) to %v: cannot infer -1", t.shape, t.Size(), Shape(shape))
		}
		s[infer] = t.Size() / known
	}
	if err := checkDims(s); err != nil {
		return nil, fmt.Errorf("tensor: reshape %v to %v: %w", t.shape, Shape(shape), err)
	}
	if s.Size() != t.Size() {
		return nil, fmt.Errorf("tensor: reshape %v (%d elements) to %v (%d elements)", t.shape, t.Size(), s, s.Size())
	}
	return &Tensor{dtype: t.dtype, shape: s, data: t.data, dev: t.dev}, nil
}

// SliceRows returns the view of rows [from, to) along axis 0.
func (t *Tensor) SliceRows(from, to int) (*Tensor, error) {
	if t.dev != nil {
		return nil, t.onDevice("SliceRows")
	}
	if t.Rank() == 0 {
		return nil, fmt.Errorf("tensor: SliceRows on a scalar")
	}
	if from < 0 || to < from || to > t.shape[0] {
		return nil, fmt.Errorf("tensor: SliceRows [%d,%d) of shape %v", from, to, t.shape)
	}
	inner := t.shape[1:].Size()
	s := append(Shape{to - from}, t.shape[1:]...)
	return &Tensor{dtype: t.dtype, shape: s, data: subslice(t.data, from*inner, to*inner)}, nil
}

// Row returns the view of index i along axis 0, with that axis removed.
func (t *Tensor) Row(i int) (*Tensor, error) {
	r, err := t.SliceRows(i, i+1)
	if err != nil {
		return nil, err
	}
	r.shape = r.shape[1:]
	return r, nil
}

func subslice(data any, from, to int) any {
	switch s := data.(type) {
	case []float32:
		return s[from:to:to]
	case []float64:
		return s[from:to:to]
	case []int32:
		return s[from:to:to]
	case []int64:
		return s[from:to:to]
	}
	panic("unreachable")
}

// Transpose returns a copy with the axes permuted: output axis i is input
// axis perm[i]. With no perm, the axes are reversed.
func (t *Tensor) Transpose(perm ...int) (*Tensor, error) {
	if t.dev != nil {
		return nil, t.onDevice("Transpose")
	}
	r := t.Rank()
	if len(perm) == 0 {
		perm = make([]int, r)
		for i := range perm {
			perm[i] = r - 1 - i
		}
	}
	if len(perm) != r {
		return nil, fmt.Errorf("tensor: transpose of shape %v with perm %v: want %d axes", t.shape, perm, r)
	}
	seen := make([]bool, r)
	outShape := make(Shape, r)
	for i, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return nil, fmt.Errorf("tensor: transpose of shape %v: perm %v is not a permutation", t.shape, perm)
		}
		seen[p] = true
		outShape[i] = t.shape[p]
	}
	out := Zeros(t.dtype, outShape...)
	inStrides := t.shape.Strides()
	src := make([]int, r) // input stride for each output axis
	for i, p := range perm {
		src[i] = inStrides[p]
	}
	switch d := out.data.(type) {
	case []float32:
		permute(d, t.data.([]float32), outShape, src)
	case []float64:
		permute(d, t.data.([]float64), outShape, src)
	case []int32:
		permute(d, t.data.([]int32), outShape, src)
	case []int64:
		permute(d, t.data.([]int64), outShape, src)
	}
	return out, nil
}

// permute writes dst (row-major over shape) from src read with the given strides.
func permute[T Elem](dst, src []T, shape Shape, strides []int) {
	if len(dst) == 0 {
		return
	}
	idx := make([]int, len(shape))
	off := 0
	for i := range dst {
		dst[i] = src[off]
		for a := len(shape) - 1; a >= 0; a-- {
			idx[a]++
			off += strides[a]
			if idx[a] < shape[a] {
				break
			}
			off -= strides[a] * idx[a]
			idx[a] = 0
		}
	}
}

// Slice returns a copy of t restricted to [from, to) along axis.
func (t *Tensor) Slice(axis, from, to int) (*Tensor, error) {
	if t.dev != nil {
		return nil, t.onDevice("Slice")
	}
	ax, err := Axis(axis, t.Rank())
	if err != nil {
		return nil, fmt.Errorf("tensor: slice of shape %v: %w", t.shape, err)
	}
	if from < 0 || to < from || to > t.shape[ax] {
		return nil, fmt.Errorf("tensor: slice [%d,%d) of axis %d of shape %v", from, to, ax, t.shape)
	}
	outShape := t.shape.Clone()
	outShape[ax] = to - from
	out := Zeros(t.dtype, outShape...)
	outer := t.shape[:ax].Size()
	inner := t.shape[ax+1:].Size()
	for o := 0; o < outer; o++ {
		s := (o*t.shape[ax] + from) * inner
		d := o * (to - from) * inner
		copyData(subslice(out.data, d, d+(to-from)*inner), subslice(t.data, s, s+(to-from)*inner))
	}
	return out, nil
}

// Concat joins tensors of one dtype along axis; all other dims must match.
func Concat(axis int, ts ...*Tensor) (*Tensor, error) {
	if len(ts) == 0 {
		return nil, fmt.Errorf("tensor: concat of no tensors")
	}
	first := ts[0]
	for _, t := range ts {
		if t != nil && t.dev != nil {
			return nil, t.onDevice("Concat")
		}
	}
	ax, err := Axis(axis, first.Rank())
	if err != nil {
		return nil, fmt.Errorf("tensor: concat of shape %v: %w", first.shape, err)
	}
	outShape := first.shape.Clone()
	outShape[ax] = 0
	for _, t := range ts {
		if t.dtype != first.dtype || t.Rank() != first.Rank() {
			return nil, fmt.Errorf("tensor: concat %v %v with %v %v", first.dtype, first.shape, t.dtype, t.shape)
		}
		for i := range t.shape {
			if i != ax && t.shape[i] != first.shape[i] {
				return nil, fmt.Errorf("tensor: concat along axis %d of %v and %v: other dims differ", ax, first.shape, t.shape)
			}
		}
		outShape[ax] += t.shape[ax]
	}
	out := Zeros(first.dtype, outShape...)
	outer := first.shape[:ax].Size()
	inner := first.shape[ax+1:].Size()
	rowOut := outShape[ax] * inner
	at := 0
	for _, t := range ts {
		w := t.shape[ax] * inner
		for o := 0; o < outer; o++ {
			copyData(subslice(out.data, o*rowOut+at, o*rowOut+at+w), subslice(t.data, o*w, o*w+w))
		}
		at += w
	}
	return out, nil
}

// Stack joins tensors of one shape along a new axis.
func Stack(axis int, ts ...*Tensor) (*Tensor, error) {
	if len(ts) == 0 {
		return nil, fmt.Errorf("tensor: stack of no tensors")
	}
	for _, t := range ts {
		if t != nil && t.dev != nil {
			return nil, t.onDevice("Stack")
		}
	}
	ax, err := Axis(axis, ts[0].Rank()+1)
	if err != nil {
		return nil, fmt.Errorf("tensor: stack of shape %v: %w", ts[0].shape, err)
	}
	expanded := make([]*Tensor, len(ts))
	for i, t := range ts {
		if !t.shape.Equal(ts[0].shape) {
			return nil, fmt.Errorf("tensor: stack of shapes %v and %v: want equal shapes", ts[0].shape, t.shape)
		}
		s := append(append(t.shape[:ax].Clone(), 1), t.shape[ax:]...)
		expanded[i] = &Tensor{dtype: t.dtype, shape: s, data: t.data}
	}
	return Concat(ax, expanded...)
}
