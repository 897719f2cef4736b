package ops

import (
	"github.com/plumbml/plumb/tensor"
)

// Accuracy returns the fraction of rows of logits [N, C] whose largest
// entry (ArgMax, first index on ties) is the row's label, labels being an
// int32 or int64 [N] tensor of class ids in [0, C) (Keras'
// SparseCategoricalAccuracy for one batch). An empty batch scores 0, as
// Keras' metrics divide with divide_no_nan.
func Accuracy(logits, labels *tensor.Tensor) (float64, error) {
	in := []*tensor.Tensor{logits, labels}
	if err := checkArity("accuracy", in, 2); err != nil {
		return 0, err
	}
	want, err := labels.Ints()
	if err != nil {
		return 0, Errorf("accuracy", in, "want int32 or int64 labels")
	}
	if !logits.DType().IsFloat() || logits.Rank() != 2 || labels.Rank() != 1 || labels.Dim(0) != logits.Dim(0) {
		return 0, Errorf("accuracy", in, "want float logits [N, C] and labels [N]")
	}
	n, c := logits.Dim(0), logits.Dim(1)
	for i, l := range want {
		if l < 0 || l >= c {
			return 0, Errorf("accuracy", in, "label %d at row %d out of range [0, %d)", l, i, c)
		}
	}
	if n == 0 {
		return 0, nil
	}
	got, err := ArgMax(logits, 1)
	if err != nil {
		return 0, Errorf("accuracy", in, "%v", err)
	}
	hits := 0
	for i, p := range got.Int64s() {
		if int(p) == want[i] {
			hits++
		}
	}
	return float64(hits) / float64(n), nil
}
