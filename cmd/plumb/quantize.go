package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/runlog"
)

// quantizeUsage documents plumb quantize.
const quantizeUsage = `usage:
  plumb quantize --load CKPT [--data DIR] [--format bin|jpeg] [--calib N] [--method minmax|percentile|kl]
                 [--skip L1,L2] [--report] [-o OUT] [--log DIR --run-name NAME] [--test-limit N]
      post-training static int8 quantization of an MNIST or CIFAR-10
      checkpoint (plumb train mnist|cifar10 --save CKPT; the checkpoint names
      its chapter) on the compiled inference plan: activation ranges
      calibrated on N batches of 64 training images, then the float32 and
      the int8 plan evaluated on all the test images (accuracy of each).
      MNIST without --data reads the embedded copy; CIFAR-10 needs --data
      (--format bin: the lossless subset, jpeg: the JPEG tree).
      --report prints each int8 layer's float32-vs-int8 cosine similarity and
      largest error on a test batch; --skip keeps the named layers float32.
      -o writes the int8 model (safetensors: int8 weights, scales and zero
      points named as ONNX QDQ names them, and the checkpoint's metadata).
  plumb quantize --load-int8 FILE [--data DIR] [--test-limit N]
      evaluates an int8 model written by -o.
`

// quantBatch is the batch the plans are compiled for.
const quantBatch = 64

type quantizeFlags struct {
	load, loadInt8, data, format, method, skip, out, log, runName string
	calib, testLimit                                              int
	report                                                        bool
}

