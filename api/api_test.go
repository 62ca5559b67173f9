package api_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/api"
)

// Limits.Check names each negative field by its JSON name, so the error
// reads the same on every surface (the module's configure, host.WithLimits,
// engine.WithLimits).
func TestLimits_CheckNamesTheJSONField(t *testing.T) {
	if err := (api.Limits{}).Check(); err != nil {
		t.Fatalf("zero limits: %v", err)
	}
	typ := reflect.TypeOf(api.Limits{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		var l api.Limits
		reflect.ValueOf(&l).Elem().Field(i).SetInt(-2)
		err := l.Check()
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		want := fmt.Sprintf("limits.%s (-2): must not be negative", name)
		if err == nil || err.Error() != want {
			t.Errorf("%s = -2: Check() = %v, want %q", f.Name, err, want)
		}
		if !errors.Is(err, api.ErrInvalidArgument) {
			t.Errorf("%s = -2: %v does not match ErrInvalidArgument", f.Name, err)
		}
	}
}

func TestInvalidArgument_IsErrInvalidArgumentWithoutPrefix(t *testing.T) {
	err := fmt.Errorf("call: %w", api.InvalidArgument("the name %q is empty", ""))
	if !errors.Is(err, api.ErrInvalidArgument) {
		t.Fatalf("%v does not match ErrInvalidArgument", err)
	}
	if got := err.Error(); got != `call: the name "" is empty` {
		t.Errorf("message %q", got)
	}
	if errors.Is(err, api.ErrBadVariables) {
		t.Errorf("%v matches ErrBadVariables", err)
	}
}

func TestEventTypes_DistinctAndCopied(t *testing.T) {
	types := api.EventTypes()
	seen := map[api.EventType]bool{}
	for _, typ := range types {
		if typ == "" || seen[typ] {
			t.Errorf("event type %q empty or listed twice", typ)
		}
		seen[typ] = true
	}
	types[0] = "changed"
	if api.EventTypes()[0] == "changed" {
		t.Error("EventTypes returns its own array: a caller changed it")
	}
}

func TestDeployError_UnwrapsToItsProblems(t *testing.T) {
	de := &api.DeployError{File: "m.bpmn", ElementID: "a", Rule: "no outgoing flow",
		Problems: []api.Problem{{RuleID: "EXT.1", ElementID: "a", Rule: "no outgoing flow", Line: 3, Column: 5}, {RuleID: "REF.93", Rule: "x"}}}
	err := fmt.Errorf("deploy: %w", de)
	if got := de.Error(); got != "deploy m.bpmn: element a: no outgoing flow (and 1 more)" {
		t.Errorf("Error() = %q", got)
	}
	if !errors.Is(err, &api.Problem{RuleID: "REF.93"}) || errors.Is(err, &api.Problem{RuleID: "REF.94"}) {
		t.Error("errors.Is does not match problems by rule id")
	}
	var p *api.Problem
	if !errors.As(err, &p) || p.Error() != "3:5: EXT.1: a: no outgoing flow" {
		t.Errorf("errors.As found %v", p)
	}
}

func TestIncidentFilter(t *testing.T) {
	job := api.Incident{Key: 1, InstanceKey: 7, ElementID: "a", JobKey: 3}
	elem := api.Incident{Key: 2, InstanceKey: 7, ElementID: "b"}
	f := api.IncidentFilter{Type: api.IncidentJob}
	if !f.Match(job) || f.Match(elem) {
		t.Error("Type job selects job incidents only")
	}
	if !(api.IncidentFilter{InstanceKey: 7, ElementID: "b"}).Match(elem) {
		t.Error("instance and element select")
	}
	if err := (api.IncidentFilter{Type: "other"}).Check(); !errors.Is(err, api.ErrInvalidArgument) {
		t.Errorf("unknown type: %v", err)
	}
}

// Every sentinel is distinct, so errors.Is never confuses two of them,
// except ErrBadChoice, which wraps ErrBadModification, and ErrSuperseded,
// which wraps ErrStoreLost.
func TestSentinels_Distinct(t *testing.T) {
	all := []error{api.ErrUnknownProcess, api.ErrNoNoneStart, api.ErrUnknownJob, api.ErrUnknownInstance,
		api.ErrUnknownIncident, api.ErrInstanceEnded, api.ErrClosed, api.ErrNotVirtual, api.ErrBadVariables,
		api.ErrStaleActivation, api.ErrObserverDropped, api.ErrUnknownScope, api.ErrBadModification,
		api.ErrBadChoice, api.ErrUnknownDecision, api.ErrTooManyFirings, api.ErrBadState, api.ErrNotSettled,
		api.ErrKeyInUse, api.ErrDuplicateMessage, api.ErrTimeOutOfRange, api.ErrInvalidArgument,
		api.ErrNoEngineDocument, api.ErrStoreNotEmpty, api.ErrNotAcknowledged, api.ErrStoreLost,
		api.ErrStoreDamaged, api.ErrBadRecord, api.ErrSuperseded, api.ErrTrapped, api.ErrUnsupported,
		api.ErrNoServer, api.ErrNoJobQueues}
	wraps := map[error]error{api.ErrBadChoice: api.ErrBadModification, api.ErrSuperseded: api.ErrStoreLost}
	for _, a := range all {
		for _, b := range all {
			if a != b && errors.Is(a, b) && wraps[a] != b {
				t.Errorf("%q matches %q", a, b)
			}
		}
	}
}
