package runlog_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/runlog"
)

// Write a run log as a training loop does (train.LogTo writes the same
// records), read it back and tabulate it.
func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "runlog")
	defer os.RemoveAll(dir)
	runDir := filepath.Join(dir, "mlp-seed1")

	w, err := runlog.Create(runDir, runlog.Record{Framework: "plumb", Model: "mnist-mlp", Unit: "images",
		Config: map[string]any{"batch": 64, "lr": 0.001}, RSS: 50 << 20, PeakRSS: 50 << 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	for epoch, loss := range []float64{0.35, 0.15} {
		err := w.Write(runlog.Record{Kind: runlog.KindEpoch, Epoch: epoch + 1, Step: int64(938 * (epoch + 1)),
			Loss: loss, Metrics: map[string]float64{"accuracy": 0.95 + 0.02*float64(epoch)}, Wall: 4 * float64(epoch+1),
			SamplesPerSec: 15000, RSS: 90 << 20, PeakRSS: 100 << 20}) // Write measures the time and memory when they are unset
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := w.Write(runlog.Record{Kind: runlog.KindEnd, Epoch: 2, Step: 1876, Reason: runlog.ReasonFinished, Wall: 8}); err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}

	run, err := runlog.Read(runDir)
	if err != nil {
		fmt.Println(err)
		return
	}
	last := run.Epochs[len(run.Epochs)-1]
	fmt.Printf("%s: %d epochs, loss %.2f, accuracy %.2f\n", run.Label(), len(run.Epochs), last.Loss, last.Metrics["accuracy"])
	fmt.Print(runlog.Table([]*runlog.Run{run}))
	// Output:
	// plumb mnist-mlp (mlp-seed1): 2 epochs, loss 0.15, accuracy 0.97
	// | run | epochs | accuracy (%) | rate | peak RSS (MiB) | train loss | wall (s) | ended |
	// |---|---:|---:|---:|---:|---:|---:|---|
	// | plumb mnist-mlp (mlp-seed1) | 2 | 97.00 | 15000 images/s | 100 | 0.1500 | 8.0 | finished |
}
