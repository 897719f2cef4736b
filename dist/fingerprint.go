package dist

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/plumbml/plumb/graph"
)

// Fingerprint is what the ranks of one data-parallel run must agree on
// before they train: named fields, each a value written as text, in the
// order they were added. A data-parallel run whose ranks hold different
// models fails in its first broadcast (MPI_ERR_TRUNCATE) on one rank
// while the others wait for the watchdog; one whose ranks train with
// different learning rates, seeds or data sizes runs to the end with
// copies that drift apart, or with one rank taking more steps than the
// others. Agree compares the fingerprints up front instead.
//
// ModelFingerprint fingerprints the parameters (names, dtypes, shapes);
// RecipeFingerprint the settings that change the arithmetic (learning
// rate, batch, seed, optimizer, epochs, dtype, model kind) and the
// datasets' sizes. Values are compared as text: two settings agree when
// they print the same with %v.
type Fingerprint struct {
	Fields []Field
}

// Field is one entry of a Fingerprint.
type Field struct {
	Name, Value string
}

// Add appends the field name with value printed by %v.
func (f *Fingerprint) Add(name string, value any) {
	f.Fields = append(f.Fields, Field{Name: name, Value: fmt.Sprint(value)})
}

// ModelFingerprint lists params in order, one field a parameter
// ("parameter 3") whose value is its name, dtype and shape, then a field
// "parameters" that counts them. The values are not part of it: rank 0's
// are broadcast (Replicas.SyncParams).
func ModelFingerprint(params []*graph.Param) Fingerprint {
	var f Fingerprint
	for i, p := range params {
		v := "<nil>"
		switch {
		case p == nil:
		case p.Value == nil:
			v = fmt.Sprintf("%q without a value", p.Name)
		default:
			v = fmt.Sprintf("%q %v %v", p.Name, p.Value.DType(), p.Value.Shape())
		}
		f.Add(fmt.Sprintf("parameter %d", i), v)
	}
	f.Add("parameters", len(params)) // last: a parameter that differs is named first
	return f
}

// RecipeFingerprint lists settings under "recipe NAME", in the order of
// their names, so that a map such as a run log's configuration can be
// passed as it is. Put only what must be equal on every rank in it:
// learning rate, batch, seed, optimizer, epochs, dtype, model, and the
// datasets' sizes after any limit; not file paths a rank writes to.
func RecipeFingerprint(settings map[string]any) Fingerprint {
	var f Fingerprint
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		f.Add("recipe "+k, settings[k])
	}
	return f
}

// Compare returns nil when f (this rank's, rank) and rank0 (rank 0's)
// hold the same fields with the same values, and otherwise a *Mismatch
// naming the first field, in rank 0's order, that differs or that one of
// them lacks, with both values.
func (f Fingerprint) Compare(rank0 Fingerprint, rank int) error {
	mine := make(map[string]string, len(f.Fields))
	for _, x := range f.Fields {
		mine[x.Name] = x.Value
	}
	var m *Mismatch
	seen := make(map[string]bool, len(rank0.Fields))
	note := func(field, zero, other string) {
		if m == nil {
			m = &Mismatch{Rank: rank, Field: field, Rank0: zero, Other: other}
		} else {
			m.More++
		}
	}
	for _, x := range rank0.Fields {
		seen[x.Name] = true
		v, ok := mine[x.Name]
		switch {
		case !ok:
			note(x.Name, x.Value, none)
		case v != x.Value:
			note(x.Name, x.Value, v)
		}
	}
	for _, x := range f.Fields {
		if !seen[x.Name] {
			note(x.Name, none, x.Value)
		}
	}
	if m == nil {
		return nil
	}
	return m
}

// none stands for a field a rank does not have.
const none = "none"

// Mismatch is a difference between rank 0's fingerprint and another
// rank's.
type Mismatch struct {
	Rank         int    // the rank that differs from rank 0
	Field        string // the first field that differs
	Rank0, Other string // the field's value on rank 0 and on Rank ("none" when absent)
	More         int    // how many other fields differ
}

func (m *Mismatch) Error() string {
	s := fmt.Sprintf("dist: the ranks disagree on %s: rank 0 has %s, rank %d has %s", m.Field, m.Rank0, m.Rank, m.Other)
	if m.More > 0 {
		s += fmt.Sprintf(" (and %d more difference(s))", m.More)
	}
	return s + "; every rank must run the same model, recipe and data"
}

// Agree sends every rank's fingerprint to every other (one allgather) and
// compares each with rank 0's. Every rank reaches the same verdict from
// the same bytes: all return nil, or all return the same *Mismatch (of the
// lowest rank that differs), so that every rank stops at once and none
// waits for a collective the others will never make.
func Agree(c Comm, f Fingerprint) error {
	if c == nil || c.Size() == 1 {
		return nil
	}
	all, err := c.Allgather(f.encode())
	if err != nil {
		return fmt.Errorf("dist: comparing the ranks' fingerprints: %w", err)
	}
	prints := make([]Fingerprint, len(all))
	for r, b := range all {
		if prints[r], err = decodeFingerprint(b); err != nil {
			return fmt.Errorf("dist: the fingerprint from rank %d: %w", r, err)
		}
	}
	for r := 1; r < len(prints); r++ {
		if err := prints[r].Compare(prints[0], r); err != nil {
			return err
		}
	}
	return nil
}

// encode writes the fields as length-prefixed name and value pairs.
func (f Fingerprint) encode() []byte {
	var b []byte
	for _, x := range f.Fields {
		b = binary.AppendUvarint(b, uint64(len(x.Name)))
		b = append(b, x.Name...)
		b = binary.AppendUvarint(b, uint64(len(x.Value)))
		b = append(b, x.Value...)
	}
	return b
}

func decodeFingerprint(b []byte) (Fingerprint, error) {
	var f Fingerprint
	next := func(off int) (string, int, error) {
		n, k := binary.Uvarint(b[off:])
		if k <= 0 || n > uint64(len(b)-off-k) {
			return "", 0, fmt.Errorf("malformed at byte %d of %d: want a length and that many bytes", off, len(b))
		}
		off += k
		return string(b[off : off+int(n)]), off + int(n), nil
	}
	for off := 0; off < len(b); {
		name, o, err := next(off)
		if err != nil {
			return Fingerprint{}, err
		}
		value, o, err := next(o)
		if err != nil {
			return Fingerprint{}, err
		}
		f.Fields = append(f.Fields, Field{Name: name, Value: value})
		off = o
	}
	return f, nil
}
