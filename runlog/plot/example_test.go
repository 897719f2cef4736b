package plot_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/runlog/plot"
)

// Plot two runs' training curves side by side into a PNG. Real runs come
// from runlog.Read; these are made up in memory.
func ExampleRuns() {
	var runs []*runlog.Run
	for _, f := range []struct {
		name string
		rate float64
	}{{"plumb", 0.10}, {"pytorch", 0.08}} {
		r := &runlog.Run{Meta: runlog.Record{Kind: runlog.KindRun, Framework: f.name, Model: "mnist-mlp"}}
		for s := int64(1); s <= 20; s++ {
			r.Steps = append(r.Steps, runlog.Record{Kind: runlog.KindStep, Step: s, Examples: 64 * s,
				Loss: 2.3 * math.Exp(-f.rate*float64(s)), Wall: float64(s) / 10})
		}
		runs = append(runs, r)
	}

	dir, _ := os.MkdirTemp("", "plot")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "runs.png")
	if err := plot.Runs(runs, path); err != nil {
		fmt.Println(err)
		return
	}
	info, err := os.Stat(path)
	fmt.Println("wrote", filepath.Base(path), err == nil && info.Size() > 0)
	// Output: wrote runs.png true
}
