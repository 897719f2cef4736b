package infer

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plumbml/plumb/tensor"
)

// An int8 model file is safetensors (https://github.com/huggingface/safetensors:
// an 8-byte little-endian header length, a JSON header of dtype, shape
// and byte offsets per tensor plus string metadata, then the data). The
// tensors are named as ONNX's QDQ format names a quantized tensor X and
// its quantization parameters (onnxruntime.quantization): X_quantized
// (the int8 weight), X_scale and X_zero_point; an activation A (a
// layer's input or output, "conv1_output") has A_scale and A_zero_point
// (uint8). A layer's float32 bias, batch norm folded in, is
// "<layer>/bias". The float32 constants the int8 graph still reads (an
// input normalisation, layers kept float32) are "float32/<parameter>" or
// "float32/constant_<k>" (floatConstants). The metadata holds the float model's (which model to
// build) and quantFormat.
const (
	quantFormatKey = "quantization"
	quantFormat    = "plumb int8 static: per-channel symmetric 7-bit weights, per-tensor uint8 activations (QDQ names)"
	maxQuantHeader = 16 << 20
)

type stEntry struct {
	DType   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// Save writes the int8 model to path (safetensors, see above) with the
// float model's metadata meta, which LoadQuantized's caller needs to
// rebuild the float graph.
func (q *Quantized) Save(path string, meta map[string]string) error {
	if q == nil || q.prep == nil {
		return errors.New("infer: Save of a Quantized that Quantize did not make")
	}
	type item struct {
		name  string
		dtype string
		shape []int
		data  []byte
	}
	var items []item
	f32 := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		return b
	}
	for _, l := range q.layers {
		w := make([]byte, len(l.Weight))
		for i, v := range l.Weight {
			w[i] = byte(v)
		}
		o := len(l.Scale)
		items = append(items,
			item{l.WeightName + "_quantized", "I8", l.Shape, w},
			item{l.WeightName + "_scale", "F32", []int{o}, f32(l.Scale)},
			item{l.WeightName + "_zero_point", "I8", []int{o}, make([]byte, o)},
			item{l.Name + "/bias", "F32", []int{o}, f32(l.Bias)})
	}
	refs, keys := floatConstants(q.Graph, q.names)
	for i, r := range refs {
		c := q.Graph.values[r].c
		items = append(items, item{keys[i], "F32", c.Shape().Clone(), f32(c.Float32s())})
	}
	for _, a := range q.actOrd {
		aq := q.acts[a]
		items = append(items, item{a + "_scale", "F32", []int{}, f32([]float32{aq.Scale})}, item{a + "_zero_point", "U8", []int{}, []byte{aq.Zero}})
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.name, b.name) })
	header := map[string]any{}
	md := map[string]string{quantFormatKey: quantFormat}
	for k, v := range meta {
		if k != quantFormatKey {
			md[k] = v
		}
	}
	header["__metadata__"] = md
	var body bytes.Buffer
	for _, it := range items {
		header[it.name] = stEntry{DType: it.dtype, Shape: it.shape, Offsets: [2]int{body.Len(), body.Len() + len(it.data)}}
		body.Write(it.data)
	}
	js, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("infer: Save: %w", err)
	}
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	var file bytes.Buffer
	binary.Write(&file, binary.LittleEndian, uint64(len(js)))
	file.Write(js)
	file.Write(body.Bytes())
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("infer: Save: %w", err)
	}
	_, err = tmp.Write(file.Bytes())
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("infer: Save: %w", err)
	}
	return nil
}

// quantFile is a parsed int8 model file.
type quantFile struct {
	meta    map[string]string
	entries map[string]stEntry
	data    []byte
}

var stSizes = map[string]int{"I8": 1, "U8": 1, "F32": 4}

// readQuantFile reads and checks an int8 model file (parseQuantFile): the
// header within the file and at most maxQuantHeader bytes, every tensor
// of a known dtype whose shape's bytes are exactly its span, every span
// inside the data. It allocates nothing beyond the file's own size and
// the header's parse.
func readQuantFile(path string) (*quantFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseQuantFile(b, path)
}

