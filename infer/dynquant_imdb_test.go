package infer_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/tensor"
)

// TestDynamicIMDB measures a trained sentiment checkpoint (plumb train
// sentiment --save CKPT) on the IMDB test reviews as the float32 plan and
// as the dynamic int8 plan, batch 64, each batch traced with its own
// offsets, and checks the int8 accuracy is within 1 point of float32 (the
// issue's bar). Run it with PLUMB_DYNQUANT_IMDB=CKPT and PLUMB_DATA=DIR
// (the folder holding imdb); PLUMB_DYNQUANT_LIMIT=N measures a seeded
// stratified subset of N reviews instead of all 25,000.
func TestDynamicIMDB(t *testing.T) {
	ckpt, dir := os.Getenv("PLUMB_DYNQUANT_IMDB"), os.Getenv("PLUMB_DATA")
	if ckpt == "" || dir == "" {
		t.Skip("set PLUMB_DYNQUANT_IMDB=CKPT and PLUMB_DATA=DIR to measure a trained checkpoint on IMDB")
	}
	meta, err := checkpoint.Meta(ckpt)
	require.NoError(t, err)
	c, ok := sentiment.Spec.New().(*sentiment.Chapter)
	require.True(t, ok)
	c.Config.Model = "" // the model the checkpoint holds
	m, err := c.Restore(meta)
	require.NoError(t, err)
	require.NoError(t, checkpoint.Load(ckpt, m.Params(), nil))
	net, ok2 := m.(interface {
		Logits(*graph.Tape, *tensor.Ragged) *graph.Value
	})
	require.True(t, ok2)
	d, err := sentiment.Load(dir)
	require.NoError(t, err)
	test := d.Test
	if s := os.Getenv("PLUMB_DYNQUANT_LIMIT"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		test, err = test.StratifiedSubset(n, "label", 1)
		require.NoError(t, err)
	}
	loader, err := data.NewLoader(test, 64)
	require.NoError(t, err)
	var total, rightF, rightQ, agree int
	for b, err := range loader.Batches(0) {
		require.NoError(t, err)
		words, labels := b.Ragged("words"), b.Tensor("label").Int64s()
		off := words.Offsets
		g, err := infer.Trace(func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			return net.Logits(tape, &tensor.Ragged{Values: in[0], Offsets: off})
		}, words.Values)
		require.NoError(t, err)
		pf, err := g.Compile(infer.Options{})
		require.NoError(t, err)
		pq, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{}})
		require.NoError(t, err)
		yf, err := pf.Forward(words.Values)
		require.NoError(t, err)
		yq, err := pq.Forward(words.Values)
		require.NoError(t, err)
		for i, l := range labels {
			f, q := argmax2(yf[0].Float32s()[2*i:]), argmax2(yq[0].Float32s()[2*i:])
			rightF += b2i(f == int(l))
			rightQ += b2i(q == int(l))
			agree += b2i(f == q)
		}
		total += len(labels)
	}
	accF, accQ := float64(rightF)/float64(total), float64(rightQ)/float64(total)
	t.Logf("%s on %d IMDB test reviews: float32 %.4f, dynamic int8 %.4f (drop %.2f points), predictions agree on %d", ckpt, total, accF, accQ, 100*(accF-accQ), agree)
	require.LessOrEqual(t, 100*(accF-accQ), 1.0)
}

func argmax2(x []float32) int { return b2i(x[1] > x[0]) }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