// quantizeCommand is plumb quantize.
func quantizeCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("quantize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, quantizeUsage) }
	var f quantizeFlags
	fs.StringVar(&f.load, "load", "", "the float32 MNIST checkpoint")
	fs.StringVar(&f.loadInt8, "load-int8", "", "an int8 model written by -o, to evaluate")
	fs.StringVar(&f.data, "data", "", "the chapter's data folder (or the dataset root); empty: MNIST's embedded copy")
	fs.StringVar(&f.format, "format", "bin", "CIFAR-10's images: bin (the lossless subset) or jpeg (the JPEG tree)")
	fs.IntVar(&f.calib, "calib", 10, "calibration batches of 64 training images")
	fs.IntVar(&f.testLimit, "test-limit", 0, "evaluate on a seeded random subset of N test images, stratified by label (0: all)")
	fs.StringVar(&f.method, "method", "minmax", "calibration: minmax, percentile or kl")
	fs.StringVar(&f.skip, "skip", "", "comma-separated layers kept float32 (names as --report prints them)")
	fs.BoolVar(&f.report, "report", false, "print each int8 layer's error against float32")
	fs.StringVar(&f.out, "o", "", "write the int8 model (safetensors) here")
	fs.StringVar(&f.log, "log", "", "write a run log here, the int8 accuracy as its metric (for plumb kpi)")
	fs.StringVar(&f.runName, "run-name", "", "the run's model name in the --log run log (default: <chapter>-<model>-int8)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case (f.load == "") == (f.loadInt8 == ""):
		return errors.New("quantize: want one of --load CKPT (quantize a float32 checkpoint) and --load-int8 FILE (evaluate an int8 model)")
	case f.calib < 1:
		return fmt.Errorf("quantize: --calib %d, want at least 1 batch", f.calib)
	}
	file := f.load
	if f.loadInt8 != "" {
		file = f.loadInt8
	}
	meta, err := checkpoint.Meta(file)
	if f.loadInt8 != "" {
		meta, err = infer.QuantizedMeta(file)
	}
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	qc, err := quantChapterOf(meta, file)
	if err != nil {
		return err
	}
	m, err := qc.spec.New().Restore(meta)
	if err != nil {
		return fmt.Errorf("quantize: %s: %w", file, err)
	}
	trainSet, test, err := qc.load(f.data, f.format, stderr)
	if err != nil {
		return err
	}
	if test, err = chapter.Limit(test, "--test-limit", f.testLimit, 1, stderr); err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	start := time.Now()
	if f.loadInt8 != "" {
		return evalInt8File(f, qc, m, test, stdout)
	}
	if err := checkpoint.Load(f.load, m.Params(), nil); err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	g, names, err := qc.trace(m)
	if err != nil {
		return err
	}
	if f.runName == "" {
		f.runName = qc.spec.Name + "-" + modelName(meta) + "-int8"
	}
	calibSet, err := chapter.Limit(trainSet, "--calib", min(f.calib*quantBatch, trainSet.Len()), 1, io.Discard)
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	batches := qc.batches(calibSet.Tensor("image"))
	calib, err := infer.Calibrate(g, batches, infer.CalibOptions{Method: infer.CalibMethod(f.method)})
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	var skip []string
	if f.skip != "" {
		skip = strings.Split(f.skip, ",")
	}
	q, err := infer.Quantize(g, calib, infer.QuantOptions{Skip: skip, Names: names})
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	if err := checkSkip(skip, q); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "calibrated on %d batches of %d training images (%s); int8 layers: %s\n", len(batches), quantBatch, f.method, layerList(q))
	accF, err := qc.accuracy(g, test)
	if err != nil {
		return fmt.Errorf("quantize: float32 plan: %w", err)
	}
	evalStart := time.Now()
	accQ, err := qc.accuracy(q.Graph, test)
	if err != nil {
		return fmt.Errorf("quantize: int8 plan: %w", err)
	}
	rate := float64(test.Len()) / time.Since(evalStart).Seconds()
	fmt.Fprintf(stdout, "float32: accuracy %.2f%% on %d test images\n", 100*accF, test.Len())
	fmt.Fprintf(stdout, "int8:    accuracy %.2f%% (%+.2f points)\n", 100*accQ, 100*(accQ-accF))
	if f.report {
		if err := printQuantReport(q, qc, test, stdout); err != nil {
			return err
		}
	}
	if f.out != "" {
		if err := q.Save(f.out, meta); err != nil {
			return fmt.Errorf("quantize: %w", err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", f.out)
	}
	if f.log != "" {
		if err := logQuantRun(f, accQ, accF, rate, len(batches), test.Len(), time.Since(start)); err != nil {
			return fmt.Errorf("quantize: %w", err)
		}
	}
	return nil
}

// checkSkip reports a --skip name that is no layer of the model.
func checkSkip(skip []string, q *infer.Quantized) error {
	all := map[string]bool{}
	for _, l := range q.AllLayers() {
		all[l] = true
	}
	for _, s := range skip {
		if !all[s] {
			return fmt.Errorf("quantize: --skip %q is no layer of the model (it has %s)", s, strings.Join(q.AllLayers(), ", "))
		}
	}
	return nil
}

func layerList(q *infer.Quantized) string {
	var s []string
	for _, l := range q.Layers() {
		s = append(s, l.Name)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// printQuantReport prints each int8 layer's error on the first test batch.
func printQuantReport(q *infer.Quantized, qc quantChapter, test *data.Dataset, stdout io.Writer) error {
	rep, err := q.Report(qc.batches(test.Tensor("image"))[0]...)
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	fmt.Fprintf(stdout, "\nper layer, int8 against float32 on %d test images (errors accumulate through each int8 segment):\n", quantBatch)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  layer\top\tcosine\tmax error\tmax |float32|")
	for _, e := range rep {
		fmt.Fprintf(tw, "  %s\t%s\t%.6f\t%.4g\t%.4g\n", e.Layer, e.Op, e.Cosine, e.MaxAbs, e.MaxRef)
	}
	return tw.Flush()
}

// logQuantRun writes a run log with the int8 accuracy as its one epoch's
// metric, the float32 accuracy and the drop from it to int8 beside it,
// for plumb kpi; its rate is the int8 plan's over the test images (at
// GOMAXPROCS threads), which no KPI checks.
func logQuantRun(f quantizeFlags, accQ, accF, rate float64, calib, n int, wall time.Duration) error {
	w, err := runlog.Create(f.log, runlog.Record{Framework: "plumb", Model: f.runName, Unit: "images",
		Config: map[string]any{"checkpoint": f.load, "method": f.method, "calib_batches": calib, "batch": quantBatch, "skip": f.skip, "test_size": n}})
	if err != nil {
		return err
	}
	err = w.Write(runlog.Record{Kind: runlog.KindEpoch, Epoch: 1, Wall: wall.Seconds(), SamplesPerSec: rate,
		Metrics: map[string]float64{"accuracy": accQ, "float32_accuracy": accF, "int8_accuracy_drop": accF - accQ}})
	return errors.Join(err, w.Close())
}

// evalInt8File evaluates a saved int8 model (m, restored from its
// metadata) on the test set.
func evalInt8File(f quantizeFlags, qc quantChapter, m chapter.Model, test *data.Dataset, stdout io.Writer) error {
	g, names, err := qc.trace(m)
	if err != nil {
		return err
	}
	q, err := infer.LoadQuantized(g, f.loadInt8, infer.QuantOptions{Names: names})
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	acc, err := qc.accuracy(q.Graph, test)
	if err != nil {
		return fmt.Errorf("quantize: int8 plan: %w", err)
	}
	fmt.Fprintf(stdout, "int8 (%s): accuracy %.2f%% on %d test images; int8 layers: %s\n", f.loadInt8, 100*acc, test.Len(), layerList(q))
	return nil
}
