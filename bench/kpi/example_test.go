package kpi_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/plumbml/plumb/bench/kpi"
	"github.com/plumbml/plumb/runlog"
)

// Check a run's log against two KPIs: its accuracy passes, its throughput
// is too far below the baseline, so Report returns ErrFailed.
func ExampleCheck() {
	kpis := []kpi.KPI{
		{Model: "mnist-mlp", Metric: "accuracy", Baseline: 0.97, Tolerance: 0.005, HigherIsBetter: true},
		{Model: "mnist-mlp", Metric: "samples_per_sec", Baseline: 20000, Tolerance: 0.25, Relative: true, HigherIsBetter: true},
	}
	run := &runlog.Run{
		Name: "mlp",
		Meta: runlog.Record{Kind: runlog.KindRun, Framework: "plumb", Model: "mnist-mlp"},
		Epochs: []runlog.Record{{Kind: runlog.KindEpoch, Epoch: 1, Loss: 0.2, SamplesPerSec: 12000,
			Metrics: map[string]float64{"accuracy": 0.968}}},
	}
	results, err := kpi.Check(kpis, []*runlog.Run{run})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = kpi.Report(os.Stdout, results)
	fmt.Println("failed:", errors.Is(err, kpi.ErrFailed))
	// Output:
	// | run | metric | value | baseline | worst accepted | verdict |
	// |---|---|---:|---:|---:|---|
	// | plumb mnist-mlp | accuracy | 0.968 | 0.97 | 0.965 | ok |
	// | plumb mnist-mlp | samples_per_sec | 1.2e+04 | 2e+04 | 1.5e+04 | FAIL |
	//
	// KPI check: 1 of 2 FAILED
	// failed: true
}
