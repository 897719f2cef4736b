package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plumb summary mnist lists the book CNN's layers with Keras's counts
// (conv 5×5 1→20: 520, batch norm: 80, conv 5×5 20→50: 25,050, dense
// 800→10: 8,010).
func TestSummaryCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"summary", "mnist"}, &out, &errOut), errOut.String())
	s := out.String()
	for _, want := range []string{"conv1  conv2d       [1 20 24 24]  520", "bn1    batch norm   [1 20 12 12]  80",
		"conv2  conv2d       [1 50 8 8]    25050", "fc     linear       [1 10]        8010",
		"total params: 33660 (trainable 33620, non-trainable 40)"} {
		assert.Contains(t, s, want)
	}
	out.Reset()
	require.NoError(t, run([]string{"summary", "mnist", "--model", "mlp"}, &out, &errOut))
	assert.Contains(t, out.String(), "total params: 109386")
	assert.NotContains(t, out.String(), " \n", "no trailing blanks")
	assert.ErrorContains(t, run([]string{"summary", "cifar"}, &out, &errOut), `chapter "cifar"`)
	out.Reset()
	assert.Equal(t, 0, exitStatus(run([]string{"summary", "--help"}, &out, &errOut), &errOut))
	assert.True(t, strings.HasPrefix(out.String(), "usage: plumb summary"))
}
