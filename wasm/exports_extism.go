//go:build wasip1 && extism

package main

import "github.com/extism/go-pdk"

// The exports of the Extism plug-in build (EXTISM.md): the same operations
// as ABI.md under the same names, each taking its JSON request as the
// plug-in input and setting the JSON response envelope as the output. An
// error response is an ordinary output with "ok": false and the same code
// as through ABI.md, and the function returns 0: a non-zero return (an
// Extism error) would tell the host the plug-in failed, which only a trap
// means here. Extism owns the memory the request and response travel in,
// so this build needs no alloc, free or buffers of its own.

// serve runs op on the plug-in input and outputs the response.
func serve(op string) int32 {
	pdk.Output(instance().Call(op, pdk.Input()))
	return 0
}

//go:wasmexport deploy
func extismDeploy() int32 { return serve("deploy") }

//go:wasmexport start
func extismStart() int32 { return serve("start") }

//go:wasmexport publish_message
func extismPublishMessage() int32 { return serve("publish_message") }

//go:wasmexport broadcast_signal
func extismBroadcastSignal() int32 { return serve("broadcast_signal") }

//go:wasmexport complete_job
func extismCompleteJob() int32 { return serve("complete_job") }

//go:wasmexport fail_job
func extismFailJob() int32 { return serve("fail_job") }

//go:wasmexport throw_error
func extismThrowError() int32 { return serve("throw_error") }

//go:wasmexport resolve_incident
func extismResolveIncident() int32 { return serve("resolve_incident") }

//go:wasmexport activate_ad_hoc
func extismActivateAdHoc() int32 { return serve("activate_ad_hoc") }

//go:wasmexport advance
func extismAdvance() int32 { return serve("advance") }

//go:wasmexport tokens
func extismTokens() int32 { return serve("tokens") }

//go:wasmexport instance
func extismInstance() int32 { return serve("instance") }

//go:wasmexport history
func extismHistory() int32 { return serve("history") }

//go:wasmexport jobs
func extismJobs() int32 { return serve("jobs") }

//go:wasmexport activate_jobs
func extismActivateJobs() int32 { return serve("activate_jobs") }

//go:wasmexport update_job_retries
func extismUpdateJobRetries() int32 { return serve("update_job_retries") }

//go:wasmexport definitions
func extismDefinitions() int32 { return serve("definitions") }

//go:wasmexport definition_xml
func extismDefinitionXML() int32 { return serve("definition_xml") }

//go:wasmexport evaluate_decision
func extismEvaluateDecision() int32 { return serve("evaluate_decision") }

//go:wasmexport metrics
func extismMetrics() int32 { return serve("metrics") }

//go:wasmexport modify_instance
func extismModifyInstance() int32 { return serve("modify_instance") }

//go:wasmexport choose_flows
func extismChooseFlows() int32 { return serve("choose_flows") }

//go:wasmexport set_variables
func extismSetVariables() int32 { return serve("set_variables") }

//go:wasmexport scope_variables
func extismScopeVariables() int32 { return serve("scope_variables") }

//go:wasmexport incidents
func extismIncidents() int32 { return serve("incidents") }

//go:wasmexport cancel
func extismCancel() int32 { return serve("cancel") }

//go:wasmexport now
func extismNow() int32 { return serve("now") }

//go:wasmexport configure
func extismConfigure() int32 { return serve("configure") }

//go:wasmexport call
func extismCall() int32 { return serve("call") }

//go:wasmexport checkpoint
func extismCheckpoint() int32 { return serve("checkpoint") }

//go:wasmexport restore
func extismRestore() int32 { return serve("restore") }

//go:wasmexport debug_trap
func extismDebugTrap() int32 { panic("flowtrack: debug_trap called: trapping on purpose") }
