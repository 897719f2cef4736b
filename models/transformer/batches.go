package transformer

import (
	"cmp"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"

	"github.com/plumbml/plumb/data"
)

// TokenBatches is a training set in ragged batches of about the same
// number of tokens (fairseq's --max-tokens): the pairs are ordered by
// source then target length (equal lengths in a seeded random order), then
// cut into batches whose padded size, rows × the longest side, stays
// within the budget. The batches are made once; each epoch visits them in
// its own seeded random order. Its length is the target tokens of an
// epoch, the unit the trainer counts (Loss returns each batch's).
type TokenBatches struct {
	ds      *data.Dataset
	groups  [][]int
	seed    uint64
	targets int
}

// NewTokenBatches batches ds (Dataset's fields) by at most maxTokens
// padded tokens; a pair longer than the budget alone is a batch of one.
func NewTokenBatches(ds *data.Dataset, maxTokens int, seed uint64) (*TokenBatches, error) {
	if ds == nil || ds.Ragged("src") == nil || ds.Ragged("trg_next") == nil {
		return nil, fmt.Errorf("transformer: NewTokenBatches: want a dataset with ragged src and trg_next (Dataset)")
	}
	if maxTokens < 1 {
		return nil, fmt.Errorf("transformer: NewTokenBatches: %d tokens a batch; want at least 1", maxTokens)
	}
	src, trg := ds.Ragged("src").Lengths(), ds.Ragged("trg_next").Lengths()
	order := rand.New(rand.NewPCG(seed, 0x6261746368)).Perm(ds.Len())
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(src[a], src[b]), cmp.Compare(trg[a], trg[b]))
	})
	b := &TokenBatches{ds: ds, seed: seed}
	var cur []int
	longest := 0
	for _, i := range order {
		l := max(longest, src[i], trg[i])
		if len(cur) > 0 && (len(cur)+1)*l > maxTokens {
			b.groups, cur, l = append(b.groups, cur), nil, max(src[i], trg[i])
		}
		cur, longest = append(cur, i), l
		b.targets += trg[i]
	}
	if len(cur) > 0 {
		b.groups = append(b.groups, cur)
	}
	return b, nil
}

// Len is the target tokens of an epoch.
func (b *TokenBatches) Len() int {
	if b == nil {
		return 0
	}
	return b.targets
}

// Groups returns the batches as example indices, in the order they were
// made (what bench/transformer_torch.py reads, so that it trains on the
// same batches).
func (b *TokenBatches) Groups() [][]int {
	if b == nil {
		return nil
	}
	out := make([][]int, len(b.groups))
	for i, g := range b.groups {
		out[i] = slices.Clone(g)
	}
	return out
}

// Batches yields epoch's batches in that epoch's seeded order.
func (b *TokenBatches) Batches(epoch int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		if b == nil {
			yield(nil, fmt.Errorf("transformer: Batches of nil TokenBatches"))
			return
		}
		for _, g := range rand.New(rand.NewPCG(b.seed, uint64(epoch))).Perm(len(b.groups)) {
			batch, err := batchOf(b.ds, b.groups[g])
			if !yield(batch, err) || err != nil {
				return
			}
		}
	}
}

// batchOf is the examples idx of ds as one batch, in that order.
func batchOf(ds *data.Dataset, idx []int) (*data.Batch, error) {
	sub, err := ds.Subset(idx)
	if err != nil {
		return nil, err
	}
	l, err := data.NewLoader(sub, len(idx))
	if err != nil {
		return nil, err
	}
	for batch, err := range l.Batches(0) {
		return batch, err
	}
	return nil, fmt.Errorf("transformer: an empty batch")
}
