package bpmnxml

import "strings"

// A call activity may call a global task instead of a process (BPMN 2.0
// §10.3.6, §10.2.5): a task defined once at the top of the document, for
// any number of call activities to perform. Performing it is running that
// task in the call activity's place, so the importer reads such a call
// activity as the task itself: a bpmn:globalScriptTask called by call
// activity "review" becomes script task "review", with the global task's
// script, format and extension elements (a job type, headers) and the call
// activity's own id, name, attributes, loop characteristics, boundary
// events and extension elements (mappings). Its records name it as that
// kind of task.

// callsGlobalTask returns, for a call activity e whose calledElement names
// a global task, the task element it stands for; else e itself.
func (b *builder) callsGlobalTask(e *element) *element {
	if !e.is("callActivity") {
		return e
	}
	g, ok := lookup(b.imp.globalTasks, e.get("calledElement"))
	if !ok {
		return e
	}
	task := &element{space: nsBPMN, local: strings.ToLower(g.local[len("global"):len("global")+1]) + g.local[len("global")+1:], pos: e.pos}
	for _, a := range e.attrs {
		if a.Name.Local != "calledElement" {
			task.attrs = append(task.attrs, a)
		}
	}
	for _, a := range g.attrs {
		if a.Name.Local != "id" && a.Name.Local != "name" {
			task.attrs = append(task.attrs, a)
		}
	}
	task.children = append(append(task.children, g.children...), e.children...)
	return task
}
