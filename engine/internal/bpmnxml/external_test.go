package bpmnxml

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// externalDir returns the external conformance folder, or skips the test.
func externalDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FLOWTRACK_EXTERNAL")
	if dir == "" {
		t.Skip("external suites were not run: FLOWTRACK_EXTERNAL is not set")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("external suites were not run: FLOWTRACK_EXTERNAL: %v", err)
	}
	return dir
}

// miwgIndex is the part of miwg_reference_index.json the test reads.
type miwgIndex struct {
	Files []struct {
		File          string         `json:"file"`
		ElementCounts map[string]int `json:"element_counts"`
	} `json:"files"`
}

// countElements counts nodes by BPMN element name, sequence flows, and event
// definitions by element name, the way the MIWG index counts XML elements.
func countElements(d *model.Definitions) map[string]int {
	defNames := map[model.EventKind]string{}
	for name, k := range eventDefinitionKinds {
		defNames[k] = name
	}
	counts := map[string]int{}
	for _, p := range d.Processes {
		counts["sequenceFlow"] += len(p.Flows)
		for _, n := range p.Nodes {
			if n.GlobalTask != "" {
				counts["callActivity"]++ // the XML has a call activity; the model, the task it performs
				continue
			}
			counts[n.Kind.String()]++
			if n.Kind == model.KindReceiveTask || n.Kind == model.KindSendTask {
				continue // its message definition is the messageRef attribute
			}
			for _, e := range n.Events {
				counts[defNames[e.Kind]]++
			}
		}
	}
	return counts
}

func TestImport_MIWG(t *testing.T) {
	dir := filepath.Join(externalDir(t), "miwg")
	raw, err := os.ReadFile(filepath.Join(dir, "miwg_reference_index.json"))
	require.NoError(t, err)
	var index miwgIndex
	require.NoError(t, json.Unmarshal(raw, &index))
	files, err := filepath.Glob(filepath.Join(dir, "Reference", "*.bpmn"))
	require.NoError(t, err)
	require.NotEmpty(t, files)

	compared := map[string]bool{"sequenceFlow": true}
	for k := model.KindStartEvent; k.String() != "unknown"; k++ {
		compared[k.String()] = true
	}
	for name := range eventDefinitionKinds {
		compared[name] = true
	}
	var imported, rejected []string
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			d, err := Import(name, data)
			if err != nil {
				rules := problemRules(t, err)
				for _, p := range problems(t, err) {
					assert.True(t, strings.HasPrefix(p.Rule, "unsupported") || slices.Contains(miwgBroken[name], p.RuleID),
						"rejected for a reason other than an unsupported element or a rule the model is known to break: %s %s", p.RuleID, p.Rule)
				}
				rejected = append(rejected, name+": "+strings.Join(rules, "; "))
				return
			}
			imported = append(imported, name)
			verr := model.Validate(d)
			if verr != nil {
				t.Logf("%s imports; Validate reports: %v", name, verr)
			}
			for _, f := range index.Files {
				if filepath.Base(f.File) != name {
					continue
				}
				got := countElements(d)
				for el, want := range f.ElementCounts {
					if compared[el] {
						assert.Equal(t, want, got[el], "count of %s", el)
					}
				}
				for el, n := range got {
					if n > 0 {
						assert.Equal(t, f.ElementCounts[el], n, "count of %s", el)
					}
				}
			}
		})
	}
	t.Logf("MIWG: %d imported: %s", len(imported), strings.Join(imported, ", "))
	t.Logf("MIWG: %d rejected:\n%s", len(rejected), strings.Join(rejected, "\n"))
}

// problemRules unpacks an Import or Validate error into its rules, failing
// the test when any part is not a *model.Problem.
func problemRules(t *testing.T, err error) []string {
	t.Helper()
	var rules []string
	for _, p := range problems(t, err) {
		rules = append(rules, p.Rule)
	}
	return rules
}

