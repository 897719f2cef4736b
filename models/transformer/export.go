package transformer

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/plumbml/plumb/data"
)

// WriteExport writes what another framework needs to train on exactly
// the data Plumb trains on (bench/transformer_torch.py reads it) to dir:
//
//   - vocab.txt: the BPE's subwords, one a line, the line number its id
//     (<pad>, <s>, </s>, <unk>, <unk></w> first);
//   - merges.txt: the merges in rank order, "left right" a line, after a
//     "#version: 0.2" line (subword-nmt's codes file);
//   - train.ids, val.ids, test.ids: a pair a line, the source's ids, a
//     tab, the target's ids (no sentence marks), train.ids in the order
//     of ds (after --limit);
//   - test.ref: test2016's German sentences as BLEU's references;
//   - batches.txt: the training batches, the example indices of one a
//     line (TokenBatches.Groups).
func WriteExport(dir string, d *Data, ds *data.Dataset, b *TokenBatches) error {
	if d == nil || d.BPE == nil || ds == nil || b == nil {
		return fmt.Errorf("transformer: WriteExport needs the data, its BPE, the training set and its batches")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("transformer: export: %w", err)
	}
	src, err := rows(ds.Ragged("src"))
	if err != nil {
		return fmt.Errorf("transformer: export: %w", err)
	}
	trg, err := rows(ds.Ragged("trg_next"))
	if err != nil {
		return fmt.Errorf("transformer: export: %w", err)
	}
	train := make([]Pair, len(src))
	for i := range src { // without the end marks Dataset added
		train[i] = Pair{src[i][:len(src[i])-1], trg[i][:len(trg[i])-1]}
	}
	merges := []string{"#version: 0.2"}
	for _, m := range d.BPE.Merges() {
		merges = append(merges, m.Left+" "+m.Right)
	}
	var groups []string
	for _, g := range b.Groups() {
		groups = append(groups, joinInts(g))
	}
	files := map[string][]string{
		"vocab.txt": d.BPE.Tokens(), "merges.txt": merges, "batches.txt": groups, "test.ref": d.TestRefs,
		"train.ids": pairLines(train), "val.ids": pairLines(d.Val), "test.ids": pairLines(d.Test),
	}
	for name, lines := range files {
		if err := writeLines(filepath.Join(dir, name), lines); err != nil {
			return fmt.Errorf("transformer: export: %w", err)
		}
	}
	return nil
}

func pairLines(ps []Pair) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = joinInts(p.Src) + "\t" + joinInts(p.Trg)
	}
	return out
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, " ")
}

func writeLines(path string, lines []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
