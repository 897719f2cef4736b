package train

import "iter"

// Source is a training set seen as batches of type B. Batches(epoch)
// yields the batches of one pass (epoch counts from 1); it must yield the
// same batches in the same order whenever it is called with the same
// epoch, so that a run resumed from a checkpoint sees the data the
// interrupted run would have seen. Len is the number of examples in a
// pass, for progress and ETA. data's loaders implement it; so can any
// type, since train depends on no batch type.
type Source[B any] interface {
	Len() int
	Batches(epoch int) iter.Seq2[B, error]
}
