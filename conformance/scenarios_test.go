package conformance

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/internal/testtime"

	"go.uber.org/goleak"
)

// report makes the tests print one line per scenario and runner, per
// external case group, and summaries (make conformance sets it).
var report = flag.Bool("conformance.report", false, "print the conformance report to stdout")

// reportLines collects the report while tests run; TestMain prints it.
var (
	reportMu    sync.Mutex
	reportLines []string
)

func reportf(format string, args ...any) {
	reportMu.Lock()
	defer reportMu.Unlock()
	reportLines = append(reportLines, fmt.Sprintf(format, args...))
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	stopNode()
	if *report {
		for _, l := range reportLines {
			fmt.Println(l)
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// ctxTimeout bounds one scenario or external case: a safety net against
// a hang, not a time limit (a budget scenario takes ~12 s alone and
// overran 2 minutes under -race on a loaded machine), scaled for slow
// machines.
var ctxTimeout = testtime.Scale(6 * time.Minute)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), ctxTimeout)
	t.Cleanup(cancel)
	return ctx
}

// TestScenarios plays every scenario on every registered runner. A
// scenario passes when each runner meets its expectations and all runners
// make the same observations.
func TestScenarios(t *testing.T) {
	scenarios, err := Load("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) == 0 {
		t.Fatal("no scenarios in scenarios/")
	}
	factories := Factories()
	passed := map[string]int{}
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			var first []byte
			var firstName string
			for _, f := range factories {
				if why, ok := s.Skip[f.Name]; ok {
					reportf("scenario %-48s %-8s SKIP %s", s.Name, f.Name, why)
					continue
				}
				status := "PASS"
				res, err := playOn(t, f, s, true)
				switch {
				case err != nil:
					status = "FAIL " + err.Error()
					t.Errorf("%s: %v", f.Name, err)
				case len(res.Mismatches) > 0:
					status = "FAIL " + strings.Join(res.Mismatches, "; ")
					for _, m := range res.Mismatches {
						t.Errorf("%s: %s", f.Name, m)
					}
				}
				if err == nil {
					got, _ := json.Marshal(res.Observations)
					if first == nil {
						first, firstName = got, f.Name
					} else if string(got) != string(first) {
						status = "FAIL differs from " + firstName
						t.Errorf("%s observed\n%s\n%s observed\n%s", firstName, first, f.Name, got)
					}
				}
				if status == "PASS" {
					passed[f.Name]++
				}
				reportf("scenario %-48s %-8s %s", s.Name, f.Name, status)
			}
		})
	}
	if played := passed["native"]; played == len(scenarios) {
		checkAllTypesWritten(t)
	}
	for _, f := range factories {
		skipped := 0
		for _, s := range scenarios {
			if _, ok := s.Skip[f.Name]; ok {
				skipped++
			}
		}
		reportf("scenarios on %s: %d/%d passed, %d skipped", f.Name, passed[f.Name], len(scenarios)-skipped, skipped)
	}
}

// playOn plays s on a fresh runner of f. With checkEvents, a native
// runner's records are checked against the contract (checkRecords).
func playOn(t *testing.T, f Factory, s *Scenario, checkEvents bool) (*Result, error) {
	t.Helper()
	r, err := f.New()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := r.Close(context.Background()); err != nil {
			t.Errorf("%s: close: %v", f.Name, err)
		}
	}()
	if n, ok := r.(*Native); ok && checkEvents {
		defer checkRecords(t, n)()
	}
	return Run(ctxT(t), r, s)
}

// repeat is how many times TestScenarioOrder plays each scenario on each
// runner it plays on: twice under -race in make test, 10 times in make
// stress. By default it plays on the native runners only, whose goroutines
// -race shuffles most (the module runs on one thread, and TestScenarios
// already holds every runner to the native observations); allHosts plays
// on every runner (make stress).
var (
	repeat   = flag.Int("conformance.repeat", 2, "plays of each scenario per runner in TestScenarioOrder")
	allHosts = flag.Bool("conformance.all-hosts", false, "TestScenarioOrder plays on every runner, not only native")
)

// TestScenarioOrder plays every scenario several times on every runner and
// requires the same observations each time, histories in full order
// included: an instance's order is a function of the model and its inputs,
// never of scheduling (RATIONALE.md).
func TestScenarioOrder(t *testing.T) {
	scenarios, err := Load("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			for _, f := range Factories() {
				if _, ok := s.Skip[f.Name]; ok || (!*allHosts && !strings.HasPrefix(f.Name, "native")) {
					continue
				}
				var first []byte
				for i := range *repeat {
					res, err := playOn(t, f, s, false)
					if err != nil {
						t.Fatalf("%s play %d: %v", f.Name, i+1, err)
					}
					got, _ := json.Marshal(res.Observations)
					if first == nil {
						first = got
					} else if string(got) != string(first) {
						t.Fatalf("%s: play %d observed\n%s\nplay 1 observed\n%s", f.Name, i+1, got, first)
					}
				}
			}
		})
	}
}
