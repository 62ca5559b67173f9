package rest

import "encoding/json"

// The request and response bodies of Camunda's Orchestration Cluster REST
// API (/v2) that flowtrack serves, in one place, named and shaped as the
// API's OpenAPI description names them (the types of the official
// TypeScript client, @camunda8/orchestration-cluster-api 9.1, are
// generated from it). Keys are decimal strings, as the API sends Java
// longs; times are RFC 3339 text except where noted.

// defaultTenant is the only tenant: flowtrack has no multi-tenancy.
const defaultTenant = "<default>"

// Problem is an RFC 7807 problem detail, the body of every error answer
// (Content-Type application/problem+json).
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
}

// TopologyResponse answers GET /v2/topology.
type TopologyResponse struct {
	Brokers               []BrokerInfo `json:"brokers"`
	ClusterID             *string      `json:"clusterId"`
	ClusterSize           int          `json:"clusterSize"`
	PartitionsCount       int          `json:"partitionsCount"`
	ReplicationFactor     int          `json:"replicationFactor"`
	GatewayVersion        string       `json:"gatewayVersion"`
	LastCompletedChangeID string       `json:"lastCompletedChangeId"`
}

// BrokerInfo is one node of the topology.
type BrokerInfo struct {
	NodeID     int         `json:"nodeId"`
	Host       string      `json:"host"`
	Port       int         `json:"port"`
	Partitions []Partition `json:"partitions"`
	Version    string      `json:"version"`
}

// Partition is one partition of a broker.
type Partition struct {
	PartitionID int    `json:"partitionId"`
	Role        string `json:"role"`
	Health      string `json:"health"`
}

// DeploymentResult answers POST /v2/deployments.
type DeploymentResult struct {
	DeploymentKey string                     `json:"deploymentKey"`
	TenantID      string                     `json:"tenantId"`
	Deployments   []DeploymentMetadataResult `json:"deployments"`
}

// DeploymentMetadataResult is one deployed artefact; flowtrack deploys
// processes only.
type DeploymentMetadataResult struct {
	ProcessDefinition    *DeploymentProcessResult  `json:"processDefinition"`
	DecisionDefinition   *DeploymentDecisionResult `json:"decisionDefinition"`
	DecisionRequirements any                       `json:"decisionRequirements"`
	Form                 any                       `json:"form"`
	Resource             any                       `json:"resource"`
}

// DeploymentDecisionResult is one deployed decision version. Its keys
// name the deployment's record only: decisions are evaluated by id
// (business rule tasks), and there is no decision definition endpoint.
type DeploymentDecisionResult struct {
	DecisionDefinitionID    string `json:"decisionDefinitionId"`
	Version                 int    `json:"version"`
	Name                    string `json:"name"`
	TenantID                string `json:"tenantId"`
	DecisionRequirementsID  string `json:"decisionRequirementsId"`
	DecisionDefinitionKey   string `json:"decisionDefinitionKey"`
	DecisionRequirementsKey string `json:"decisionRequirementsKey"`
}

// DeploymentProcessResult is one deployed process version.
type DeploymentProcessResult struct {
	ProcessDefinitionID      string `json:"processDefinitionId"`
	ProcessDefinitionVersion int    `json:"processDefinitionVersion"`
	ResourceName             string `json:"resourceName"`
	TenantID                 string `json:"tenantId"`
	ProcessDefinitionKey     string `json:"processDefinitionKey"`
}

// ProcessInstanceCreation is the body of POST /v2/process-instances:
// one of ProcessDefinitionID and ProcessDefinitionKey.
type ProcessInstanceCreation struct {
	ProcessDefinitionID      string         `json:"processDefinitionId"`
	ProcessDefinitionKey     string         `json:"processDefinitionKey"`
	ProcessDefinitionVersion *int           `json:"processDefinitionVersion"`
	Variables                map[string]any `json:"variables"`
	TenantID                 string         `json:"tenantId"`
	AwaitCompletion          bool           `json:"awaitCompletion"`
	FetchVariables           []string       `json:"fetchVariables"`
	// RequestTimeout bounds awaitCompletion, in milliseconds (0: the
	// server's default).
	RequestTimeout      int64             `json:"requestTimeout"`
	StartInstructions   []json.RawMessage `json:"startInstructions"`
	RuntimeInstructions []json.RawMessage `json:"runtimeInstructions"`
	Tags                []string          `json:"tags"`
	BusinessID          string            `json:"businessId"`
	OperationReference  *int64            `json:"operationReference"`
}

