package rest

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/flowtrack/flowtrack/server"
)

// routes registers every endpoint flowtrack serves (docs/camunda-rest.md
// lists the others and why not).
func (a *API) routes() {
	a.handle("GET /v2/status", func(*http.Request) (int, any, error) { return http.StatusNoContent, nil, nil })
	a.handle("GET /v2/topology", a.topology)
	a.handle("GET /v2/license", a.license)
	a.handle("GET /v2/authentication/me", a.me)

	a.handle("POST /v2/deployments", a.deploy)

	a.handle("POST /v2/process-instances", a.createInstance)
	a.handle("GET /v2/process-instances/{processInstanceKey}", a.getInstance)
	a.handle("POST /v2/process-instances/{processInstanceKey}/cancellation", a.cancelInstance)
	a.handle("POST /v2/process-instances/search", a.searchInstances)
	a.handle("POST /v2/process-instances/{processInstanceKey}/incidents/search", a.searchInstanceIncidents)

	a.handle("POST /v2/element-instances/search", a.searchElements)
	a.handle("GET /v2/element-instances/{elementInstanceKey}", a.getElement)
	a.handle("PUT /v2/element-instances/{elementInstanceKey}/variables", a.setVariables)
	a.handle("POST /v2/variables/search", a.searchVariables)
	a.handle("GET /v2/variables/{variableKey}", a.getVariable)
	a.handle("POST /v2/element-instances/{elementInstanceKey}/incidents/search", a.searchElementIncidents)
	a.handle("POST /v2/element-instances/ad-hoc-activities/{adHocSubProcessInstanceKey}/activation", a.activateAdHoc)
	a.handle("POST /v2/process-instances/{processInstanceKey}/modification", a.modifyInstance)
	a.handle("POST /v2/process-instances/{processInstanceKey}/incident-resolution", a.resolveInstanceIncidents)

	a.handle("POST /v2/jobs/activation", a.activateJobs)
	a.handle("POST /v2/jobs/{jobKey}/completion", a.completeJob)
	a.handle("POST /v2/jobs/{jobKey}/failure", a.failJob)
	a.handle("POST /v2/jobs/{jobKey}/error", a.throwError)
	a.handle("PATCH /v2/jobs/{jobKey}", a.updateJob)
	a.handle("POST /v2/jobs/search", a.searchJobs)

	a.handle("POST /v2/messages/publication", a.publishMessage)
	a.handle("POST /v2/messages/correlation", a.correlateMessage)
	a.handle("POST /v2/signals/broadcast", a.broadcastSignal)

	a.handle("POST /v2/incidents/search", a.searchIncidents)
	a.handle("GET /v2/incidents/{incidentKey}", a.getIncident)
	a.handle("POST /v2/incidents/{incidentKey}/resolution", a.resolveIncident)

	a.handle("POST /v2/process-definitions/search", a.searchDefinitions)
	a.handle("GET /v2/process-definitions/{processDefinitionKey}", a.getDefinition)
	a.handle("GET /v2/process-definitions/{processDefinitionKey}/xml", a.getDefinitionXML)

	a.handle("POST /v2/user-tasks/search", a.searchUserTasks)
	a.handle("GET /v2/user-tasks/{userTaskKey}", a.getUserTask)
	a.handle("POST /v2/user-tasks/{userTaskKey}/assignment", a.assignUserTask)
	a.handle("DELETE /v2/user-tasks/{userTaskKey}/assignee", a.unassignUserTask)
	a.handle("POST /v2/user-tasks/{userTaskKey}/completion", a.completeUserTask)

	a.handle("PUT /v2/clock", a.pinClock)
	a.handle("POST /v2/clock/reset", a.resetClock)
	a.handle("POST /v2/expression/evaluation", a.evaluateExpression)

	// Every other endpoint of the API: 501 with a pointer to the support
	// table, rather than the router's plain 404 or 405.
	a.handle("/v2/", func(r *http.Request) (int, any, error) {
		return 0, nil, unsupported("flowtrack does not serve %s %s (docs/camunda-rest.md lists what it serves and why)", r.Method, r.URL.Path)
	})
}

// Version is the Camunda version the API answers as (the API of
// Camunda 8.9, which the 9.1 client line speaks).
const Version = "8.9.0"

func (a *API) topology(r *http.Request) (int, any, error) {
	t := Topology{Nodes: []TopologyNode{{Name: "flowtrack", Partitions: []int{1}}}}
	if a.cfg.Topology != nil {
		var err error
		if t, err = a.cfg.Topology(r.Context()); err != nil {
			return 0, nil, &problemError{status: http.StatusServiceUnavailable, title: "UNAVAILABLE", detail: "read the topology: " + err.Error()}
		}
	}
	res := TopologyResponse{ClusterSize: len(t.Nodes), PartitionsCount: max(t.Partitions, 1), ReplicationFactor: max(t.Replicas, 1),
		GatewayVersion: Version, LastCompletedChangeID: "-1", Brokers: []BrokerInfo{}}
	host, port := r.Host, 0
	if h, p, err := net.SplitHostPort(r.Host); err == nil {
		host, port = h, atoiOr(p, 0)
	}
	for i, n := range t.Nodes {
		b := BrokerInfo{NodeID: i, Host: host, Port: port, Version: Version, Partitions: []Partition{}}
		if len(t.Nodes) > 1 {
			b.Host = n.Name // the node's name: its address is the operator's
		}
		for _, p := range n.Partitions {
			b.Partitions = append(b.Partitions, Partition{PartitionID: p, Role: "leader", Health: "healthy"})
		}
		res.Brokers = append(res.Brokers, b)
	}
	return http.StatusOK, res, nil
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

func (a *API) license(*http.Request) (int, any, error) {
	return http.StatusOK, map[string]any{"validLicense": true, "licenseType": "flowtrack", "isCommercial": false, "expiresAt": nil}, nil
}

func (a *API) me(r *http.Request) (int, any, error) {
	user, role := "anonymous", server.RoleAdmin
	if a.cfg.Auth != nil {
		id, err := a.cfg.Auth.authenticate(r)
		if err != nil {
			return 0, nil, err
		}
		user, role = id.name, id.role
	}
	return http.StatusOK, map[string]any{"username": user, "displayName": user, "email": nil,
		"authorizedComponents": []string{}, "tenants": []any{}, "groups": []string{}, "roles": []string{string(role)},
		"salesPlanType": nil, "c8Links": map[string]string{}, "canLogout": false}, nil
}

// deadline is now plus ms milliseconds, or plus def when ms is 0.
func deadline(ms int64, def time.Duration) time.Time {
	if ms <= 0 {
		return time.Now().Add(def)
	}
	return time.Now().Add(time.Duration(ms) * time.Millisecond)
}
