package data

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// subsetStream separates the subset helpers' random stream from Split's
// and the Loader's.
const subsetStream = 0x5ab5e7

// RandomSubset returns n examples drawn without replacement from a
// permutation seeded by seed, kept in the dataset's order: the seeded
// random subset a quick run trains on (--limit N), which, unlike Take,
// does not inherit the order of a file sorted by class. n >= Len returns
// d itself; n < 0 is an error.
func (d *Dataset) RandomSubset(n int, seed uint64) (*Dataset, error) {
	if d == nil {
		return nil, fmt.Errorf("data: RandomSubset of a nil Dataset")
	}
	if n < 0 {
		return nil, fmt.Errorf("data: RandomSubset(%d) of %d examples: want n >= 0", n, d.n)
	}
	if n >= d.n {
		return d, nil
	}
	idx := rand.New(rand.NewPCG(seed, subsetStream)).Perm(d.n)[:n]
	slices.Sort(idx)
	return d.Subset(idx)
}

// StratifiedSubset returns n examples drawn at random (seeded by seed)
// so that every class of the label field (dense int64 [N]) keeps its share
// of the dataset: class c, with s_c of the N examples, gets floor(n·s_c/N)
// of them, and the examples left over go to the classes with the largest
// remainders (scikit-learn's train_test_split(stratify=...) apportions the
// same way). Within a class the examples are a seeded random draw; the
// subset keeps the dataset's order. n >= Len returns d itself.
func (d *Dataset) StratifiedSubset(n int, label string, seed uint64) (*Dataset, error) {
	if d == nil {
		return nil, fmt.Errorf("data: StratifiedSubset of a nil Dataset")
	}
	labels, err := d.labels(label)
	if err != nil {
		return nil, fmt.Errorf("data: StratifiedSubset by %q: %w", label, err)
	}
	if n < 0 {
		return nil, fmt.Errorf("data: StratifiedSubset(%d) of %d examples: want n >= 0", n, d.n)
	}
	if n >= d.n {
		return d, nil
	}
	classes := map[int64][]int{}
	for i, l := range labels {
		classes[l] = append(classes[l], i)
	}
	keys := slices.Sorted(maps.Keys(classes))
	rng := rand.New(rand.NewPCG(seed, subsetStream))
	type share struct {
		class int64
		take  int
		rem   int64 // n·s_c mod N: the remainder's numerator
		tie   int   // a random rank among equal remainders
	}
	shares := make([]share, len(keys))
	given := 0
	for i, k := range keys {
		s := int64(len(classes[k]))
		q := int64(n) * s
		shares[i] = share{class: k, take: int(q / int64(d.n)), rem: q % int64(d.n), tie: rng.IntN(1 << 30)}
		given += shares[i].take
	}
	order := slices.Clone(shares)
	slices.SortStableFunc(order, func(a, b share) int {
		if a.rem != b.rem {
			return cmp.Compare(b.rem, a.rem)
		}
		return a.tie - b.tie
	})
	extra := map[int64]int{}
	for i := 0; given < n; i++ { // at most one each: the remainders sum to less than N per class
		extra[order[i].class]++
		given++
	}
	var idx []int
	for _, s := range shares {
		members := classes[s.class]
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		idx = append(idx, members[:s.take+extra[s.class]]...)
	}
	slices.Sort(idx)
	return d.Subset(idx)
}

// Limit takes the seeded random subset of n examples that a quick run
// (--limit N) trains on: stratified by the label field when d has one
// (label not "" and a dense int64 [N] field of that name), else a plain
// random subset. It returns the subset and a sentence saying what was
// taken, for the command to print, such as "a random subset of 512 of
// 50000 examples (seed 1), stratified by label: 10 classes of 51 to 52".
// n <= 0 or n >= Len returns d and "".
func Limit(d *Dataset, n int, label string, seed uint64) (*Dataset, string, error) {
	if d == nil {
		return nil, "", fmt.Errorf("data: Limit of a nil Dataset")
	}
	if n <= 0 || n >= d.n {
		return d, "", nil
	}
	if label != "" {
		if _, err := d.labels(label); err == nil {
			sub, err := d.StratifiedSubset(n, label, seed)
			if err != nil {
				return nil, "", err
			}
			counts := map[int64]int{}
			for _, l := range sub.Tensor(label).Int64s() {
				counts[l]++
			}
			lo, hi := n, 0
			for _, c := range counts {
				lo, hi = min(lo, c), max(hi, c)
			}
			return sub, fmt.Sprintf("a random subset of %d of %d examples (seed %d), stratified by %s: %d classes of %d to %d",
				n, d.n, seed, label, len(counts), lo, hi), nil
		}
	}
	sub, err := d.RandomSubset(n, seed)
	if err != nil {
		return nil, "", err
	}
	return sub, fmt.Sprintf("a random subset of %d of %d examples (seed %d)", n, d.n, seed), nil
}

// labels returns the field name's class labels: a dense int64 [N] field.
func (d *Dataset) labels(name string) ([]int64, error) {
	i := d.index(name)
	if i < 0 {
		return nil, fmt.Errorf("no field %q (fields %v)", name, d.Names())
	}
	t := d.fields[i].dense
	if t == nil || t.DType() != tensor.Int64 || t.Rank() != 1 {
		return nil, fmt.Errorf("field %q is not a dense int64 [%d] tensor of class labels", name, d.n)
	}
	return t.Int64s(), nil
}
