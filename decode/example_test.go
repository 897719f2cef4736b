package decode_test

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/tensor"
)

// words are the toy vocabulary; token 0 both starts and ends a sentence.
var words = []string{"</s>", "a", "b"}

// bigram is a toy scorer whose next-token probabilities depend only on the
// previous token. It needs no decoder state, so the state is struct{}.
func bigram(prev []int, _ struct{}) (*tensor.Tensor, struct{}, error) {
	probs := map[int][]float64{
		0: {0.05, 0.55, 0.40}, // at the start, "a" is likelier than "b"
		1: {0.40, 0.30, 0.30}, // but after "a" nothing is sure,
		2: {0.90, 0.05, 0.05}, // while "b" is almost always a whole sentence
	}
	logp := make([]float64, 0, len(prev)*len(words))
	for _, p := range prev {
		for _, q := range probs[p] {
			logp = append(logp, math.Log(q))
		}
	}
	t, err := tensor.FromSlice(logp, len(prev), len(words))
	return t, struct{}{}, err
}

// noState reorders a state that holds nothing.
func noState(s struct{}, _ []int) (struct{}, error) { return s, nil }

// show prints a hypothesis as words with its probability.
func show(h decode.Hypothesis) {
	var out []string
	for _, tok := range h.Tokens {
		out = append(out, words[tok])
	}
	fmt.Printf("%v p=%.3f\n", out, math.Exp(h.LogProb))
}

// Greedy takes the likeliest token at each step and commits to "a"; a beam
// of two keeps "b" alive and finds the likelier sentence.
func ExampleBeamSearch() {
	cfg := decode.Config{Start: 0, End: 0, MaxLen: 5, BeamWidth: 2}
	greedy, err := decode.Greedy(bigram, struct{}{}, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print("greedy: ")
	show(greedy)

	beam, err := decode.BeamSearch(bigram, noState, struct{}{}, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range beam {
		fmt.Print("beam:   ")
		show(h)
	}
	// Output:
	// greedy: [a </s>] p=0.220
	// beam:   [b </s>] p=0.360
	// beam:   [a </s>] p=0.220
}
