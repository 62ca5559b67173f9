package runtime

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// The job headers that carry a user task's properties, named as Zeebe names
// them for the job of a user task, so that a tasklist written against
// Zeebe's headers reads flowtrack's jobs unchanged.
const (
	HeaderAssignee        = "io.camunda.zeebe:assignee"
	HeaderCandidateGroups = "io.camunda.zeebe:candidateGroups"
	HeaderCandidateUsers  = "io.camunda.zeebe:candidateUsers"
	HeaderFormKey         = "io.camunda.zeebe:formKey"
	HeaderDueDate         = "io.camunda.zeebe:dueDate"
	HeaderFollowUpDate    = "io.camunda.zeebe:followUpDate"
)

// headerForm says how a user task property becomes header text.
type headerForm uint8

const (
	headerText headerForm = iota // as it is
	headerList                   // a JSON array of text, as Zeebe writes candidate lists
	headerDate                   // an ISO-8601 date-time
)

// headerSpec is a user task property whose header is computed when the job
// is created, because its value is an expression.
type headerSpec struct {
	key  string
	form headerForm
	prog *expr.Program
}

// compileUserTask compiles the user task properties of np's node into job
// headers: those with a fixed value into np.headers once, the others into
// np.dynHeaders, evaluated per job.
func compileUserTask(np *nodePlan, opts expr.Options) error {
	u := np.node.UserTask
	if u == nil {
		return nil
	}
	props := []struct {
		key  string
		form headerForm
		e    model.Expression
	}{
		{HeaderAssignee, headerText, u.Assignee},
		{HeaderCandidateGroups, headerList, u.CandidateGroups},
		{HeaderCandidateUsers, headerList, u.CandidateUsers},
		{HeaderFormKey, headerText, u.FormKey},
		{HeaderDueDate, headerDate, u.DueDate},
		{HeaderFollowUpDate, headerDate, u.FollowUpDate},
	}
	for _, p := range props {
		if p.e.IsZero() {
			continue
		}
		prog, err := expr.Compile(p.e, expr.Static, opts)
		if err != nil {
			return fmt.Errorf("%s: %w", p.key, err)
		}
		h := headerSpec{key: p.key, form: p.form, prog: prog}
		if !prog.IsStatic() {
			np.dynHeaders = append(np.dynHeaders, h)
			continue
		}
		v, ok, err := h.value(nil)
		if err != nil {
			return broke("FT.user-task", "%v", err)
		}
		if !ok {
			continue
		}
		if np.headers == nil {
			np.headers = map[string]string{}
		}
		np.headers[p.key] = v
	}
	return nil
}

// value evaluates the property over vars into its header text; ok is
// false when the expression yields null, which leaves the property unset
// (an assignee variable not set yet: the task is unassigned).
func (h headerSpec) value(vars map[string]any) (text string, ok bool, err error) {
	v, err := h.prog.Eval(vars)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", h.key, err)
	}
	if v == nil {
		return "", false, nil
	}
	text, err = h.text(v, vars)
	return text, err == nil, err
}

// text turns v, the property's non-null value, into its header text.
func (h headerSpec) text(v any, vars map[string]any) (string, error) {
	switch h.form {
	case headerList:
		var items []string
		switch x := v.(type) {
		case string:
			if !h.prog.IsStatic() {
				return "", fmt.Errorf("%s: %q yielded text, not a list of text", h.key, h.prog.Text())
			}
			for _, s := range strings.Split(x, ",") {
				if s = strings.TrimSpace(s); s != "" {
					items = append(items, s)
				}
			}
		case []any:
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					return "", fmt.Errorf("%s: %q yielded a list holding %v, not only text", h.key, h.prog.Text(), e)
				}
				items = append(items, s)
			}
		default:
			return "", fmt.Errorf("%s: %q yielded %v, not a list of text", h.key, h.prog.Text(), v)
		}
		b, err := json.Marshal(items)
		return string(b), err
	case headerDate:
		t, err := h.prog.EvalTime(vars)
		if err != nil {
			return "", fmt.Errorf("%s: %w (want an ISO-8601 date-time such as 2026-01-31T17:00:00+01:00)", h.key, err)
		}
		return t.Format(time.RFC3339), nil
	}
	s, err := h.prog.EvalString(vars)
	if err != nil {
		return "", fmt.Errorf("%s: %w", h.key, err)
	}
	return s, nil
}

// jobHeaders returns the headers of a job created at np's node, with the
// variables vars: the fixed ones, shared by every job of the node, or a
// copy with the computed ones added.
func (np *nodePlan) jobHeaders(vars map[string]any) (map[string]string, error) {
	if len(np.dynHeaders) == 0 {
		return np.headers, nil
	}
	out := make(map[string]string, len(np.headers)+len(np.dynHeaders))
	maps.Copy(out, np.headers)
	for _, h := range np.dynHeaders {
		v, ok, err := h.value(vars)
		if err != nil {
			return nil, err
		}
		if ok {
			out[h.key] = v
		}
	}
	return out, nil
}
