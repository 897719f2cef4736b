package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/onnx/run"
	"github.com/plumbml/plumb/tensor"
)

// benchModel times Run on the model of the manifest at path (written by
// bench/onnx_compare.py) at the given batch: its batch-1 inputs repeated
// batch times, one untimed warm-up Run, then runs timed Runs, printed as
// one line "plumb MODEL batch B threads T ms: t1 t2 ..." for
// bench/onnx_speed.sh, which times ONNX Runtime on the same inputs with
// bench/onnx_speed.py. With a non-empty profile, a CPU profile of the
// timed Runs is written there.
func benchModel(w io.Writer, path string, batch, runs int, profile string) error {
	var m manifest
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	in := map[string]*tensor.Tensor{}
	for _, c := range m.Cases {
		if c.Batch != 1 {
			continue
		}
		for k, a := range c.Inputs {
			x, err := readArray(dir, a)
			if err != nil {
				return err
			}
			if in[k], err = repeatBatch(x, batch); err != nil {
				return err
			}
		}
	}
	if len(in) == 0 {
		return fmt.Errorf("%s: no batch-1 case to take inputs from", path)
	}
	model, err := onnx.Load(filepath.Join(dir, m.Model))
	if err != nil {
		return err
	}
	compiled, err := run.Compile(model)
	if err != nil {
		return err
	}
	if _, err := compiled.Run(in); err != nil {
		return err
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ms := make([]string, runs)
	for r := range ms {
		start := time.Now()
		if _, err := compiled.Run(in); err != nil {
			return err
		}
		ms[r] = fmt.Sprintf("%.2f", float64(time.Since(start).Microseconds())/1000)
	}
	fmt.Fprintf(w, "plumb %s batch %d threads %d ms: %s\n", strings.TrimSuffix(m.Model, ".onnx"), batch,
		runtime.GOMAXPROCS(0), strings.Join(ms, " "))
	return nil
}

// repeatBatch returns x [1, ...] repeated n times along its first axis.
func repeatBatch(x *tensor.Tensor, n int) (*tensor.Tensor, error) {
	if x.Rank() == 0 || x.Dim(0) != 1 {
		return nil, fmt.Errorf("input %v: expected batch 1", x.Shape())
	}
	parts := make([]*tensor.Tensor, n)
	for i := range parts {
		parts[i] = x
	}
	return tensor.Concat(0, parts...)
}
