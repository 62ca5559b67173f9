package conformance

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
)

var update = flag.Bool("conformance.update", false, "rewrite external-expected.txt from the current results")

const ratchetFile = "external-expected.txt"

// externalDir returns the external conformance folder, or skips the test.
func externalDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FLOWTRACK_EXTERNAL")
	if dir == "" {
		reportf("external suites were not run: FLOWTRACK_EXTERNAL is not set")
		t.Skip("external suites were not run: FLOWTRACK_EXTERNAL is not set")
	}
	if _, err := os.Stat(dir); err != nil {
		reportf("external suites were not run: %v", err)
		t.Skipf("external suites were not run: FLOWTRACK_EXTERNAL: %v", err)
	}
	return dir
}

// readRatchet returns the case ids listed in external-expected.txt.
func readRatchet(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(ratchetFile)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			ids[line] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func writeRatchet(t *testing.T, passing []string) {
	t.Helper()
	sort.Strings(passing)
	text := "# External conformance cases that must pass (the ratchet): a listed case that\n" +
		"# fails fails TestBetsy / TestMIWG; newly passing cases are reported and belong here.\n" +
		"# Regenerate: go test ./conformance -run 'TestBetsy|TestMIWG' -args -conformance.update\n" +
		strings.Join(passing, "\n") + "\n"
	if err := os.WriteFile(ratchetFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

var betsyGroups = []string{"GATEWAYS", "ACTIVITIES", "EVENTS", "BASICS", "ERRORS", "DATA", "CFPATTERNS", "MUST-REJECT"}

// externalPassing collects passing ids across TestBetsy and TestMIWG for
// -conformance.update.
var externalPassing = map[string]bool{}

// TestBetsy runs betsy's behaviour and must-reject cases on the native
// runner and holds the ratchet.
func TestBetsy(t *testing.T) {
	dir := filepath.Join(externalDir(t), "betsy")
	suite, err := LoadBetsy(dir)
	if err != nil {
		t.Fatal(err)
	}
	ratchet := readRatchet(t)
	type tally struct{ pass, total int }
	groups := map[string]*tally{}
	blockers := map[string]int{}
	var newly []string
	families := ruleFamilies(t, filepath.Join(externalDir(t), "bpmnspector"))
	rejects := map[string]*tally{}
	var wrongRule []string
	cases := append(append([]BetsyCase(nil), suite.Cases...), suite.ConstraintCases...)
	for _, c := range cases {
		r, err := NewNative()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), ctxTimeout)
		out := RunBetsy(ctx, r, dir, c)
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("%s: close: %v", c.ID, err)
		}
		cancel()
		g := groups[c.Group]
		if g == nil {
			g = &tally{}
			groups[c.Group] = g
		}
		g.total++
		if c.Group == "MUST-REJECT" {
			fam, ok := families[out.Rule]
			if !ok {
				fam = "EXT (checked in code)"
			}
			if rejects[fam] == nil {
				rejects[fam] = &tally{}
			}
			rejects[fam].total++
			if out.Pass {
				rejects[fam].pass++
			}
			if out.WrongRule {
				wrongRule = append(wrongRule, strings.TrimPrefix(c.ID, "bpmn_constraints/")+": "+out.Blocker)
			}
		}
		switch {
		case out.Pass:
			g.pass++
			externalPassing["betsy "+c.ID] = true
			if !ratchet["betsy "+c.ID] {
				newly = append(newly, "betsy "+c.ID)
			}
		default:
			blockers[out.Blocker]++
			if ratchet["betsy "+c.ID] {
				t.Errorf("betsy %s: listed in %s but failed: %s (trace %q)", c.ID, ratchetFile, out.Blocker, out.Trace)
			}
			if c.Group != "MUST-REJECT" {
				t.Logf("betsy %s: %s %s", c.ID, out.Blocker, out.Detail)
			}
		}
	}
	reportf("betsy (native)")
	all := tally{}
	for _, name := range betsyGroups {
		g := groups[name]
		if g == nil {
			continue
		}
		all.pass += g.pass
		all.total += g.total
		reportf("  %-12s %3d/%d", strings.ToLower(name), g.pass, g.total)
	}
	reportf("  %-12s %3d/%d", "all", all.pass, all.total)
	reportf("must-reject cases rejected by the rule they name, by the catalogue's rule family:")
	var fams []string
	for f := range rejects {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	for _, f := range fams {
		reportf("  %-34s %3d/%d", f, rejects[f].pass, rejects[f].total)
	}
	reportf("must-reject cases rejected for another reason (%d):", len(wrongRule))
	for _, w := range wrongRule {
		reportf("  %s", truncate(w, 120))
	}
	reportf("betsy failures by what blocks them (cases):")
	type kv struct {
		k string
		v int
	}
	var bl []kv
	for k, v := range blockers {
		bl = append(bl, kv{k, v})
	}
	sort.Slice(bl, func(i, j int) bool { return bl[i].v > bl[j].v || (bl[i].v == bl[j].v && bl[i].k < bl[j].k) })
	for _, b := range bl {
		reportf("  %3d  %s", b.v, truncate(b.k, 110))
	}
	// Per feature: cases it is needed for, and cases it alone would unlock.
	involved, alone := map[string]int{}, map[string]int{}
	for k, v := range blockers {
		parts := strings.Split(k, " + ")
		for _, p := range parts {
			involved[p] += v
			if len(parts) == 1 {
				alone[p] += v
			}
		}
	}
	var feats []string
	for f := range involved {
		feats = append(feats, f)
	}
	sort.Slice(feats, func(i, j int) bool {
		a, b := feats[i], feats[j]
		return involved[a] > involved[b] || (involved[a] == involved[b] && a < b)
	})
	reportf("missing features by betsy cases needing them (alone unlocking):")
	for _, f := range feats {
		reportf("  %3d (%3d)  %s", involved[f], alone[f], truncate(f, 100))
	}
	sort.Strings(newly)
	for _, id := range newly {
		reportf("newly passing (add to %s): %s", ratchetFile, id)
		t.Logf("newly passing, add to %s: %s", ratchetFile, id)
	}
}

// ruleFamilies maps the rules betsy's must-reject cases name to the part of
// the constraint catalogue that states them: the schematron file of an
// EXT rule's conformance sub-class, the reference table, or, for the EXT
// rules BPMNspector checks in code, "EXT (checked in code)".
func ruleFamilies(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "EXT_*.sch"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schematron files in %s (%v)", dir, err)
	}
	out := map[string]string{"REF": "REF (references.xml)"}
	ext := regexp.MustCompile(`EXT\.\d+`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		family := strings.TrimSuffix(filepath.Base(f), ".sch")
		for _, id := range ext.FindAllString(string(data), -1) {
			if _, seen := out[id]; !seen {
				out[id] = family
			}
		}
	}
	return out
}