// parseQuantFile parses the bytes of an int8 model file named path (for
// errors); the tensors' data stay views of b.
func parseQuantFile(b []byte, path string) (*quantFile, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("%s: %d bytes, too short for a safetensors header", path, len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(len(b)-8) || n > maxQuantHeader {
		return nil, fmt.Errorf("%s: header of %d bytes in a file of %d (at most %d)", path, n, len(b), maxQuantHeader)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	f := &quantFile{entries: map[string]stEntry{}, data: b[8+n:]}
	if js, ok := raw["__metadata__"]; ok {
		if err := json.Unmarshal(js, &f.meta); err != nil {
			return nil, fmt.Errorf("%s: metadata: %w", path, err)
		}
	}
	if f.meta[quantFormatKey] == "" {
		return nil, fmt.Errorf("%s: not an int8 model written by Quantized.Save (no %q metadata)", path, quantFormatKey)
	}
	for name, js := range raw {
		if name == "__metadata__" {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(js, &e); err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", path, name, err)
		}
		size, ok := stSizes[e.DType]
		if !ok {
			return nil, fmt.Errorf("%s: tensor %q has dtype %q, want I8, U8 or F32", path, name, e.DType)
		}
		count := 1
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && count > len(f.data)/d) {
				return nil, fmt.Errorf("%s: tensor %q: shape %v larger than the file", path, name, e.Shape)
			}
			count *= d
		}
		lo, hi := e.Offsets[0], e.Offsets[1]
		if lo < 0 || hi < lo || hi > len(f.data) || hi-lo != count*size {
			return nil, fmt.Errorf("%s: tensor %q: bytes [%d, %d) for %s%v (%d bytes) in %d bytes of data", path, name, lo, hi, e.DType, e.Shape, count*size, len(f.data))
		}
		f.entries[name] = e
	}
	return f, nil
}

// tensor returns the bytes of tensor name, checking its dtype and shape
// (nil shape: any).
func (f *quantFile) tensor(name, dtype string, shape []int) ([]byte, []int, error) {
	e, ok := f.entries[name]
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("no tensor %q", name)
	case e.DType != dtype:
		return nil, nil, fmt.Errorf("tensor %q is %s, want %s", name, e.DType, dtype)
	case shape != nil && !slices.Equal(e.Shape, shape):
		return nil, nil, fmt.Errorf("tensor %q has shape %v, want %v", name, e.Shape, shape)
	}
	return f.data[e.Offsets[0]:e.Offsets[1]], e.Shape, nil
}

