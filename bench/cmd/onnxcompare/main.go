// Command onnxcompare runs the models bench/onnx_compare.py exported
// through Plumb's ONNX importer (package onnx/run) and compares each
// output with ONNX Runtime's, printing one line per model and batch: the
// maximum absolute difference and whether it passes issue 33's bar (at
// most 1e-4, or 1e-4 relative to the largest |logit| when it is over 10),
// or the error that stopped the model (for an op the importer lacks, the
// node, op type and opset). Outside CI:
//
//	CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/onnx_compare.py --out DIR
//	go run ./bench/cmd/onnxcompare [-runs N] DIR
//	go run ./bench/cmd/onnxcompare -bench DIR/MODEL.json [-batch B] [-runs N] [-cpuprofile F]
//
// The second form times one model for bench/onnx_speed.sh (benchModel).
// Each case runs -runs times (default 1); the line gives the best time.
// The times are wall times on whatever the machine is doing, for a rough
// idea only: the side-by-side speed runs are bench's.
package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/onnx/run"
	"github.com/plumbml/plumb/tensor"
)

type array struct {
	DType string `json:"dtype"`
	Dims  []int  `json:"dims"`
	File  string `json:"file"`
}

type manifest struct {
	Model string `json:"model"`
	Opset int    `json:"opset"`
	Cases []struct {
		Batch   int              `json:"batch"`
		Inputs  map[string]array `json:"inputs"`
		Outputs map[string]array `json:"outputs"`
	} `json:"cases"`
}

func main() {
	runs := flag.Int("runs", 1, "runs of each case; the best time is printed")
	bench := flag.String("bench", "", "time one model: the manifest MODEL.json (see benchModel)")
	batch := flag.Int("batch", 1, "with -bench: the batch")
	profile := flag.String("cpuprofile", "", "with -bench: write a CPU profile of the timed Runs here")
	flag.Parse()
	if *bench != "" {
		if err := benchModel(os.Stdout, *bench, max(*batch, 1), max(*runs, 1), *profile); err != nil {
			fmt.Fprintln(os.Stderr, "onnxcompare:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: onnxcompare [-runs N] DIR (written by bench/onnx_compare.py)")
		os.Exit(2)
	}
	if err := compare(os.Stdout, flag.Arg(0), *runs); err != nil {
		fmt.Fprintln(os.Stderr, "onnxcompare:", err)
		os.Exit(1)
	}
}

func compare(w io.Writer, dir string, runs int) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		if filepath.Base(p) == "failures.json" {
			continue
		}
		var m manifest
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		name := strings.TrimSuffix(m.Model, ".onnx")
		model, err := onnx.Load(filepath.Join(dir, m.Model))
		if err != nil {
			fmt.Fprintf(w, "%-26s opset %2d  LOAD ERROR %v\n", name, m.Opset, err)
			continue
		}
		if u := run.Inspect(model).Unsupported; len(u) > 0 {
			fmt.Fprintf(w, "%-26s opset %2d  unsupported op types: %s\n", name, m.Opset, strings.Join(u, ", "))
		}
		compiled, err := run.Compile(model)
		if err != nil {
			fmt.Fprintf(w, "%-26s opset %2d  COMPILE ERROR %v\n", name, m.Opset, err)
			continue
		}
		for _, c := range m.Cases {
			in := map[string]*tensor.Tensor{}
			for k, a := range c.Inputs {
				if in[k], err = readArray(dir, a); err != nil {
					return err
				}
			}
			var out map[string]*tensor.Tensor
			var best time.Duration
			for r := range runs {
				start := time.Now()
				out, err = compiled.Run(in)
				if d := time.Since(start); r == 0 || d < best {
					best = d
				}
				if err != nil {
					break
				}
			}
			if err != nil {
				fmt.Fprintf(w, "%-26s opset %2d  batch %d  RUN ERROR %v\n", name, m.Opset, c.Batch, err)
				continue
			}
			for k, a := range c.Outputs {
				want, err := readArray(dir, a)
				if err != nil {
					return err
				}
				d, scale, err := diff(out[k], want)
				if err != nil {
					fmt.Fprintf(w, "%-26s opset %2d  batch %d  %s: %v\n", name, m.Opset, c.Batch, k, err)
					continue
				}
				tol := 1e-4 * max(1, scale/10)
				verdict := "pass"
				if d > tol {
					verdict = "FAIL"
				}
				fmt.Fprintf(w, "%-26s opset %2d  batch %d  %s max abs diff %.3g (max |ORT| %.3g, bar %.3g) %s  [Plumb run %v, best of %d]\n",
					name, m.Opset, c.Batch, k, d, scale, tol, verdict, best.Round(time.Millisecond), runs)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "failures.json")); err == nil {
		var f map[string]string
		if json.Unmarshal(b, &f) == nil {
			names := make([]string, 0, len(f))
			for k := range f {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				msg := f[k]
				if i := strings.LastIndex(msg, "\n"); i >= 0 {
					msg = msg[i+1:]
				}
				fmt.Fprintf(w, "%-26s EXPORT FAILED (python side): %s\n", k, msg)
			}
		}
	}
	return nil
}

// diff is the largest |got - want| and the largest |want|.
func diff(got, want *tensor.Tensor) (float64, float64, error) {
	if got == nil {
		return 0, 0, errors.New("no output")
	}
	if !got.Shape().Equal(want.Shape()) {
		return 0, 0, fmt.Errorf("shape %v, ORT's %v", got.Shape(), want.Shape())
	}
	d, s := 0.0, 0.0
	for i := range want.Size() {
		g, x := got.At(i), want.At(i)
		if math.IsNaN(g) != math.IsNaN(x) {
			return math.Inf(1), s, nil
		}
		d = max(d, math.Abs(g-x))
		s = max(s, math.Abs(x))
	}
	return d, s, nil
}

// readArray reads a raw little-endian array bench/onnx_compare.py wrote.
func readArray(dir string, a array) (*tensor.Tensor, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.Base(a.File)))
	if err != nil {
		return nil, err
	}
	n := 1
	for _, d := range a.Dims {
		n *= d
	}
	le := binary.LittleEndian
	switch a.DType {
	case "float32":
		if len(b) != 4*n {
			return nil, fmt.Errorf("%s: %d bytes for %d float32s", a.File, len(b), n)
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(b[4*i:]))
		}
		return tensor.FromSlice(v, a.Dims...)
	case "int64":
		if len(b) != 8*n {
			return nil, fmt.Errorf("%s: %d bytes for %d int64s", a.File, len(b), n)
		}
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(le.Uint64(b[8*i:]))
		}
		return tensor.FromSlice(v, a.Dims...)
	}
	return nil, fmt.Errorf("%s: dtype %q; expected float32 or int64", a.File, a.DType)
}