// problems returns the problems err joins.
func problems(t *testing.T, err error) []*model.Problem {
	t.Helper()
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	ps := make([]*model.Problem, 0, len(errs))
	for _, e := range errs {
		var p *model.Problem
		require.True(t, errors.As(e, &p), "error is not a *model.Problem: %v", e)
		ps = append(ps, p)
	}
	return ps
}

// miwgBroken lists, per MIWG reference model, the catalogue rules it
// breaks in a process that is (or, without isExecutable, is read as)
// executable; each was checked by hand against the model. Any other
// rejection is a false one.
var miwgBroken = map[string][]string{
	// Timer events with an empty timeDate (a formal expression needs a body).
	"C.6.0.bpmn": {"EXT.013"},
	// Data marked isCollection="true" whose item definition (a string,
	// "collectionOfString") is isCollection="false": Trisotech writes a
	// collection of an item this way, the standard says the two agree.
	"C.7.0.bpmn": {"EXT.020", "EXT.081", "EXT.083"},
	// isImmediate="false" on every flow of an isExecutable="true"
	// process, and a none end event with a data input.
	"C.8.1.bpmn": {"EXT.024", "EXT.093"},
}

// betsyCases is the part of betsy/cases.json the test reads.
type betsyCases struct {
	Cases []struct {
		File             string `json:"bpmn_file_local"`
		ExpectDeployFail bool   `json:"expect_deployment_failure"`
	} `json:"cases"`
	Constraints []struct {
		File             string `json:"bpmn_file_local"`
		ExpectDeployFail bool   `json:"expect_deployment_failure"`
	} `json:"constraint_cases"`
}

func TestImport_Betsy(t *testing.T) {
	dir := filepath.Join(externalDir(t), "betsy")
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".bpmn") {
			files = append(files, path)
		}
		return err
	}))
	require.NotEmpty(t, files)
	byRule := map[string]int{}
	accepted := map[string]error{}
	ok := 0
	for _, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		d, err := Import(filepath.Base(path), data)
		if err == nil {
			err = model.Validate(d)
		}
		rel, relErr := filepath.Rel(dir, path)
		require.NoError(t, relErr)
		accepted[filepath.ToSlash(rel)] = err
		if err == nil {
			ok++
			continue
		}
		for _, r := range problemRules(t, err) {
			byRule[r]++
		}
	}
	rules := make([]string, 0, len(byRule))
	for r, n := range byRule {
		rules = append(rules, fmt.Sprintf("    %4d  %s", n, r))
	}
	sort.Strings(rules)
	t.Logf("betsy: %d of %d files import and validate; problems by rule:\n%s", ok, len(files), strings.Join(rules, "\n"))

	// Report, without failing, how deployment verdicts compare with betsy's
	// expectations: the runtime rejects more (kinds it does not run), so
	// this measures rather than gates.
	raw, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	require.NoError(t, err)
	var cases betsyCases
	require.NoError(t, json.Unmarshal(raw, &cases))
	var missedRejects, wrongRejects []string
	seen := map[string]bool{}
	check := func(file string, expectFail bool) {
		err, found := accepted[file]
		if !found || seen[file] {
			return
		}
		seen[file] = true
		switch {
		case expectFail && err == nil:
			missedRejects = append(missedRejects, file)
		case !expectFail && err != nil:
			wrongRejects = append(wrongRejects, file+": "+strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	for _, c := range cases.Cases {
		check(c.File, c.ExpectDeployFail)
	}
	for _, c := range cases.Constraints {
		check(c.File, c.ExpectDeployFail)
	}
	sort.Strings(missedRejects)
	sort.Strings(wrongRejects)
	t.Logf("betsy: %d files betsy expects rejected are accepted:\n    %s", len(missedRejects), strings.Join(missedRejects, "\n    "))
	t.Logf("betsy: %d files betsy expects deployable are rejected:\n    %s", len(wrongRejects), strings.Join(wrongRejects, "\n    "))
}
