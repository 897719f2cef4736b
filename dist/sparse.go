package dist

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// GatherRows sums the sparse gradients (graph.Param.SparseGrad: an
// embedding table's looked-up rows) of ps over the ranks, each rank's
// scaled by scale, with one allgather of every rank's rows and values: the
// union of the rows comes back to every rank, a row looked up on several
// ranks summed in rank order. Each rank sends 8+8k+4kw bytes for k rows of
// width w (float32), and receives the others': a step costs the rows the
// ranks looked up, where densifying would cost the whole table in every
// allreduce. Each parameter must hold a sparse gradient (possibly with no
// rows) or none on every rank.
func GatherRows(c Comm, ps []*graph.Param, scale float64) error {
	if len(ps) == 0 {
		return nil
	}
	var send []byte
	for _, p := range ps {
		rows, vals := 0, []byte(nil)
		if s := p.SparseGrad; s != nil {
			if err := s.Validate(p.Value); err != nil {
				return fmt.Errorf("dist: GatherRows: parameter %q: %w", p.Name, err)
			}
			rows = len(s.Rows)
			vals = scaledBytes(s.Values, scale)
		}
		send = binary.LittleEndian.AppendUint64(send, uint64(rows))
		if s := p.SparseGrad; s != nil {
			for _, r := range s.Rows {
				send = binary.LittleEndian.AppendUint64(send, uint64(r))
			}
		}
		send = append(send, vals...)
	}
	all, err := c.Allgather(send)
	if err != nil {
		return err
	}
	for _, p := range ps {
		parts := make([]*graph.SparseRows, len(all))
		for rank := range all {
			s, rest, err := decodeRows(all[rank], p.Value)
			if err != nil {
				return fmt.Errorf("dist: GatherRows: parameter %q from rank %d: %w", p.Name, rank, err)
			}
			parts[rank], all[rank] = s, rest
		}
		p.Grad, p.SparseGrad = nil, sumRows(parts, p.Value)
	}
	return nil
}

// scaledBytes returns scale*t's elements as little-endian bytes.
func scaledBytes(t *tensor.Tensor, scale float64) []byte {
	var out []byte
	switch d := t.Raw().(type) {
	case []float32:
		out = make([]byte, 0, 4*len(d))
		for _, v := range d {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v*float32(scale)))
		}
	case []float64:
		out = make([]byte, 0, 8*len(d))
		for _, v := range d {
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v*scale))
		}
	}
	return out
}

// decodeRows reads one parameter's rows and values from the front of b and
// returns them and what follows.
func decodeRows(b []byte, value *tensor.Tensor) (*graph.SparseRows, []byte, error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("message ends before the row count")
	}
	n := binary.LittleEndian.Uint64(b)
	b = b[8:]
	width := value.Size() / max(value.Dim(0), 1)
	esize := 4
	if value.DType() == tensor.Float64 {
		esize = 8
	}
	if n > uint64(value.Dim(0)) || uint64(len(b)) < n*uint64(8+width*esize) {
		return nil, nil, fmt.Errorf("%d rows of width %d do not fit a %v table or the %d bytes sent", n, width, value.Shape(), len(b))
	}
	rows := make([]int, n)
	for i := range rows {
		rows[i] = int(binary.LittleEndian.Uint64(b[8*i:]))
	}
	b = b[8*n:]
	vals := tensor.Zeros(value.DType(), append(tensor.Shape{int(n)}, value.Shape()[1:]...)...)
	switch d := vals.Raw().(type) {
	case []float32:
		for i := range d {
			d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case []float64:
		for i := range d {
			d[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	s := &graph.SparseRows{Rows: rows, Values: vals}
	if err := s.Validate(value); err != nil {
		return nil, nil, err
	}
	return s, b[int(n)*width*esize:], nil
}

// sumRows merges the ranks' sparse gradients into one: the union of their
// rows, ascending, each the sum of the ranks' values in rank order.
func sumRows(parts []*graph.SparseRows, value *tensor.Tensor) *graph.SparseRows {
	var rows []int
	for _, s := range parts {
		rows = append(rows, s.Rows...)
	}
	slices.Sort(rows)
	rows = slices.Compact(rows)
	out := &graph.SparseRows{Rows: rows, Values: tensor.Zeros(value.DType(), append(tensor.Shape{len(rows)}, value.Shape()[1:]...)...)}
	width := value.Size() / max(value.Dim(0), 1)
	for _, s := range parts {
		for k, r := range s.Rows {
			at, _ := slices.BinarySearch(rows, r)
			switch d := out.Values.Raw().(type) {
			case []float32:
				addRow(d[at*width:(at+1)*width], s.Values.Float32s()[k*width:(k+1)*width])
			case []float64:
				addRow(d[at*width:(at+1)*width], s.Values.Float64s()[k*width:(k+1)*width])
			}
		}
	}
	return out
}

func addRow[T float32 | float64](dst, src []T) {
	for i, v := range src {
		dst[i] += v
	}
}
