package metrics_test

import (
	"fmt"

	"github.com/plumbml/plumb/metrics"
)

// Corpus BLEU of two translations, one reference each, with its parts.
func ExampleBLEU() {
	hyps := []string{"the cat sat on the mat", "a dog barks"}
	refs := [][]string{{"the cat sat on the mat"}, {"the dog barks loudly"}}
	s, err := metrics.BLEU(hyps, refs)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("BLEU %.2f, brevity penalty %.3f, %d/%d tokens\n", s.Score, s.BP, s.SysLen, s.RefLen)
	fmt.Println("matching n-grams", s.Counts, "of", s.Totals)
	// Output:
	// BLEU 79.07, brevity penalty 0.895, 9/10 tokens
	// matching n-grams [8 6 4 3] of [9 7 5 3]
}

// Scores for three examples over three classes, row by row: the argmax,
// accuracy, top-2 accuracy and per-class F1 from a confusion matrix.
func ExampleConfusion() {
	scores := []float32{
		0.7, 0.2, 0.1, // label 0
		0.1, 0.3, 0.6, // label 1: second best
		0.2, 0.2, 0.6, // label 2
	}
	labels := []int{0, 1, 2}
	pred, _ := metrics.Argmax(scores, 3)
	acc, _ := metrics.Accuracy(pred, labels)
	top2, _ := metrics.TopK(scores, 3, labels, 2)
	fmt.Printf("pred %v, accuracy %.3f, top-2 %.3f\n", pred, acc, top2)

	c, _ := metrics.NewConfusion(3)
	if err := c.Add(pred, labels); err != nil {
		fmt.Println(err)
		return
	}
	for k := range 3 {
		fmt.Printf("class %d: F1 %.3f\n", k, c.Class(k).F1)
	}
	fmt.Printf("macro F1 %.3f\n", c.Macro().F1)
	// Output:
	// pred [0 2 2], accuracy 0.667, top-2 1.000
	// class 0: F1 1.000
	// class 1: F1 0.000
	// class 2: F1 0.667
	// macro F1 0.556
}
