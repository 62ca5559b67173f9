//go:build !extism

package main

import "unsafe"

// The exports of ABI.md (the Extism plug-in build, tag extism, has its own:
// exports_extism.go). Each operation export reads its request from a
// buffer the host got from alloc, runs module.call, and returns the
// response buffer packed as ptr<<32 | len. Buffers handed out are kept in
// buffers so the garbage collector leaves them alone until free.

var buffers = map[uint32][]byte{}

// keep pins b and returns its address in linear memory.
func keep(b []byte) uint32 {
	p := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	buffers[p] = b
	return p
}

//go:wasmexport alloc
func alloc(size uint32) uint32 {
	if size == 0 || size > maxRequest {
		return 0
	}
	return keep(make([]byte, size))
}

//go:wasmexport free
func free(ptr uint32) { delete(buffers, ptr) }

//go:wasmexport abi_version
func abiVersionExport() uint32 { return abiVersion }

// invoke runs op on the request at ptr and returns the packed response.
func invoke(op string, ptr, size uint32) uint64 {
	m := instance()
	var out []byte
	switch buf, ok := buffers[ptr]; {
	case size > maxRequest:
		out = m.Respond(badRequest("%s: request of %d bytes exceeds the limit of %d bytes", op, size, maxRequest))
	case size == 0:
		out = m.Call(op, nil)
	case !ok || int(size) > len(buf):
		out = m.Respond(badRequest("%s: request (%d, %d) is not inside a buffer from alloc", op, ptr, size))
	default:
		out = m.Call(op, buf[:size])
	}
	if len(out) == 0 {
		return 0
	}
	return uint64(keep(out))<<32 | uint64(len(out))
}

//go:wasmexport deploy
func exportDeploy(ptr, size uint32) uint64 { return invoke("deploy", ptr, size) }

//go:wasmexport start
func exportStart(ptr, size uint32) uint64 { return invoke("start", ptr, size) }

//go:wasmexport publish_message
func exportPublishMessage(ptr, size uint32) uint64 { return invoke("publish_message", ptr, size) }

//go:wasmexport broadcast_signal
func exportBroadcastSignal(ptr, size uint32) uint64 { return invoke("broadcast_signal", ptr, size) }

//go:wasmexport complete_job
func exportCompleteJob(ptr, size uint32) uint64 { return invoke("complete_job", ptr, size) }

//go:wasmexport fail_job
func exportFailJob(ptr, size uint32) uint64 { return invoke("fail_job", ptr, size) }

//go:wasmexport throw_error
func exportThrowError(ptr, size uint32) uint64 { return invoke("throw_error", ptr, size) }

//go:wasmexport resolve_incident
func exportResolveIncident(ptr, size uint32) uint64 { return invoke("resolve_incident", ptr, size) }

//go:wasmexport activate_ad_hoc
func exportActivateAdHoc(ptr, size uint32) uint64 { return invoke("activate_ad_hoc", ptr, size) }

//go:wasmexport advance
func exportAdvance(ptr, size uint32) uint64 { return invoke("advance", ptr, size) }

//go:wasmexport tokens
func exportTokens(ptr, size uint32) uint64 { return invoke("tokens", ptr, size) }

//go:wasmexport instance
func exportInstance(ptr, size uint32) uint64 { return invoke("instance", ptr, size) }

//go:wasmexport history
func exportHistory(ptr, size uint32) uint64 { return invoke("history", ptr, size) }

//go:wasmexport jobs
func exportJobs(ptr, size uint32) uint64 { return invoke("jobs", ptr, size) }

//go:wasmexport activate_jobs
func exportActivateJobs(ptr, size uint32) uint64 { return invoke("activate_jobs", ptr, size) }

//go:wasmexport update_job_retries
func exportUpdateJobRetries(ptr, size uint32) uint64 { return invoke("update_job_retries", ptr, size) }

//go:wasmexport definitions
func exportDefinitions(ptr, size uint32) uint64 { return invoke("definitions", ptr, size) }

//go:wasmexport definition_xml
func exportDefinitionXML(ptr, size uint32) uint64 { return invoke("definition_xml", ptr, size) }

//go:wasmexport evaluate_decision
func exportEvaluateDecision(ptr, size uint32) uint64 { return invoke("evaluate_decision", ptr, size) }

//go:wasmexport metrics
func exportMetrics(ptr, size uint32) uint64 { return invoke("metrics", ptr, size) }

//go:wasmexport modify_instance
func exportModifyInstance(ptr, size uint32) uint64 { return invoke("modify_instance", ptr, size) }

//go:wasmexport choose_flows
func exportChooseFlows(ptr, size uint32) uint64 { return invoke("choose_flows", ptr, size) }

//go:wasmexport set_variables
func exportSetVariables(ptr, size uint32) uint64 { return invoke("set_variables", ptr, size) }

//go:wasmexport scope_variables
func exportScopeVariables(ptr, size uint32) uint64 { return invoke("scope_variables", ptr, size) }

//go:wasmexport incidents
func exportIncidents(ptr, size uint32) uint64 { return invoke("incidents", ptr, size) }

//go:wasmexport cancel
func exportCancel(ptr, size uint32) uint64 { return invoke("cancel", ptr, size) }

//go:wasmexport now
func exportNow(ptr, size uint32) uint64 { return invoke("now", ptr, size) }

//go:wasmexport configure
func exportConfigure(ptr, size uint32) uint64 { return invoke("configure", ptr, size) }

//go:wasmexport call
func exportCall(ptr, size uint32) uint64 { return invoke("call", ptr, size) }

//go:wasmexport checkpoint
func exportCheckpoint(ptr, size uint32) uint64 { return invoke("checkpoint", ptr, size) }

//go:wasmexport restore
func exportRestore(ptr, size uint32) uint64 { return invoke("restore", ptr, size) }

//go:wasmexport debug_trap
func debugTrap() { panic("flowtrack: debug_trap called: trapping on purpose") }
