package datatest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumbml/plumb/data"
)

func TestEnvDirIsData(t *testing.T) {
	assert.Equal(t, data.EnvDir, EnvDir)
}
