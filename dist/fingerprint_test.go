package dist

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

func recipe(lr float64, limit int) Fingerprint {
	return RecipeFingerprint(map[string]any{"model": "mlp", "lr": lr, "batch": 64, "seed": uint64(1), "train_size": limit})
}

func TestFingerprintCompare(t *testing.T) {
	mlp := []*graph.Param{
		graph.NewParam("w1", tensor.Zeros(tensor.Float32, 784, 128)),
		graph.NewParam("b1", tensor.Zeros(tensor.Float32, 128)),
	}
	wide := []*graph.Param{mlp[0], graph.NewParam("b1", tensor.Zeros(tensor.Float32, 256))}
	f64 := []*graph.Param{mlp[0], graph.NewParam("b1", tensor.Zeros(tensor.Float64, 128))}
	tests := []struct {
		name        string
		rank0, mine Fingerprint
		want        string // "" for agreement
	}{
		{"same recipe", recipe(1e-3, 640), recipe(1e-3, 640), ""},
		{"same model", ModelFingerprint(mlp), ModelFingerprint(mlp), ""},
		{"empty", Fingerprint{}, Fingerprint{}, ""},
		{"lr", recipe(1e-3, 640), recipe(10, 640),
			"dist: the ranks disagree on recipe lr: rank 0 has 0.001, rank 1 has 10; every rank must run the same model, recipe and data"},
		{"limit", recipe(1e-3, 640), recipe(1e-3, 320), "on recipe train_size: rank 0 has 640, rank 1 has 320;"},
		{"lr and limit", recipe(1e-3, 640), recipe(10, 320), "on recipe lr: rank 0 has 0.001, rank 1 has 10 (and 1 more difference(s))"},
		{"shape", ModelFingerprint(mlp), ModelFingerprint(wide),
			`on parameter 1: rank 0 has "b1" float32 [128], rank 1 has "b1" float32 [256]`},
		{"dtype", ModelFingerprint(mlp), ModelFingerprint(f64), `rank 0 has "b1" float32 [128], rank 1 has "b1" float64 [128]`},
		{"fewer parameters", ModelFingerprint(mlp), ModelFingerprint(mlp[:1]),
			`on parameter 1: rank 0 has "b1" float32 [128], rank 1 has none (and 1 more difference(s))`},
		{"more parameters", ModelFingerprint(mlp[:1]), ModelFingerprint(mlp),
			`on parameters: rank 0 has 1, rank 1 has 2 (and 1 more difference(s))`},
		{"other model", ModelFingerprint(mlp), ModelFingerprint([]*graph.Param{graph.NewParam("conv1", tensor.Zeros(tensor.Float32, 32, 1, 5, 5))}),
			`on parameter 0: rank 0 has "w1" float32 [784 128], rank 1 has "conv1" float32 [32 1 5 5] (and 2 more difference(s))`},
		{"a field only rank 1 has", Fingerprint{}, recipe(1e-3, 640), "on recipe batch: rank 0 has none, rank 1 has 64 (and 4 more"},
		{"nil parameter", ModelFingerprint(mlp[:1]), ModelFingerprint([]*graph.Param{nil}), `rank 1 has <nil>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.mine.Compare(tc.rank0, 1)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			var m *Mismatch
			require.True(t, errors.As(err, &m), "%v", err)
			assert.Equal(t, 1, m.Rank)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestFingerprintEncoding(t *testing.T) {
	f := recipe(0.5, 7)
	f.Add("odd\x00name\n", "a value with\nnewlines and \xff")
	got, err := decodeFingerprint(f.encode())
	require.NoError(t, err)
	assert.Equal(t, f, got)
	for _, bad := range [][]byte{{5, 'a'}, {1, 'a'}, {1, 'a', 9}, {0xff}} {
		_, err := decodeFingerprint(bad)
		assert.ErrorContains(t, err, "malformed at byte", "%q", bad)
	}
}

// Every rank of a group gets the same verdict from Agree, so that all stop
// together: here rank 2 of 3 trains with another learning rate.
func TestAgreeEveryRankStops(t *testing.T) {
	errs := onRanks(t, 3, 5*time.Second, func(c Comm) error {
		lr := 1e-3
		if c.Rank() == 2 {
			lr = 10
		}
		return Agree(c, recipe(lr, 640))
	})
	for r, err := range errs {
		assert.EqualError(t, err, "dist: the ranks disagree on recipe lr: rank 0 has 0.001, rank 2 has 10; every rank must run the same model, recipe and data", "rank %d", r)
	}
	errs = onRanks(t, 3, 5*time.Second, func(c Comm) error { return Agree(c, recipe(1e-3, 640)) })
	assert.Equal(t, []error{nil, nil, nil}, errs)
}

// Ranks that build different models stop in SyncParams with an error
// naming the parameter, on every rank, before any broadcast.
func TestSyncParamsRefusesDifferentModels(t *testing.T) {
	errs := onRanks(t, 2, 5*time.Second, func(c Comm) error {
		n := 128
		if c.Rank() == 1 {
			n = 64
		}
		ps := []*graph.Param{graph.NewParam("w", tensor.Zeros(tensor.Float32, 784, n))}
		return NewReplicas(c, 0).SyncParams(ps)
	})
	for r, err := range errs {
		assert.EqualError(t, err, `dist: the ranks disagree on parameter 0: rank 0 has "w" float32 [784 128], rank 1 has "w" float32 [784 64]; every rank must run the same model, recipe and data`, "rank %d", r)
	}
}
