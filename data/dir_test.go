package data

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDir(t *testing.T) {
	t.Setenv(EnvDir, "/from/env")
	assert.Equal(t, "/from/flag", Dir("/from/flag"))
	assert.Equal(t, "/from/env", Dir(""))
	t.Setenv(EnvDir, "")
	assert.Equal(t, "", Dir(""))
}
