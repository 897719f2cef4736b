package chapter

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/plumbml/plumb/tensor"
)

// Classify writes one line per row of logits [N, C]: the input's name,
// its most probable class and the softmax probabilities of the classes,
// most probable first (at most top of them; all when top < 1).
func Classify(out io.Writer, names []string, logits *tensor.Tensor, classes []string, top int) error {
	if logits == nil || out == nil {
		return fmt.Errorf("chapter: Classify needs logits and an output (got %v, %v)", logits != nil, out != nil)
	}
	l, err := logits.To(nil)
	if err == nil {
		l, err = l.Cast(tensor.Float64)
	}
	if err != nil {
		return err
	}
	if l.Rank() != 2 || l.Dim(0) != len(names) || l.Dim(1) != len(classes) {
		return fmt.Errorf("chapter: Classify: logits %v for %d inputs and %d classes", l.Shape(), len(names), len(classes))
	}
	if top < 1 || top > len(classes) {
		top = len(classes)
	}
	v, c := l.Float64s(), len(classes)
	for i, name := range names {
		row := v[i*c : (i+1)*c]
		hi := slices.Max(row)
		p, sum := make([]float64, c), 0.0
		for j, x := range row {
			p[j] = math.Exp(x - hi)
			sum += p[j]
		}
		order := make([]int, c)
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(p[a], p[b]) })
		var b strings.Builder
		for _, j := range order[:top] {
			fmt.Fprintf(&b, " %s %.4f", classes[j], p[j]/sum)
		}
		fmt.Fprintf(out, "%s\t%s\t(%s)\n", name, classes[order[0]], strings.TrimSpace(b.String()))
	}
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Excerpt is s cut to at most n characters for a prediction's line, with
// "..." marking a cut (n below 4 keeps s whole).
func Excerpt(s string, n int) string {
	if r := []rune(s); n >= 4 && len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}
