package infer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/plumbml/plumb/internal/qgemm"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// QuantOptions tune Quantize.
type QuantOptions struct {
	// Skip lists layers kept in float32 (the sensitive ones a report
	// shows), by name.
	Skip []string
	// Names maps a weight tensor of the traced model to its parameter's
	// name ("conv1/kernel"); a layer is named after its weight's name
	// without the last element ("conv1"), and without one as conv2d_0,
	// linear_1, ... in the order the graph runs them.
	Names map[*tensor.Tensor]string
}

// Quantized is an int8 version of a graph: Graph runs the quantizable
// chains as int8 segments (see quantSegment) and the rest in float32.
// Compile it as any graph.
type Quantized struct {
	Graph  *Graph
	prep   *Graph // the float graph the segments replace chains of
	segs   []*quantSegment
	layers []*QuantLayer
	acts   map[string]actQuant
	actOrd []string
	all    []string // every conv2d and linear layer's name, int8 or not
	names  map[*tensor.Tensor]string
}

// QuantLayer is one int8 convolution or linear layer's quantized
// weights: symmetric, per output channel, 7-bit ([-63, 63], the kernels'
// range; internal/qgemm) in the float weight's layout ([O, C, KH, KW] for
// a convolution, [in, out] for linear), with the float32 bias (batch
// norm folded in).
type QuantLayer struct {
	Name       string
	WeightName string // the float weight's name, the stem of the QDQ names in a saved model
	Op         string // conv2d or linear
	Shape      []int
	Weight     []int8
	Scale      []float32 // per output channel
	Bias       []float32 // per output channel
}

// prepareQuant returns a copy of g with batch norm lowered and folded
// into its neighbouring convolutions and linear layers (the passes
// Compile runs first), the float graph calibration measures and
// quantization rewrites.
func prepareQuant(g *Graph) (*Graph, error) {
	h := g.clone()
	for _, p := range []pass{{"batch norm as scale and shift", lowerBatchNorm}, {"batch norm folded into conv/linear", foldAffine}, {"batch norm folded into the unpadded conv after it", foldAffineForward}} {
		if _, err := p.run(h); err != nil {
			return nil, fmt.Errorf("infer: pass %s: %w", p.name, err)
		}
	}
	return h.pruned(), nil
}

// layerNames names each conv2d and linear node of g, in order (the
// passes of prepareQuant keep them and their order).
func layerNames(g *Graph, names map[*tensor.Tensor]string) []string {
	l, _ := layerAndWeightNames(g, names)
	return l
}

// layerWeightNames names each conv2d and linear node's weight, in order:
// its parameter's name, or "<layer>/weight".
func layerWeightNames(g *Graph, names map[*tensor.Tensor]string) []string {
	_, w := layerAndWeightNames(g, names)
	return w
}

func layerAndWeightNames(g *Graph, names map[*tensor.Tensor]string) (layers, weights []string) {
	count := map[string]int{}
	for _, n := range g.nodes {
		op := n.op.Name()
		if op != "conv2d" && op != "linear" {
			continue
		}
		name := fmt.Sprintf("%s_%d", op, count[op])
		weight := name + "/weight"
		count[op]++
		if len(n.in) > 1 {
			if v := g.values[n.in[1]]; v.kind == kindConst {
				if s, ok := names[v.c]; ok && s != "" {
					name, weight = s, s
					if i := strings.LastIndex(s, "/"); i > 0 {
						name = s[:i]
					}
				}
			}
		}
		layers, weights = append(layers, name), append(weights, weight)
	}
	return layers, weights
}

// Quantize returns the int8 version of g: post-training static
// quantization with calib's activation ranges (Calibrate on g). Each
// chain of convolutions (ungrouped, explicit or VALID padding), linear
// layers, ReLUs, max pools and flattens between them, where each value
// has one reader, becomes one int8 segment: uint8 per-tensor activations
// (ranges from calib), int8 per-output-channel weights, the dequantize
// fused into each product's epilogue (bias, ReLU) and the requantize
// into its output. A chain may end in a residual add of a float32 tensor
// computed before it (and a ReLU), which the last product's float32
// epilogue applies. A chain starts at a convolution or linear layer not
// in opts.Skip; everything else stays float32.
func Quantize(g *Graph, calib *Calibration, opts QuantOptions) (*Quantized, error) {
	switch {
	case g == nil || len(g.outputs) == 0:
		return nil, errors.New("infer: Quantize of an empty graph")
	case calib == nil || calib.src != g:
		return nil, errors.New("infer: Quantize needs the Calibration made by Calibrate on the same graph")
	}
	prep := calib.prep
	names, weights := layerAndWeightNames(g, opts.Names)
	src := quantSource{
		act: func(_ string, r Ref) (actQuant, error) {
			rg, ok := calib.ranges[r]
			if !ok {
				return actQuant{}, fmt.Errorf("no calibrated range for value %d", r)
			}
			return actQuantOf(rg), nil
		},
		layer: func(name string, n node) (*QuantLayer, error) {
			return quantizeLayer(prep, name, weights[slices.Index(names, name)], n)
		},
	}
	q, err := buildQuantized(prep, names, opts.Skip, src)
	if err != nil {
		return nil, err
	}
	q.names = opts.Names
	return q, nil
}

