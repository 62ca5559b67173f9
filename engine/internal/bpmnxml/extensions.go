package bpmnxml

import "github.com/flowtrack/flowtrack/engine/internal/model"

// extensions reads the bpmn:extensionElements of a node: the Camunda 8
// (zeebe:) and Camunda 7 (camunda:) elements flowtrack uses. Everything else
// in it is ignored.
func (b *builder) extensions(n *model.Node, ext *element) {
	for _, c := range ext.children {
		switch c.space {
		case nsZeebe:
			b.zeebe(n, c)
		case nsCamunda:
			b.camunda(n, c)
		}
	}
}

// zeebe reads one Camunda 8 extension element.
func (b *builder) zeebe(n *model.Node, e *element) {
	switch e.local {
	case "taskDefinition":
		job := b.job(n)
		if v := e.get("type"); v != "" {
			job.Type = model.Expression{Text: v}
		}
		if v := e.get("retries"); v != "" {
			job.Retries = model.Expression{Text: v}
		}
	case "taskHeaders":
		for _, h := range e.children {
			if h.space == nsZeebe && h.local == "header" {
				job := b.job(n)
				job.Headers = append(job.Headers, model.Header{Key: h.get("key"), Value: h.get("value")})
			}
		}
	case "ioMapping":
		for _, m := range e.children {
			if m.space != nsZeebe {
				continue
			}
			mapping := model.Mapping{Source: model.Expression{Text: m.get("source")}, Target: m.get("target")}
			switch m.local {
			case "input":
				n.Inputs = append(n.Inputs, mapping)
			case "output":
				n.Outputs = append(n.Outputs, mapping)
			}
		}
	case "calledElement":
		if v := e.get("processId"); v != "" {
			n.CalledElement = model.Expression{Text: v}
		}
	case "script":
		n.ScriptExpression = model.Expression{Text: e.get("expression")}
		n.ResultVariable = e.get("resultVariable")
	case "calledDecision":
		n.CalledDecision = e.get("decisionId")
		n.Decision = &model.DecisionCall{DecisionID: e.get("decisionId"), ResultVariable: e.get("resultVariable"),
			Binding: e.get("bindingType"), VersionTag: e.get("versionTag")}
	case "assignmentDefinition":
		u := userTask(n)
		u.Assignee = model.Expression{Text: e.get("assignee")}
		u.CandidateGroups = model.Expression{Text: e.get("candidateGroups")}
		u.CandidateUsers = model.Expression{Text: e.get("candidateUsers")}
	case "formDefinition":
		userTask(n).FormKey = model.Expression{Text: e.get("formKey")}
	case "taskSchedule":
		u := userTask(n)
		u.DueDate = model.Expression{Text: e.get("dueDate")}
		u.FollowUpDate = model.Expression{Text: e.get("followUpDate")}
	}
}

// userTask returns the node's user task properties, creating them.
func userTask(n *model.Node) *model.UserTask {
	if n.UserTask == nil {
		n.UserTask = &model.UserTask{}
	}
	return n.UserTask
}

// camunda reads one Camunda 7 extension element.
func (b *builder) camunda(n *model.Node, e *element) {
	if e.local != "inputOutput" {
		return
	}
	for _, p := range e.children {
		if p.space != nsCamunda {
			continue
		}
		// A parameter's value is its text; nested camunda:script, list and
		// map values are not read.
		mapping := model.Mapping{Source: model.Expression{Text: p.content()}, Target: p.get("name")}
		switch p.local {
		case "inputParameter":
			n.Inputs = append(n.Inputs, mapping)
		case "outputParameter":
			n.Outputs = append(n.Outputs, mapping)
		}
	}
}