// TestMIWG deploys every MIWG reference model: each must deploy or be
// rejected with a *DeployError, never panic or fail otherwise.
func TestMIWG(t *testing.T) {
	dir := filepath.Join(externalDir(t), "miwg", "Reference")
	files, err := filepath.Glob(filepath.Join(dir, "*.bpmn"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no MIWG models in %s", dir)
	}
	ratchet := readRatchet(t)
	imported, rejected, failed := 0, 0, 0
	// reasons counts, per rule, the rejected files that break it.
	reasons := map[string]int{}
	for _, path := range files {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		status, err := deployOnce(name, data)
		id := "miwg " + name
		switch status {
		case "imported":
			imported++
		case "rejected":
			rejected++
			t.Logf("%s rejected: %v", name, err)
			var de *engine.DeployError
			if errors.As(err, &de) {
				for _, id := range strings.Split(ruleIDs(de), ", ") {
					reasons[id]++
				}
			}
		default:
			failed++
			t.Errorf("%s: %v", name, err)
		}
		if status != "failed" {
			externalPassing[id] = true
			if !ratchet[id] {
				reportf("newly passing (add to %s): %s", ratchetFile, id)
			}
		} else if ratchet[id] {
			t.Errorf("%s listed in %s but failed", id, ratchetFile)
		}
		reportf("miwg %-14s %s %s", name, status, truncate(errText(err), 90))
	}
	reportf("miwg: %d imported, %d rejected, %d failed (of %d)", imported, rejected, failed, len(files))
	rules := make([]string, 0, len(reasons))
	for r := range reasons {
		rules = append(rules, r)
	}
	sort.Slice(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		return reasons[a] > reasons[b] || reasons[a] == reasons[b] && a < b
	})
	reportf("miwg rejection reasons (rule: files):")
	for _, r := range rules {
		reportf("  %-18s %d", r, reasons[r])
	}
}

// TestZRatchetUpdate rewrites the ratchet when asked; it runs after the
// external tests (tests run in source order, files in name order).
func TestZRatchetUpdate(t *testing.T) {
	if !*update {
		t.Skip("run with -conformance.update to rewrite " + ratchetFile)
	}
	if len(externalPassing) == 0 {
		t.Fatal("no external results: is FLOWTRACK_EXTERNAL set?")
	}
	var ids []string
	for id := range externalPassing {
		ids = append(ids, id)
	}
	writeRatchet(t, ids)
}

// deployOnce deploys a model on a fresh engine and classifies the result.
func deployOnce(name string, data []byte) (status string, err error) {
	defer func() {
		if r := recover(); r != nil {
			status, err = "failed", fmt.Errorf("panic: %v", r)
		}
	}()
	e, err := engine.New()
	if err != nil {
		return "failed", err
	}
	defer e.Close(context.Background())
	_, err = e.Deploy(name, data)
	var de *engine.DeployError
	switch {
	case err == nil:
		return "imported", nil
	case errors.As(err, &de):
		return "rejected", err
	default:
		return "failed", err
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