// quantSource gives the quantization of each activation and layer: from
// calibration and the float weights (Quantize) or from a saved model
// (LoadQuantized).
type quantSource struct {
	act   func(name string, r Ref) (actQuant, error)
	layer func(name string, n node) (*QuantLayer, error)
}

// quantizeLayer quantizes the weights of a conv2d or linear node.
func quantizeLayer(g *Graph, name, weightName string, n node) (*QuantLayer, error) {
	w := g.values[n.in[1]].c
	l := &QuantLayer{Name: name, WeightName: weightName, Op: n.op.Name(), Shape: w.Shape().Clone()}
	k, nout, b := gemmB(l.Op, l.Shape, func(i int) float32 { return float32(w.At(i)) })
	q, scale, err := qgemm.QuantizeWeights(k, nout, b, nout)
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", name, err)
	}
	l.Scale = scale
	l.Weight = make([]int8, len(q))
	// Back from the GEMM's B to the float weight's layout.
	for i, dst := range gemmIndex(l.Op, l.Shape) {
		l.Weight[dst] = q[i]
	}
	l.Bias = make([]float32, nout)
	if len(n.in) > 2 {
		bias := g.values[n.in[2]].c
		for j := range l.Bias {
			l.Bias[j] = float32(bias.At(j))
		}
	}
	return l, nil
}