func (f *quantFile) float32s(name string, shape []int) ([]float32, error) {
	b, _, err := f.tensor(name, "F32", shape)
	if err != nil {
		return nil, err
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// QuantizedMeta returns an int8 model file's metadata: the float model's
// (the chapter and its config), to build the graph LoadQuantized takes.
func QuantizedMeta(path string) (map[string]string, error) {
	f, err := readQuantFile(path)
	if err != nil {
		return nil, fmt.Errorf("infer: %w", err)
	}
	return f.meta, nil
}

// LoadQuantized reads an int8 model written by Quantized.Save and
// returns it on g, a trace of the same float model (its weights' values
// are not used: the file holds the int8 weights, scales and biases, and
// the float32 constants the int8 graph still reads, floatConstants).
// The layers the file holds run in int8, the others in float32.
func LoadQuantized(g *Graph, path string, opts QuantOptions) (*Quantized, error) {
	if g == nil || len(g.outputs) == 0 {
		return nil, errors.New("infer: LoadQuantized on an empty graph")
	}
	f, err := readQuantFile(path)
	if err != nil {
		return nil, fmt.Errorf("infer: LoadQuantized: %w", err)
	}
	prep, err := prepareQuant(g)
	if err != nil {
		return nil, err
	}
	names := layerNames(g, opts.Names)
	weightNames := layerWeightNames(g, opts.Names)
	skip := slices.Clone(opts.Skip)
	for i, n := range names {
		if _, ok := f.entries[weightNames[i]+"_quantized"]; !ok {
			skip = append(skip, n)
		}
	}
	if len(skip) == len(names) {
		var held []string
		for name := range f.entries {
			if w, ok := strings.CutSuffix(name, "_quantized"); ok {
				held = append(held, w)
			}
		}
		slices.Sort(held)
		return nil, fmt.Errorf("infer: LoadQuantized: %s holds int8 weights %v, none of the graph's (%v; name the weights with QuantOptions.Names)", path, held, weightNames)
	}
	src := quantSource{
		act: func(name string, _ Ref) (actQuant, error) {
			s, err := f.float32s(name+"_scale", []int{})
			if err != nil {
				return actQuant{}, err
			}
			z, _, err := f.tensor(name+"_zero_point", "U8", []int{})
			if err != nil {
				return actQuant{}, err
			}
			if !finite32(s[0]) || s[0] <= 0 {
				return actQuant{}, fmt.Errorf("scale %v, want a finite positive number", s[0])
			}
			return actQuant{Scale: s[0], Zero: z[0]}, nil
		},
		layer: func(name string, n node) (*QuantLayer, error) {
			wn := weightNames[slices.Index(names, name)]
			shape := prep.values[n.in[1]].shape
			w, _, err := f.tensor(wn+"_quantized", "I8", shape)
			if err != nil {
				return nil, fmt.Errorf("layer %s: %w", name, err)
			}
			o := shape[0]
			if n.op.Name() == "linear" {
				o = shape[1]
			}
			l := &QuantLayer{Name: name, WeightName: wn, Op: n.op.Name(), Shape: shape.Clone(), Weight: make([]int8, len(w))}
			for i, v := range w {
				l.Weight[i] = int8(v)
			}
			if l.Scale, err = f.float32s(wn+"_scale", []int{o}); err != nil {
				return nil, fmt.Errorf("layer %s: %w", name, err)
			}
			zp, _, err := f.tensor(wn+"_zero_point", "I8", []int{o})
			if err != nil {
				return nil, fmt.Errorf("layer %s: %w", name, err)
			}
			for j, z := range zp {
				if z != 0 {
					return nil, fmt.Errorf("layer %s: weight zero point %d is %d, want 0 (symmetric weights)", name, j, int8(z))
				}
				if !finite32(l.Scale[j]) || l.Scale[j] <= 0 {
					return nil, fmt.Errorf("layer %s: weight scale %d is %v, want a finite positive number", name, j, l.Scale[j])
				}
			}
			if l.Bias, err = f.float32s(name+"/bias", []int{o}); err != nil {
				return nil, fmt.Errorf("layer %s: %w", name, err)
			}
			return l, nil
		},
	}
	q, err := buildQuantized(prep, names, skip, src)
	if err != nil {
		return nil, fmt.Errorf("infer: LoadQuantized: %s: %w", path, err)
	}
	q.names = opts.Names
	refs, keys := floatConstants(q.Graph, opts.Names)
	for i, r := range refs {
		v := q.Graph.values[r]
		x, err := f.float32s(keys[i], v.shape)
		if err != nil {
			return nil, fmt.Errorf("infer: LoadQuantized: %s: the float32 part of the model: %w", path, err)
		}
		c, err := tensor.FromSlice(x, v.shape...)
		if err != nil {
			return nil, fmt.Errorf("infer: LoadQuantized: %s: %w", path, err)
		}
		q.Graph.values[r].c = c
	}
	return q, nil
}

// floatConstants lists the float32 constants g's nodes read (the float
// part of an int8 graph: an input normalisation, the layers kept
// float32), in value order, with the name each has in a saved model:
// "float32/" and its parameter's name where names has it, else
// "float32/constant_<k>" (k counts them in order; a trace of the same
// model gives the same order).
func floatConstants(g *Graph, names map[*tensor.Tensor]string) (refs []Ref, keys []string) {
	read := make([]bool, len(g.values))
	for _, n := range g.nodes {
		for _, r := range n.in {
			read[r] = true
		}
	}
	for i, v := range g.values {
		if !read[i] || v.kind != kindConst || v.dt != tensor.Float32 || v.c == nil {
			continue
		}
		key := fmt.Sprintf("float32/constant_%d", len(refs))
		if s, ok := names[v.c]; ok && s != "" {
			key = "float32/" + s
		}
		refs, keys = append(refs, Ref(i)), append(keys, key)
	}
	return refs, keys
}

func finite32(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
