package run

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/onnx.md's table of supported ops names every op type of the table,
// and no other.
func TestDocsListTheOpTable(t *testing.T) {
	b, err := os.ReadFile("../../docs/onnx.md")
	require.NoError(t, err)
	start := regexp.MustCompile(`(?m)^## Supported ops$`).FindIndex(b)
	require.NotNil(t, start)
	section := string(b[start[1]:])
	if end := regexp.MustCompile(`(?m)^## `).FindStringIndex(section); end != nil {
		section = section[:end[0]]
	}
	listed := map[string]bool{}
	for _, row := range regexp.MustCompile(`(?m)^\| ([^|]+) \|`).FindAllStringSubmatch(section, -1) {
		for _, w := range regexp.MustCompile(`\b[A-Z][A-Za-z0-9]+\b`).FindAllString(row[1], -1) {
			listed[w] = true
		}
	}
	for _, op := range Supported() {
		assert.True(t, listed[op], "docs/onnx.md does not list %s", op)
	}
	for w := range listed {
		if w != "BOOL" {
			assert.True(t, IsSupported("", w), "docs/onnx.md lists %s, which the table lacks", w)
		}
	}
}