// gemmIndex returns, for each element of the GEMM's B (k×n, row
// (kh, kw, c) for a convolution, matching channels-last im2col), the
// index of the same weight in the float layout.
func gemmIndex(op string, shape []int) []int {
	if op == "linear" {
		idx := make([]int, shape[0]*shape[1])
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	o, c, kh, kw := shape[0], shape[1], shape[2], shape[3]
	idx := make([]int, o*c*kh*kw)
	for i := range kh {
		for j := range kw {
			for ch := range c {
				row := (i*kw+j)*c + ch
				for oc := range o {
					idx[row*o+oc] = ((oc*c+ch)*kh+i)*kw + j
				}
			}
		}
	}
	return idx
}

// gemmB returns the GEMM's B (k×n) of a weight in the float layout.
func gemmB[T any](op string, shape []int, at func(i int) T) (k, n int, b []T) {
	idx := gemmIndex(op, shape)
	b = make([]T, len(idx))
	for i, src := range idx {
		b[i] = at(src)
	}
	if op == "linear" {
		return shape[0], shape[1], b
	}
	return len(idx) / shape[0], shape[0], b
}

// convGeometry returns a conv2d or max_pool2d node's window when the
// int8 kernels take it: ungrouped, explicit or VALID padding, and (for a
// pool) no ceil mode or dilation, with the traced output shape checked.
func convGeometry(g *Graph, n node) (st qStage, ok bool) {
	at, isAt := n.op.(ops.Attributed)
	if !isAt || len(g.values[n.in[0]].shape) != 4 {
		return st, false
	}
	var pad [4]int
	var mode ops.PadMode
	in, out := g.values[n.in[0]].shape, g.values[n.out].shape
	switch a := at.Attrs().(type) {
	case ops.Conv2DAttrs:
		if a.Groups > 1 || len(n.in) < 2 || g.values[n.in[1]].kind != kindConst || (len(n.in) > 2 && g.values[n.in[2]].kind != kindConst) {
			return st, false
		}
		w := g.values[n.in[1]].shape
		st = qStage{kind: stConv, kh: w[2], kw: w[3], sh: a.Stride[0], sw: a.Stride[1], dh: a.Dilation[0], dw: a.Dilation[1]}
		pad, mode = a.Pad, a.Padding
	case ops.Pool2DAttrs:
		if n.op.Name() != "max_pool2d" || a.CeilMode || max(a.Dilation[0], a.Dilation[1]) > 1 {
			return st, false
		}
		st = qStage{kind: stPool, kh: a.Kernel[0], kw: a.Kernel[1], sh: a.Stride[0], sw: a.Stride[1], dh: 1, dw: 1}
		if st.sh == 0 {
			st.sh = st.kh
		}
		if st.sw == 0 {
			st.sw = st.kw
		}
		pad, mode = a.Pad, a.Padding
	default:
		return st, false
	}
	for _, v := range []*int{&st.sh, &st.sw, &st.dh, &st.dw} {
		if *v == 0 {
			*v = 1
		}
	}
	switch mode {
	case ops.PadExplicit:
		st.pad = pad
	case ops.PadValid:
	default:
		return st, false
	}
	st.in = [4]int{in[0], in[2], in[3], in[1]}
	st.out = [4]int{out[0], out[2], out[3], out[1]}
	oh := (in[2]+st.pad[0]+st.pad[1]-((st.kh-1)*st.dh+1))/st.sh + 1
	ow := (in[3]+st.pad[2]+st.pad[3]-((st.kw-1)*st.dw+1))/st.sw + 1
	if oh != out[2] || ow != out[3] || (st.kind == stPool && in[1] != out[1]) {
		return st, false
	}
	return st, true
}

// buildQuantized replaces the quantizable chains of prep by int8
// segments, taking each activation's and layer's quantization from src.
func buildQuantized(prep *Graph, names []string, skip []string, src quantSource) (*Quantized, error) {
	q := &Quantized{prep: prep, acts: map[string]actQuant{}, all: names}
	h := prep.clone()
	uses := h.uses()
	layerOf := map[int]string{} // node index → layer name
	li := 0
	for i, n := range h.nodes {
		if op := n.op.Name(); op == "conv2d" || op == "linear" {
			layerOf[i] = names[li]
			li++
		}
	}
	// anchor reports whether node i can run as an int8 product.
	anchor := func(i int) bool {
		n := h.nodes[i]
		name, isLayer := layerOf[i]
		if !isLayer || slices.Contains(skip, name) || h.values[n.in[0]].dt != tensor.Float32 {
			return false
		}
		if n.op.Name() == "linear" {
			return len(n.in) >= 2 && h.values[n.in[1]].kind == kindConst && len(h.values[n.in[1]].shape) == 2 &&
				len(h.values[n.in[0]].shape) == 2 && (len(n.in) == 2 || h.values[n.in[2]].kind == kindConst)
		}
		_, ok := convGeometry(h, n)
		return ok
	}
	sole := func(r Ref) int {
		if len(uses[r]) != 1 || h.isOutput(r) {
			return -1
		}
		return uses[r][0]
	}
	used := make([]bool, len(h.nodes))
	for i := range h.nodes {
		if used[i] || !anchor(i) {
			continue
		}
		chain := []int{i}
		closing := false // after a float32 residual add only a ReLU may follow
		// A value read by the next convolution and by a later add (a
		// residual block's input) is kept in uint8 for that add:
		// pend is the value, pendAdd the add, pendAt the chain's length
		// where pend was produced (to cut the chain back to if the add
		// is never reached).
		pend, pendAdd, pendAt := Ref(-1), -1, 0
		int8Adds := map[int]Ref{} // add node → its uint8 residual
		if k := residualReader(h, uses, first(h, i), i); k >= 0 && !used[k] {
			pend, pendAdd, pendAt = h.nodes[i].in[0], k, 0
		}
		for {
			last := h.nodes[chain[len(chain)-1]]
			j := sole(last.out)
			if j < 0 && pend < 0 && !closing && !h.isOutput(last.out) {
				for _, c := range uses[last.out] {
					if k := residualReader(h, uses, last.out, c); k >= 0 && !used[k] && !used[c] && anchor(c) {
						j, pend, pendAdd, pendAt = c, last.out, k, len(chain)
						break
					}
				}
			}
			if j < 0 || used[j] {
				break
			}
			nj := h.nodes[j]
			op := nj.op.Name()
			if op != "add" && nj.in[0] != last.out {
				break
			}
			if op == "add" && j == pendAdd {
				lastOp := last.op.Name()
				if (lastOp != "conv2d" && lastOp != "linear") || len(nj.in) != 2 || !slices.Contains(nj.in, pend) ||
					!h.values[pend].shape.Equal(h.values[last.out].shape) {
					break
				}
				int8Adds[j] = pend
				chain = append(chain, j)
				pend, pendAdd = -1, -1
				continue
			}
			ok := false
			switch op {
			case "relu":
				ok = len(nj.in) == 1
			case "max_pool2d":
				_, ok = convGeometry(h, nj)
			case "global_avg_pool2d": // one a chain (its output's quantization is named after the chain)
				ok = len(nj.in) == 1 && len(h.values[nj.in[0]].shape) == 4 && !slices.ContainsFunc(chain, func(c int) bool { return h.nodes[c].op.Name() == op })
			case "reshape":
				in, out := h.values[nj.in[0]].shape, h.values[nj.out].shape
				ok = len(in) == 4 && len(out) == 2 && out[0] == in[0]
			case "conv2d", "linear":
				ok = anchor(j)
			case "add":
				lastOp := last.op.Name()
				ok = (lastOp == "conv2d" || lastOp == "linear") && residualOf(h, nj, last.out, chain[0]) >= 0
			}
			if !ok || (closing && op != "relu") {
				break
			}
			chain = append(chain, j)
			if closing {
				break
			}
			closing = op == "add"
		}
		if pend >= 0 && pendAt > 0 { // the add was not reached: pend leaves the segment as its output
			chain = chain[:pendAt]
		}
		for h.nodes[chain[len(chain)-1]].op.Name() == "reshape" { // a flatten stays a float view when nothing int8 reads it
			chain = chain[:len(chain)-1]
		}
		for k := range int8Adds {
			if !slices.Contains(chain, k) {
				delete(int8Adds, k)
			}
		}
		seg, err := q.segment(h, chain, layerOf, src, int8Adds)
		if err != nil {
			return nil, err
		}
		for _, j := range chain {
			used[j] = true
		}
		first, last := h.nodes[chain[0]], h.nodes[chain[len(chain)-1]]
		in := []Ref{first.in[0]}
		if seg.resRef >= 0 {
			in = append(in, seg.resRef)
		}
		h.nodes[chain[0]] = node{op: seg, in: in, out: last.out}
		for _, j := range chain[1:] {
			h.nodes[j].out = -1
		}
	}
	h.dropDead()
	q.Graph = h.pruned()
	q.Graph.dropUnreadConstants()
	return q, nil
}

// dropUnreadConstants lets go of the constants no node reads (the float32
// weights the int8 segments replaced), so that a plan compiled from g
// does not keep them alive: once the model and the Quantized are gone,
// only the int8 weights remain.
func (g *Graph) dropUnreadConstants() {
	read := make([]bool, len(g.values))
	for _, n := range g.nodes {
		for _, r := range n.in {
			read[r] = true
		}
	}
	for i, v := range g.values {
		if v.kind == kindConst && !read[i] {
			g.values[i].c = nil
		}
	}
}

// first returns the input node i reads first (its activation).
func first(h *Graph, i int) Ref { return h.nodes[i].in[0] }

// residualReader returns the add node that reads v beside the node c
// when v has exactly these two readers, c reads v as its first input, the
// add comes after c, and v is no graph output: the residual of a block
// whose branch starts at c. Else -1.
func residualReader(h *Graph, uses [][]int, v Ref, c int) int {
	if len(uses[v]) != 2 || h.isOutput(v) || h.nodes[c].in[0] != v {
		return -1
	}
	k := uses[v][0]
	if k == c {
		k = uses[v][1]
	}
	if k <= c || h.nodes[k].op.Name() != "add" || len(h.nodes[k].in) != 2 {
		return -1
	}
	return k
}

// residualOf returns the operand of the add node n other than the
// product's output out when it can be the residual of the product's
// epilogue: a float32 tensor of out's shape available before node first
// (where the segment runs); else -1.
func residualOf(h *Graph, n node, out Ref, first int) Ref {
	if len(n.in) != 2 {
		return -1
	}
	r := n.in[0]
	if r == out {
		r = n.in[1]
	}
	v := h.values[r]
	if r == out || v.dt != tensor.Float32 || !v.shape.Equal(h.values[out].shape) || !h.defined(r, first) {
		return -1
	}
	return r
}

// segment builds the int8 segment of the chain of nodes (indices into h).
// int8Adds are the chain's residual adds whose both operands are uint8
// activations of the segment (the add node → its residual).
func (q *Quantized) segment(h *Graph, chain []int, layerOf map[int]string, src quantSource, int8Adds map[int]Ref) (*quantSegment, error) {
	first := h.nodes[chain[0]]
	inRef := first.in[0]
	seg := &quantSegment{inRef: inRef, resRef: -1, inShape: h.values[inRef].shape.Clone()}
	act := func(name string, r Ref) (actQuant, error) {
		a, err := src.act(name, r)
		if err != nil {
			return a, fmt.Errorf("infer: Quantize: activation %s: %w", name, err)
		}
		if _, seen := q.acts[name]; !seen {
			q.actOrd = append(q.actOrd, name)
		}
		q.acts[name] = a
		return a, nil
	}
	var err error
	if seg.in, err = act(layerOf[chain[0]]+"_input", inRef); err != nil {
		return nil, err
	}
	var dims [4]int // the current activation, NHWC
	if s := seg.inShape; len(s) == 4 {
		dims = [4]int{s[0], s[2], s[3], s[1]}
	} else {
		dims = [4]int{s[0], 1, 1, s[1]}
	}
	cur := seg.in
	var kept []Ref // the residuals the segment keeps in uint8 for its int8 adds
	for _, r := range int8Adds {
		kept = append(kept, r)
	}
	savedQ := map[Ref]actQuant{}
	if slices.Contains(kept, inRef) {
		seg.saveIn = true
		savedQ[inRef] = seg.in
	}
	var flat []int // C, H, W of a flatten the next linear layer reads
	var parts []string
	for ci := 0; ci < len(chain); ci++ {
		n := h.nodes[chain[ci]]
		var st *qStage
		switch n.op.Name() {
		case "conv2d", "linear":
			name := layerOf[chain[ci]]
			l, err := src.layer(name, n)
			if err != nil {
				return nil, fmt.Errorf("infer: Quantize: %w", err)
			}
			st, err = gemmStage(h, n, l, dims, flat)
			if err != nil {
				return nil, fmt.Errorf("infer: Quantize: layer %s: %w", name, err)
			}
			q.layers = append(q.layers, l)
			st.layer, st.inQ = name, cur
			st.ep.ScaleA = cur.Scale
			part := n.op.Name()
			next := func() string {
				if ci+1 < len(chain) {
					return h.nodes[chain[ci+1]].op.Name()
				}
				return ""
			}
			if next() == "relu" {
				ci++
				st.ep.ReLU = true
				part += "+relu"
			}
			if _, int8Add := int8Adds[nextIndex(chain, ci)]; next() == "add" && !int8Add { // the residual, then a ReLU, in the float32 epilogue
				ci++
				seg.resRef = residualOf(h, h.nodes[chain[ci]], n.out, chain[0])
				st.residual = true
				part += "+add"
				if next() == "relu" {
					ci++
					st.postReLU = true
					part += "+relu"
				}
			}
			parts = append(parts, part)
			st.ref = h.nodes[chain[ci]].out
			if ci < len(chain)-1 {
				if st.outQ, err = act(name+"_output", st.ref); err != nil {
					return nil, err
				}
			}
			flat = nil
		case "add": // an int8 residual add (int8Adds), then its ReLU
			saved := int8Adds[chain[ci]]
			resQ, ok := savedQ[saved]
			if !ok {
				return nil, fmt.Errorf("infer: Quantize: the residual of add %d is not kept by the segment", chain[ci])
			}
			st = &qStage{kind: stAdd, in: dims, out: dims, inQ: cur, resQ: resQ}
			part := "add"
			if ci+1 < len(chain) && h.nodes[chain[ci+1]].op.Name() == "relu" {
				ci++
				st.postReLU = true
				part += "+relu"
			}
			base := "add"
			if n := len(seg.stages); n > 0 {
				base = seg.stages[n-1].layer // the product whose output the add reads
			}
			st.layer = base + "+add" // the report's name for it
			if st.outQ, err = act(base+"_add_output", h.nodes[chain[ci]].out); err != nil {
				return nil, err
			}
			parts = append(parts, part)
		case "relu":
			st = &qStage{kind: stRelu, in: dims, out: dims, inQ: cur, outQ: cur}
			parts = append(parts, "relu")
		case "max_pool2d":
			g, _ := convGeometry(h, n)
			st = &g
			st.inQ, st.outQ = cur, cur
			parts = append(parts, "max_pool2d")
		case "global_avg_pool2d": // uint8 in, requantized to its output's range
			st = &qStage{kind: stGAP, in: dims, out: [4]int{dims[0], 1, 1, dims[3]}, inQ: cur}
			if st.outQ, err = act(layerOf[chain[0]]+"_global_avg_pool_output", h.nodes[chain[ci]].out); err != nil { // one a chain
				return nil, err
			}
			parts = append(parts, "global_avg_pool2d")
		case "reshape":
			st = &qStage{kind: stFlatten, in: dims, out: [4]int{dims[0], 1, 1, dims[1] * dims[2] * dims[3]}, inQ: cur, outQ: cur}
			flat = []int{dims[3], dims[1], dims[2]}
			parts = append(parts, "flatten")
		}
		if st.layer == "" {
			st.layer = stageOps[st.kind]
		}
		st.ref = h.nodes[chain[ci]].out
		dims, cur = st.out, st.outQ
		if slices.Contains(kept, st.ref) {
			st.save = true
			savedQ[st.ref] = st.outQ
		}
		seg.stages = append(seg.stages, st)
		seg.actMax = max(seg.actMax, size4(st.in), size4(st.out))
		if st.kind == stConv {
			k, _ := st.pb.Dims()
			seg.colMax = max(seg.colMax, min(st.in[0], max(1, chunkRows/max(st.out[1]*st.out[2], 1)))*st.out[1]*st.out[2]*k)
		}
	}
	last := seg.stages[len(seg.stages)-1]
	last.last = true
	if last.kind == stConv {
		seg.fMax = size4(last.out)
	}
	seg.actMax = max(seg.actMax, size4([4]int{1, 1, 1, shapeSize(seg.inShape)}))
	seg.out = h.values[last.ref].shape.Clone()
	seg.name = "int8[" + strings.Join(parts, ",") + "]"
	q.segs = append(q.segs, seg)
	return seg, nil
}

// nextIndex is the node after position ci of chain, or -1.
func nextIndex(chain []int, ci int) int {
	if ci+1 < len(chain) {
		return chain[ci+1]
	}
	return -1
}

// gemmStage makes the int8 product of a conv2d or linear node from its
// quantized layer l, on an input of dims (NHWC); flat, when not nil, is
// the (C, H, W) of a channels-last flatten before a linear layer, whose
// weight rows (in the float graph's NCHW flatten order) it reorders.
func gemmStage(h *Graph, n node, l *QuantLayer, dims [4]int, flat []int) (*qStage, error) {
	ws := h.values[n.in[1]].shape
	if !slices.Equal(ws, l.Shape) || len(l.Weight) != ws.Size() {
		return nil, fmt.Errorf("quantized weight %v, the graph's is %v", l.Shape, ws)
	}
	var st qStage
	if n.op.Name() == "conv2d" {
		g, ok := convGeometry(h, n)
		if !ok {
			return nil, errors.New("a convolution the int8 kernels do not take")
		}
		st = g
	} else {
		out := h.values[n.out].shape
		st = qStage{kind: stLinear, in: dims, out: [4]int{out[0], 1, 1, out[1]}}
	}
	k, nout, b := gemmB(l.Op, l.Shape, func(i int) int8 { return l.Weight[i] })
	if flat != nil { // row (c, h, w) of the float graph is row (h, w, c) here
		c, hh, ww := flat[0], flat[1], flat[2]
		if c*hh*ww != k {
			return nil, fmt.Errorf("a flatten of %d×%d×%d before %d inputs", c, hh, ww, k)
		}
		p := make([]int8, len(b))
		for ch := range c {
			for i := range hh {
				for j := range ww {
					copy(p[((i*ww+j)*c+ch)*nout:][:nout], b[((ch*hh+i)*ww+j)*nout:][:nout])
				}
			}
		}
		b = p
	}
	if len(l.Scale) != nout || len(l.Bias) != nout {
		return nil, fmt.Errorf("%d scales and %d biases for %d output channels", len(l.Scale), len(l.Bias), nout)
	}
	pb, err := qgemm.PackB(k, nout, b, nout)
	if err != nil {
		return nil, err
	}
	st.pb = pb
	st.ep = qgemm.Epilogue{ScaleB: l.Scale, Bias: l.Bias}
	return &st, nil
}

// Layers returns the int8 layers, in the order they run.
func (q *Quantized) Layers() []*QuantLayer {
	if q == nil {
		return nil
	}
	return q.layers
}

// AllLayers returns the name of every convolution and linear layer of
// the graph, int8 or float32, in the order they run.
func (q *Quantized) AllLayers() []string {
	if q == nil {
		return nil
	}
	return q.all
}