// CreateProcessInstanceResult answers POST /v2/process-instances.
type CreateProcessInstanceResult struct {
	ProcessDefinitionID      string         `json:"processDefinitionId"`
	ProcessDefinitionVersion int            `json:"processDefinitionVersion"`
	TenantID                 string         `json:"tenantId"`
	Variables                map[string]any `json:"variables"`
	ProcessDefinitionKey     string         `json:"processDefinitionKey"`
	ProcessInstanceKey       string         `json:"processInstanceKey"`
	Tags                     []string       `json:"tags"`
	BusinessID               *string        `json:"businessId"`
}

// ProcessInstanceResult is one process instance (GET and search).
type ProcessInstanceResult struct {
	ProcessDefinitionID         string   `json:"processDefinitionId"`
	ProcessDefinitionName       *string  `json:"processDefinitionName"`
	ProcessDefinitionVersion    int      `json:"processDefinitionVersion"`
	ProcessDefinitionVersionTag *string  `json:"processDefinitionVersionTag"`
	StartDate                   string   `json:"startDate"`
	EndDate                     *string  `json:"endDate"`
	State                       string   `json:"state"`
	HasIncident                 bool     `json:"hasIncident"`
	TenantID                    string   `json:"tenantId"`
	ProcessInstanceKey          string   `json:"processInstanceKey"`
	ProcessDefinitionKey        string   `json:"processDefinitionKey"`
	ParentProcessInstanceKey    *string  `json:"parentProcessInstanceKey"`
	ParentElementInstanceKey    *string  `json:"parentElementInstanceKey"`
	RootProcessInstanceKey      *string  `json:"rootProcessInstanceKey"`
	Tags                        []string `json:"tags"`
	BusinessID                  *string  `json:"businessId"`
}

// ElementInstanceResult is one element instance (search).
type ElementInstanceResult struct {
	ProcessDefinitionID    string  `json:"processDefinitionId"`
	StartDate              string  `json:"startDate"`
	EndDate                *string `json:"endDate"`
	ElementID              string  `json:"elementId"`
	ElementName            string  `json:"elementName"`
	Type                   string  `json:"type"`
	State                  string  `json:"state"`
	HasIncident            bool    `json:"hasIncident"`
	TenantID               string  `json:"tenantId"`
	ElementInstanceKey     string  `json:"elementInstanceKey"`
	ProcessInstanceKey     string  `json:"processInstanceKey"`
	RootProcessInstanceKey *string `json:"rootProcessInstanceKey"`
	ProcessDefinitionKey   string  `json:"processDefinitionKey"`
	IncidentKey            *string `json:"incidentKey"`
}

// VariableResult is one variable (search); Value is its JSON text.
type VariableResult struct {
	Name                   string  `json:"name"`
	TenantID               string  `json:"tenantId"`
	VariableKey            string  `json:"variableKey"`
	ScopeKey               string  `json:"scopeKey"`
	ProcessInstanceKey     string  `json:"processInstanceKey"`
	RootProcessInstanceKey *string `json:"rootProcessInstanceKey"`
	Value                  string  `json:"value"`
	IsTruncated            bool    `json:"isTruncated"`
}

// SetVariableRequest is the body of PUT
// /v2/element-instances/{key}/variables.
type SetVariableRequest struct {
	Variables map[string]any `json:"variables"`
	Local     bool           `json:"local"`
}

// JobActivationRequest is the body of POST /v2/jobs/activation. Timeout
// and RequestTimeout are milliseconds.
type JobActivationRequest struct {
	Type              string   `json:"type"`
	Worker            string   `json:"worker"`
	Timeout           int64    `json:"timeout"`
	MaxJobsToActivate int      `json:"maxJobsToActivate"`
	FetchVariable     []string `json:"fetchVariable"`
	RequestTimeout    int64    `json:"requestTimeout"`
	TenantIDs         []string `json:"tenantIds"`
}

// JobActivationResult answers POST /v2/jobs/activation.
type JobActivationResult struct {
	Jobs []ActivatedJobResult `json:"jobs"`
}

// ActivatedJobResult is one activated job; Deadline is Unix milliseconds.
type ActivatedJobResult struct {
	Type                     string           `json:"type"`
	ProcessDefinitionID      string           `json:"processDefinitionId"`
	ProcessDefinitionVersion int              `json:"processDefinitionVersion"`
	ElementID                string           `json:"elementId"`
	CustomHeaders            map[string]any   `json:"customHeaders"`
	Worker                   string           `json:"worker"`
	Retries                  int              `json:"retries"`
	Deadline                 int64            `json:"deadline"`
	Variables                map[string]any   `json:"variables"`
	TenantID                 string           `json:"tenantId"`
	JobKey                   string           `json:"jobKey"`
	ProcessInstanceKey       string           `json:"processInstanceKey"`
	ProcessDefinitionKey     string           `json:"processDefinitionKey"`
	ElementInstanceKey       string           `json:"elementInstanceKey"`
	Kind                     string           `json:"kind"`
	ListenerEventType        string           `json:"listenerEventType"`
	UserTask                 *json.RawMessage `json:"userTask"`
	Tags                     []string         `json:"tags"`
	RootProcessInstanceKey   *string          `json:"rootProcessInstanceKey"`
}

