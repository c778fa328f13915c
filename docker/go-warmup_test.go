package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWarmup(t *testing.T) {
	assert.Equal(t, 1, 1)
}
