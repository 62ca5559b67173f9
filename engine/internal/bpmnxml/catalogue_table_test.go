package bpmnxml

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReferenceTable_Decisions holds the REF rows of the decision table
// (docs/validation.md) to referenceTable: one row per reference rule the
// table checks, each an error reported under its own id.
func TestReferenceTable_Decisions(t *testing.T) {
	data, err := os.ReadFile("../../../docs/validation.md")
	require.NoError(t, err)
	row := regexp.MustCompile(`(?m)^\| REF\.(\d+) \| ([^|]+) \| ([^|]+) \|`)
	documented := map[int]bool{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		assert.False(t, documented[n], "REF.%d has two rows", n)
		documented[n] = true
		assert.Equal(t, "error", strings.TrimSpace(m[2]), "REF.%d decision", n)
		assert.Equal(t, "REF."+m[1], strings.TrimSpace(m[3]), "REF.%d is reported under its own id", n)
	}
	checked := map[int]bool{}
	for _, r := range referenceTable {
		checked[r.number] = true
	}
	assert.Equal(t, checked, documented)
}