// JobSearchResult is one job (search).
type JobSearchResult struct {
	CustomHeaders            map[string]string `json:"customHeaders"`
	Deadline                 *string           `json:"deadline"`
	DeniedReason             *string           `json:"deniedReason"`
	ElementID                *string           `json:"elementId"`
	ElementInstanceKey       string            `json:"elementInstanceKey"`
	EndTime                  *string           `json:"endTime"`
	ErrorCode                *string           `json:"errorCode"`
	ErrorMessage             *string           `json:"errorMessage"`
	HasFailedWithRetriesLeft bool              `json:"hasFailedWithRetriesLeft"`
	IsDenied                 *bool             `json:"isDenied"`
	JobKey                   string            `json:"jobKey"`
	Kind                     string            `json:"kind"`
	ListenerEventType        string            `json:"listenerEventType"`
	ProcessDefinitionID      string            `json:"processDefinitionId"`
	ProcessDefinitionKey     string            `json:"processDefinitionKey"`
	ProcessInstanceKey       string            `json:"processInstanceKey"`
	RootProcessInstanceKey   *string           `json:"rootProcessInstanceKey"`
	Retries                  int               `json:"retries"`
	State                    string            `json:"state"`
	TenantID                 string            `json:"tenantId"`
	Type                     string            `json:"type"`
	Worker                   string            `json:"worker"`
	CreationTime             *string           `json:"creationTime"`
	LastUpdateTime           *string           `json:"lastUpdateTime"`
}

// JobCompletionRequest is the body of POST /v2/jobs/{key}/completion.
type JobCompletionRequest struct {
	Variables map[string]any  `json:"variables"`
	Result    json.RawMessage `json:"result"`
}

// JobFailRequest is the body of POST /v2/jobs/{key}/failure;
// RetryBackOff is milliseconds.
type JobFailRequest struct {
	Retries      int            `json:"retries"`
	ErrorMessage string         `json:"errorMessage"`
	RetryBackOff int64          `json:"retryBackOff"`
	Variables    map[string]any `json:"variables"`
}

// JobErrorRequest is the body of POST /v2/jobs/{key}/error.
type JobErrorRequest struct {
	ErrorCode    string         `json:"errorCode"`
	ErrorMessage *string        `json:"errorMessage"`
	Variables    map[string]any `json:"variables"`
}

// JobUpdateRequest is the body of PATCH /v2/jobs/{key}.
type JobUpdateRequest struct {
	Changeset struct {
		Retries *int   `json:"retries"`
		Timeout *int64 `json:"timeout"`
	} `json:"changeset"`
}

// MessagePublicationRequest is the body of POST /v2/messages/publication;
// TimeToLive is milliseconds.
type MessagePublicationRequest struct {
	Name           string         `json:"name"`
	CorrelationKey string         `json:"correlationKey"`
	TimeToLive     int64          `json:"timeToLive"`
	MessageID      string         `json:"messageId"`
	Variables      map[string]any `json:"variables"`
	TenantID       string         `json:"tenantId"`
}

// MessagePublicationResult answers POST /v2/messages/publication.
type MessagePublicationResult struct {
	TenantID   string `json:"tenantId"`
	MessageKey string `json:"messageKey"`
}

// MessageCorrelationResult answers POST /v2/messages/correlation.
type MessageCorrelationResult struct {
	TenantID           string `json:"tenantId"`
	MessageKey         string `json:"messageKey"`
	ProcessInstanceKey string `json:"processInstanceKey"`
}

// SignalBroadcastRequest is the body of POST /v2/signals/broadcast.
type SignalBroadcastRequest struct {
	SignalName string         `json:"signalName"`
	Variables  map[string]any `json:"variables"`
	TenantID   string         `json:"tenantId"`
}

// SignalBroadcastResult answers POST /v2/signals/broadcast.
type SignalBroadcastResult struct {
	TenantID  string `json:"tenantId"`
	SignalKey string `json:"signalKey"`
}

// IncidentResult is one incident (GET and search).
type IncidentResult struct {
	ProcessDefinitionID    string  `json:"processDefinitionId"`
	ErrorType              string  `json:"errorType"`
	ErrorMessage           string  `json:"errorMessage"`
	ElementID              string  `json:"elementId"`
	CreationTime           string  `json:"creationTime"`
	State                  string  `json:"state"`
	TenantID               string  `json:"tenantId"`
	IncidentKey            string  `json:"incidentKey"`
	ProcessDefinitionKey   string  `json:"processDefinitionKey"`
	ProcessInstanceKey     string  `json:"processInstanceKey"`
	RootProcessInstanceKey *string `json:"rootProcessInstanceKey"`
	ElementInstanceKey     string  `json:"elementInstanceKey"`
	JobKey                 *string `json:"jobKey"`
}

