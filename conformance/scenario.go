// Package conformance runs flowtrack's scenario corpus, and the external
// suites, on every available engine host and checks they agree.
//
// A scenario is a JSON file in scenarios/ beside the BPMN files it deploys
// (format: README.md). Run plays one on a Runner and returns a normalized
// Result; Check compares a Result with the scenario's expectations, and
// results from different runners must be equal.
package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Scenario is one scenario file.
type Scenario struct {
	// Name is the file name without .json; set by Load.
	Name string `json:"-"`
	// Dir is the folder the file is in; set by Load.
	Dir string `json:"-"`
	// Description says what the scenario proves.
	Description string `json:"description"`
	// BPMN is deployed before the first step, unless empty.
	BPMN string `json:"bpmn"`
	// Steps run in order; the engine settles after each.
	Steps []Step `json:"steps"`
	// Expect is checked after the last step.
	Expect *Expect `json:"expect"`
	// Skip names runners that do not play this scenario, with the reason;
	// reports show the reason, so a gap is never hidden.
	Skip map[string]string `json:"skip,omitempty"`
}

// Step is one operation. Op selects which of the other fields apply.
type Step struct {
	// Op is deploy, start, publishMessage, broadcastSignal, completeJobs,
	// failJob, throwError, resolveIncident, advanceTime, cancel,
	// activateAdHoc or expect.
	Op string `json:"op"`
	// File is the BPMN document of a deploy step.
	File string `json:"file,omitempty"`
	// Process is the process id of a start step.
	Process string `json:"process,omitempty"`
	// As names the instance a start step creates (default: "1", "2"...);
	// Instance selects one for cancel and expect (default: the last
	// started).
	As       string `json:"as,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Variables are start variables, job results, or event payloads.
	Variables map[string]any `json:"variables,omitempty"`
	// Type and Element select the jobs of job steps (and the incidents of
	// resolveIncident by Element); Count limits how many (default: all
	// that match, at least one).
	Type    string `json:"type,omitempty"`
	Element string `json:"element,omitempty"`
	Count   int    `json:"count,omitempty"`
	// Retries and Message of failJob; Code and Message of throwError.
	Retries int    `json:"retries,omitempty"`
	Message string `json:"message,omitempty"`
	Code    string `json:"code,omitempty"`
	// Name, CorrelationKey, TTL (ISO 8601 duration) and MessageID of
	// publishMessage; Name of broadcastSignal.
	Name           string `json:"name,omitempty"`
	CorrelationKey string `json:"correlationKey,omitempty"`
	TTL            string `json:"ttl,omitempty"`
	MessageID      string `json:"messageId,omitempty"`
	// Elements of activateAdHoc: the inner elements to activate in the
	// ad-hoc sub-process Element of Instance.
	Elements []string `json:"elements,omitempty"`
	// Duration of advanceTime (ISO 8601: "PT5M", "P1DT2H").
	Duration string `json:"duration,omitempty"`
	// Error, when set, makes the step expect to fail with an error
	// containing this text.
	Error string `json:"error,omitempty"`
	// Expect of an expect step.
	Expect *Expect `json:"expect,omitempty"`
}

// Expect lists what must hold. Absent fields are not checked.
type Expect struct {
	// Instance selects the instance (default: the last started).
	Instance string `json:"instance,omitempty"`
	// DeployError expects the (last) deploy to have failed.
	DeployError *DeployErrorExpect `json:"deployError,omitempty"`
	// State is active, completed, terminated or failed.
	State string `json:"state,omitempty"`
	// Completed is the multiset of elements left (elementLeft records).
	Completed []string `json:"completed,omitempty"`
	// Terminated lists the elements terminated (elementTerminated
	// records), in the order they were; an interrupt terminates the
	// innermost first.
	Terminated []string `json:"terminated,omitempty"`
	// Paths lists, per token, the elements it left in order; compared as a
	// multiset of paths.
	Paths [][]string `json:"paths,omitempty"`
	// Tokens lists where tokens are and why they wait ("Task_1:job").
	Tokens []string `json:"tokens,omitempty"`
	// Variables must be a subset of the instance variables.
	Variables map[string]any `json:"variables,omitempty"`
	// Jobs lists the open jobs of all instances as "type@element".
	Jobs []string `json:"jobs,omitempty"`
	// JobHeaders and JobRetries check the open job at an element.
	JobHeaders map[string]map[string]string `json:"jobHeaders,omitempty"`
	JobRetries map[string]int               `json:"jobRetries,omitempty"`
	// Incidents lists the elements of the open incidents of all instances.
	Incidents []string `json:"incidents,omitempty"`
	// Events lists event types that must occur in the instance history,
	// as a multiset subset ("timerFired", "messageCorrelated").
	Events []string `json:"events,omitempty"`
}

// DeployErrorExpect matches a *engine.DeployError.
type DeployErrorExpect struct {
	Element string `json:"element"`
	Rule    string `json:"rule"`
}

// Load reads every scenario in dir, ordered by name.
func Load(dir string) ([]*Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*Scenario
	for _, f := range files {
		s, err := LoadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// LoadFile reads one scenario, rejecting unknown fields so typos fail.
func LoadFile(path string) (*Scenario, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	s.Name = strings.TrimSuffix(filepath.Base(path), ".json")
	s.Dir = filepath.Dir(path)
	for i, st := range s.Steps {
		if !knownOps[st.Op] {
			return nil, fmt.Errorf("scenario %s: step %d: unknown op %q", path, i+1, st.Op)
		}
	}
	return &s, nil
}

var knownOps = map[string]bool{
	"deploy": true, "start": true, "publishMessage": true, "broadcastSignal": true, "completeJobs": true,
	"failJob": true, "throwError": true, "resolveIncident": true, "advanceTime": true, "cancel": true, "activateAdHoc": true, "expect": true,
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration parses an ISO 8601 duration without years or months
// ("PT5M", "P1DT12H", "PT0.5S").
func ParseDuration(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return 0, fmt.Errorf("duration %q: want ISO 8601 like PT5M or P1DT2H", s)
	}
	var d time.Duration
	units := []time.Duration{7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute, time.Second}
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		f, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, err
		}
		d += time.Duration(f * float64(u))
	}
	return d, nil
}
