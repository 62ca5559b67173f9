package runtime

import (
	"sync/atomic"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// scope is one variable and token scope: the process itself, or one
// activation of a sub-process or event sub-process. Scopes are loop-owned;
// tracks only read a scope's published view.
//
// Scope states: open → done (completed when its last token ended, or
// terminated by an interrupt, a terminate end event or the instance
// stopping). A done scope never opens again.
type scope struct {
	id     int
	node   *model.Node // the sub-process; nil for the process scope
	parent *scope
	// vars are the scope's own variables, written only by the loop.
	vars map[string]any
	// view is the published flattened view: parent's view overlaid with
	// vars. It is replaced, never changed, so tracks read it without locks.
	view     atomic.Pointer[map[string]any]
	children map[int]*scope
	// token is the token waiting at the sub-process node, in the parent
	// scope; 0 for the process scope. For an inner instance of a
	// multi-instance activity it is the instance's own token, the only
	// one in the scope.
	token int
	// live counts the tokens directly inside the scope.
	live int
	// subs are the open start subscriptions of the scope's event
	// sub-processes.
	subs []int64
	// interrupted is set once an interrupting event sub-process started:
	// the scope completes when that event sub-process does.
	interrupted bool
	done        bool
	// multi is set on the body of a multi-instance activity; inner on the
	// scope of one of its inner instances, index (from 0) saying which
	// (multi.go).
	multi *multiBody
	inner bool
	// revived marks a scope revived to compensate what completed in it,
	// which no token waits at; compensable holds the records of the
	// activities that completed in the scope and can be compensated, in
	// order of completion, behind a pointer so that scopes without any
	// cost one word (compensation.go).
	revived     bool
	index       int
	compensable *[]*compRecord
	// adhoc is set on the scope of an ad-hoc sub-process (adhoc.go).
	adhoc *adHocState
}

// emptyView is the view of a scope with no variables anywhere above it.
// Views are never changed, so every such scope shares it.
var emptyView = map[string]any{}

func newScope(id int, node *model.Node, parent *scope, vars map[string]any) *scope {
	s := &scope{id: id, node: node, parent: parent, vars: vars}
	if parent != nil {
		if parent.children == nil {
			parent.children = make(map[int]*scope)
		}
		parent.children[id] = s
	}
	s.publish()
	return s
}

// visible returns the variables visible in the scope: its own over its
// parents'. The map is shared and must not be changed.
func (s *scope) visible() map[string]any { return *s.view.Load() }

// publish recomputes the view of s and of every scope below it.
func (s *scope) publish() {
	var view map[string]any
	switch {
	case len(s.vars) == 0 && (s.parent == nil || len(s.parent.visible()) == 0):
		view = emptyView
	case s.parent == nil:
		view = make(map[string]any, len(s.vars))
		for k, v := range s.vars {
			view[k] = v
		}
	default:
		view = overlay(s.parent.visible(), s.vars)
	}
	s.view.Store(&view)
	for _, c := range s.children {
		c.publish()
	}
}

// set writes update from scope s: each variable goes to the nearest scope
// that already holds it, else to the process scope (as Zeebe propagates
// variables).
func (s *scope) set(update map[string]any) {
	if len(update) == 0 {
		return
	}
	root := s
	for root.parent != nil {
		root = root.parent
	}
	touched := map[*scope]bool{}
	for k, v := range update {
		target := root
		for c := s; c != nil; c = c.parent {
			if _, ok := c.vars[k]; ok {
				target = c
				break
			}
		}
		if target.vars == nil {
			target.vars = make(map[string]any, len(update))
		}
		target.vars[k] = v
		touched[target] = true
	}
	// Publishing the highest touched scope republishes those below it.
	for c := range touched {
		covered := false
		for p := c.parent; p != nil; p = p.parent {
			if touched[p] {
				covered = true
				break
			}
		}
		if !covered {
			c.publish()
		}
	}
}

// setLocal writes update into the scope's own variables (input mappings of
// a sub-process).
func (s *scope) setLocal(update map[string]any) {
	if s.vars == nil && len(update) > 0 {
		s.vars = make(map[string]any, len(update))
	}
	for k, v := range update {
		s.vars[k] = v
	}
	s.publish()
}

// close marks s and every scope below it done and detaches s from its
// parent.
func (s *scope) close() {
	s.done = true
	for _, c := range s.children {
		c.close()
	}
	if s.parent != nil {
		delete(s.parent.children, s.id)
	}
}
