package ptb

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNGrams(t *testing.T) {
	assert.Equal(t, [][]int64{{1, 2, 3}, {2, 3, 4}}, NGrams([]int64{1, 2, 3, 4}, 3))
	assert.Equal(t, [][]int64{{1, 2}}, NGrams([]int64{1, 2}, 2))
	assert.Nil(t, NGrams([]int64{1, 2}, 3))
	assert.Nil(t, NGrams([]int64{1, 2}, 0))
	g := NGrams([]int64{1, 2, 3}, 2)
	g[0][1] = 9
	assert.Equal(t, int64(2), g[1][0], "windows do not share storage")
}
