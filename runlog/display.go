package runlog

import "strings"

// Shown says how a metric is shown to a user, in the console's units: the
// logged value times Scale, printed with Verb, in Unit. Accuracies are
// logged as fractions and printed as percentages (MNIST's "test accuracy
// 98.29%"); BLEU is logged and printed in points (0 to 100, as sacreBLEU
// reports it); other metrics (losses, costs, MSE, F1) as logged.
type Shown struct {
	Scale float64
	Verb  string
	Unit  string // "%", "points" or ""
}

// Display is how the compare table and the plots show the metric called
// name.
func Display(name string) Shown {
	switch n := strings.ToLower(name); {
	case strings.Contains(n, "accuracy"):
		return Shown{Scale: 100, Verb: "%.2f", Unit: "%"}
	case strings.Contains(n, "bleu"):
		return Shown{Scale: 1, Verb: "%.2f", Unit: "points"}
	}
	return Shown{Scale: 1, Verb: "%.4g"}
}

// Header is the metric's column or axis title: its name and, if it has
// one, its unit, such as "accuracy (%)" or "bleu (points)".
func (d Shown) Header(name string) string {
	if d.Unit == "" {
		return name
	}
	return name + " (" + d.Unit + ")"
}
