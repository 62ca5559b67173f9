package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocs_ScenarioExample runs the scenario example of docs/cli.md on
// the model it names, as the page says.
func TestDocs_ScenarioExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/cli.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(doc), "## The scenario file")
	require.True(t, ok, "docs/cli.md has a scenario section")
	_, block, ok := strings.Cut(section, "```json\n")
	require.True(t, ok, "the section has a JSON example")
	example, _, _ := strings.Cut(block, "```")
	file := filepath.Join(t.TempDir(), "order-scenario.json")
	require.NoError(t, os.WriteFile(file, []byte(example), 0o600))
	var out bytes.Buffer
	code := run([]string{"run", "../../examples/native/order.bpmn", "--scenario", file}, &out, &out)
	require.Equal(t, exitOK, code, out.String())
	for _, want := range []string{"check-order completed {\"valid\":true}", "completed automatically", "charge-payment completed {\"charged\":250}", "final state: completed"} {
		assert.Contains(t, out.String(), want)
	}
}

// TestScenarioHelp_Example: the example run --help prints is a scenario
// the CLI reads.
func TestScenarioHelp_Example(t *testing.T) {
	t.Parallel()
	start := strings.Index(scenarioHelp, "\n  {\n")
	end := strings.Index(scenarioHelp, "\n  }\n")
	require.True(t, start >= 0 && end > start, "an example in the help")
	file := filepath.Join(t.TempDir(), "sc.json")
	require.NoError(t, os.WriteFile(file, []byte(scenarioHelp[start:end+4]), 0o600))
	sc, err := readScenario(file)
	require.NoError(t, err)
	assert.Equal(t, "order", sc.Process)
	assert.Len(t, sc.Steps, 3)
	assert.Equal(t, int64(60000), *sc.Steps[2].AdvanceMs, "advance PT1M")
	assert.Equal(t, int64(3600000), sc.Steps[0].PublishMessage.TTLMs, "ttl PT1H")
}
