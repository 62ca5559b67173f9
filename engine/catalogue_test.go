package engine_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decisionsFile is the catalogue's decision table.
const decisionsFile = "../docs/validation.md"

// decision is one row of the decision table.
type decision struct {
	rule, verdict string
	// reportedAs are the rule ids the code reports it under.
	reportedAs []string
}

// decisionRow matches a row of the table: rule, decision, reported as.
var decisionRow = regexp.MustCompile(`^\| ((?:EXT|REF|XSD)\.[\w-]+) \| (error|warning|n/a) \| ([^|]*) \|`)

// readDecisions parses the decision table.
func readDecisions(t *testing.T) []decision {
	t.Helper()
	data, err := os.ReadFile(decisionsFile)
	require.NoError(t, err)
	var out []decision
	for _, line := range strings.Split(string(data), "\n") {
		m := decisionRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		d := decision{rule: m[1], verdict: m[2]}
		for _, r := range strings.Split(m[3], ",") {
			if r = strings.TrimSpace(r); r != "" && r != "—" {
				d.reportedAs = append(d.reportedAs, r)
			}
		}
		out = append(out, d)
	}
	return out
}

// codeRules returns the rule ids written in the engine's code.
func codeRules(t *testing.T) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range ruleLiteral.FindAllStringSubmatch(string(src), -1) {
			found[m[1]] = true
		}
		return nil
	})
	require.NoError(t, err)
	return found
}

// TestRules_DecisionTable holds docs/validation.md to the code: every
// extended constraint EXT.001–EXT.152 has one decision; an error or a
// warning is reported by the code under the ids the table says, and a
// rule reported under its own id has its smallest valid and invalid
// model in ruleCases, refused or warned as decided; an n/a rule is never
// reported; and every EXT rule the code reports is decided as reported.
func TestRules_DecisionTable(t *testing.T) {
	decisions := readDecisions(t)
	code := codeRules(t)
	cases := map[string][]bool{} // rule -> the warning flags of its cases
	for _, tc := range ruleCases {
		cases[tc.rule] = append(cases[tc.rule], tc.warning)
	}
	seen := map[string]int{}
	reported := map[string]bool{}
	for _, d := range decisions {
		seen[d.rule]++
		if !strings.HasPrefix(d.rule, "EXT.") {
			continue
		}
		if d.verdict == "n/a" {
			assert.False(t, code[d.rule], "%s is n/a but the code reports it", d.rule)
			assert.Empty(t, d.reportedAs, "%s is n/a but is reported as %v", d.rule, d.reportedAs)
			continue
		}
		require.NotEmpty(t, d.reportedAs, "%s: %s without a rule it is reported as", d.rule, d.verdict)
		for _, r := range d.reportedAs {
			reported[r] = true
			if !strings.HasPrefix(r, "REF.") {
				assert.True(t, code[r], "%s is reported as %s, which the code never reports", d.rule, r)
			}
		}
		if !slices.Contains(d.reportedAs, d.rule) || slices.Contains(validateOnlyRules, d.rule) {
			continue
		}
		flags, ok := cases[d.rule]
		if assert.True(t, ok, "%s has no case in ruleCases", d.rule) {
			assert.Contains(t, flags, d.verdict == "warning", "%s is decided %s, but no case tests it so", d.rule, d.verdict)
		}
	}
	for i := 1; i <= 152; i++ {
		r := fmt.Sprintf("EXT.%03d", i)
		assert.Equal(t, 1, seen[r], "%s: rows in %s", r, decisionsFile)
	}
	for r := range code {
		if strings.HasPrefix(r, "EXT.") {
			assert.True(t, reported[r], "the code reports %s, which no error or warning of %s is reported as", r, decisionsFile)
		}
	}
}