// ProcessDefinitionResult is one process definition (GET and search).
type ProcessDefinitionResult struct {
	Name                 *string `json:"name"`
	ResourceName         string  `json:"resourceName"`
	Version              int     `json:"version"`
	VersionTag           *string `json:"versionTag"`
	ProcessDefinitionID  string  `json:"processDefinitionId"`
	TenantID             string  `json:"tenantId"`
	ProcessDefinitionKey string  `json:"processDefinitionKey"`
	HasStartForm         bool    `json:"hasStartForm"`
	State                string  `json:"state"`
}

// UserTaskResult is one user task (GET and search).
type UserTaskResult struct {
	Name                     *string           `json:"name"`
	State                    string            `json:"state"`
	Assignee                 *string           `json:"assignee"`
	ElementID                string            `json:"elementId"`
	CandidateGroups          []string          `json:"candidateGroups"`
	CandidateUsers           []string          `json:"candidateUsers"`
	ProcessDefinitionID      string            `json:"processDefinitionId"`
	CreationDate             string            `json:"creationDate"`
	CompletionDate           *string           `json:"completionDate"`
	FollowUpDate             *string           `json:"followUpDate"`
	DueDate                  *string           `json:"dueDate"`
	TenantID                 string            `json:"tenantId"`
	ExternalFormReference    *string           `json:"externalFormReference"`
	ProcessDefinitionVersion int               `json:"processDefinitionVersion"`
	CustomHeaders            map[string]string `json:"customHeaders"`
	Priority                 int               `json:"priority"`
	UserTaskKey              string            `json:"userTaskKey"`
	ElementInstanceKey       string            `json:"elementInstanceKey"`
	ProcessName              *string           `json:"processName"`
	ProcessDefinitionKey     string            `json:"processDefinitionKey"`
	ProcessInstanceKey       string            `json:"processInstanceKey"`
	RootProcessInstanceKey   *string           `json:"rootProcessInstanceKey"`
	FormKey                  *string           `json:"formKey"`
	Tags                     []string          `json:"tags"`
}

// UserTaskAssignmentRequest is the body of POST
// /v2/user-tasks/{key}/assignment.
type UserTaskAssignmentRequest struct {
	Assignee      string `json:"assignee"`
	AllowOverride *bool  `json:"allowOverride"`
	Action        string `json:"action"`
}

// UserTaskCompletionRequest is the body of POST
// /v2/user-tasks/{key}/completion.
type UserTaskCompletionRequest struct {
	Variables map[string]any `json:"variables"`
	Action    string         `json:"action"`
}

// ClockPinRequest is the body of PUT /v2/clock: Unix milliseconds.
type ClockPinRequest struct {
	Timestamp *int64 `json:"timestamp"`
}

// ExpressionEvaluationRequest is the body of POST
// /v2/expression/evaluation.
type ExpressionEvaluationRequest struct {
	Expression string         `json:"expression"`
	TenantID   string         `json:"tenantId"`
	Variables  map[string]any `json:"variables"`
}

// ExpressionEvaluationResult answers POST /v2/expression/evaluation.
type ExpressionEvaluationResult struct {
	Expression string           `json:"expression"`
	Result     any              `json:"result"`
	Warnings   []map[string]any `json:"warnings"`
}

// SearchQuery is the body of every POST /v2/.../search: a filter object
// of the resource's fields (each an exact value or an object of
// operators: $eq, $neq, $in, $notIn, $exists, $like, $gt, $gte, $lt,
// $lte), a sort list and a page (from/limit, or after/before a cursor).
type SearchQuery struct {
	Filter map[string]json.RawMessage `json:"filter"`
	Sort   []SearchSort               `json:"sort"`
	Page   *SearchPage                `json:"page"`
}

// SearchSort is one sort criterion; Order is ASC (default) or DESC.
type SearchSort struct {
	Field string `json:"field"`
	Order string `json:"order"`
}

// SearchPage is a search's page request.
type SearchPage struct {
	From   *int   `json:"from"`
	Limit  *int   `json:"limit"`
	After  string `json:"after"`
	Before string `json:"before"`
}

// SearchQueryResult answers a search.
type SearchQueryResult struct {
	Items []any          `json:"items"`
	Page  SearchPageInfo `json:"page"`
}

// SearchPageInfo describes the page returned.
type SearchPageInfo struct {
	TotalItems        int     `json:"totalItems"`
	HasMoreTotalItems bool    `json:"hasMoreTotalItems"`
	StartCursor       *string `json:"startCursor"`
	EndCursor         *string `json:"endCursor"`
}
