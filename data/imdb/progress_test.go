package imdb

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
)

// LoadProgress counts every labelled review and its bytes (a quick load
// prints nothing), and reads what Load reads.
func TestLoadProgress(t *testing.T) {
	archive := datatest.WriteFiles(t, map[string][]byte{"aclImdb_v1.tar.gz": datatest.TarGz(t, tinyIMDB())})
	var out bytes.Buffer
	p := data.NewProgress(&out, "aclImdb_v1.tar.gz", "reviews", 0)
	train, test, err := LoadProgress(archive, data.Limits{}, p)
	require.NoError(t, err)
	n, b := p.Count()
	assert.Equal(t, len(train)+len(test), n)
	assert.Equal(t, int64(len("Great film!<br />Loved it.good GOOD goodBad, bad film.Not great.\nfilm")), b)
	assert.Empty(t, out.String(), "under a second: silent")
	wantTrain, wantTest, err := Load(archive)
	require.NoError(t, err)
	assert.Equal(t, wantTrain, train)
	assert.Equal(t, wantTest, test)
	_, _, err = LoadProgress(archive, data.Limits{}, nil)
	assert.NoError(t, err)
}
