package main

import (
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
)

// limitExamples is --limit N for a chapter's training set: a seeded random
// subset of n examples of ds, stratified by the label field where ds has
// one (data.Limit: every class keeps its share, so the first N files of a
// class-sorted tree are never the whole subset), and a line on w saying
// what was taken. n <= 0 keeps ds whole and says nothing.
func limitExamples(ds *data.Dataset, n int, seed uint64, label string, w io.Writer) (*data.Dataset, error) {
	sub, note, err := data.Limit(ds, n, label, seed)
	if err != nil {
		return nil, fmt.Errorf("--limit %d: %w", n, err)
	}
	if note != "" {
		fmt.Fprintf(w, "--limit %d: training on %s\n", n, note)
	}
	return sub, nil
}
