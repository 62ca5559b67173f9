package model

// DMN definitions: the decision requirements graph of one DMN model
// (decisions, input data, business knowledge models, decision services,
// item definitions and imports) and the boxed expressions of its decision
// logic, as read from DMN XML (engine/internal/dmnxml) and evaluated by
// engine/internal/decision. Like processes, they are format- and
// execution-free.

// DMNDefinitions is one DMN model (a <definitions> element).
type DMNDefinitions struct {
	// ID, Name and Namespace are the definitions' attributes; Namespace
	// is how other models import this one.
	ID, Name, Namespace string
	// File is where the model was read from, for errors.
	File            string
	Imports         []*DMNImport
	ItemDefinitions []*ItemDefinition
	Decisions       []*Decision
	InputData       []*InputData
	BKMs            []*BKM
	Services        []*DecisionService
}

// DMNImport is an <import> of another DMN model, whose elements are
// named Name.element in this one.
type DMNImport struct {
	Name, Namespace, LocationURI, ImportType string
	Pos                                      Position
}

// ItemDefinition is a named DMN type: a reference to another type
// (TypeRef), or a structure of components, optionally a collection of
// it and with allowed values (unary tests).
type ItemDefinition struct {
	Name          string
	TypeRef       string
	IsCollection  bool
	AllowedValues string
	// Components are a structure's entries (nested item definitions).
	Components []*ItemDefinition
	// Function is set for a function type (functionItem): its
	// parameters and result type.
	Function *FunctionItem
	Pos      Position
}

// FunctionItem is the signature of a function type.
type FunctionItem struct {
	Params     []InformationItem
	OutputType string
}

// InformationItem is a named, typed variable: a decision's result, a
// parameter, a context entry, a relation's column.
type InformationItem struct {
	Name, TypeRef string
}

// RequirementKind says what a requirement points to.
type RequirementKind uint8

const (
	// RequiresDecision is an informationRequirement on a decision.
	RequiresDecision RequirementKind = iota
	// RequiresInput is an informationRequirement on input data.
	RequiresInput
	// RequiresKnowledge is a knowledgeRequirement on a business
	// knowledge model or decision service.
	RequiresKnowledge
)

// Requirement is an edge of the decision requirements graph.
type Requirement struct {
	Kind RequirementKind
	// Href is the required element: "#id", or "namespace#id" for an
	// element of an imported model.
	Href string
	Pos  Position
}

// Decision is a <decision>: its result variable, what it requires and
// its decision logic (nil when the model has none).
type Decision struct {
	ID, Name string
	// VersionTag is Camunda 8's zeebe:versionTag of the decision, which
	// a business rule task may bind to.
	VersionTag string
	Variable   InformationItem
	Requires   []Requirement
	Logic      BoxedExpression
	Pos        Position
}

// InputData is an <inputData>: a value given to the evaluation.
type InputData struct {
	ID, Name string
	Variable InformationItem
	Pos      Position
}

// BKM is a business knowledge model: a function (Logic) other decisions
// invoke, which may require other BKMs.
type BKM struct {
	ID, Name string
	Variable InformationItem
	Requires []Requirement
	Logic    *FunctionDefinition
	Pos      Position
}

// DecisionService is a <decisionService>: the output decisions evaluated
// from the input decisions and input data given as its parameters (in
// that order), invocable as a function.
type DecisionService struct {
	ID, Name       string
	Variable       InformationItem
	Outputs        []string
	Encapsulated   []string
	InputDecisions []string
	Inputs         []string
	Pos            Position
}

// BoxedExpression is a DMN decision logic: *LiteralExpression,
// *DecisionTable, *ContextExpression, *Invocation, *ListExpression,
// *Relation, *FunctionDefinition, *Conditional, *FilterExpression or
// *Iterator.
type BoxedExpression interface {
	// Where returns the expression's position and its declared type
	// (or "").
	Where() (Position, string)
}

// Boxed holds what every boxed expression has.
type Boxed struct {
	ID      string
	TypeRef string
	Pos     Position
}

// Where returns the position and declared type.
func (b *Boxed) Where() (Position, string) { return b.Pos, b.TypeRef }

// LiteralExpression is FEEL text.
type LiteralExpression struct {
	Boxed
	Text     string
	Language string
}

// HitPolicy is a decision table's hit policy: "UNIQUE", "ANY",
// "PRIORITY", "FIRST", "RULE ORDER", "OUTPUT ORDER" or "COLLECT".
type HitPolicy string

// DecisionTable is a <decisionTable>.
type DecisionTable struct {
	Boxed
	HitPolicy HitPolicy
	// Aggregation is a COLLECT table's "SUM", "MIN", "MAX", "COUNT" or "".
	Aggregation string
	Inputs      []DecisionInput
	Outputs     []DecisionOutput
	Rules       []DecisionRule
	// OutputLabel names the table's result.
	OutputLabel string
}

// DecisionInput is an input clause: an expression and its allowed
// input values (unary tests, "" when not constrained).
type DecisionInput struct {
	ID, Label   string
	Expression  LiteralExpression
	InputValues string
	Pos         Position
}

// DecisionOutput is an output clause: its name (for several outputs),
// type, allowed output values (in priority order) and default output
// entry (FEEL text, "" for none).
type DecisionOutput struct {
	ID, Name, Label string
	TypeRef         string
	OutputValues    string
	Default         string
	Pos             Position
}

// DecisionRule is a rule: one input entry (unary tests) per input and one
// output entry (FEEL) per output.
type DecisionRule struct {
	ID      string
	Inputs  []string
	Outputs []string
	Pos     Position
}

// ContextExpression is a boxed context. An entry without a variable is
// the context's result.
type ContextExpression struct {
	Boxed
	Entries []ContextEntry
}

// ContextEntry is one entry of a boxed context; Variable is nil for the
// final result entry.
type ContextEntry struct {
	Variable *InformationItem
	Value    BoxedExpression
}

// Invocation calls a function (a BKM, a decision service, a function in
// scope) with arguments bound to its parameters by name.
type Invocation struct {
	Boxed
	// Callee names the function (FEEL text).
	Callee   BoxedExpression
	Bindings []Binding
}

// Binding binds one parameter of an invocation; a nil Value is null.
type Binding struct {
	Param InformationItem
	Value BoxedExpression
}

// ListExpression is a boxed list.
type ListExpression struct {
	Boxed
	Items []BoxedExpression
}

// Relation is a boxed relation: a list of contexts with the same
// columns.
type Relation struct {
	Boxed
	Columns []InformationItem
	Rows    [][]BoxedExpression
}

// FunctionDefinition is a boxed function (a BKM's logic, or a value).
// Kind is "FEEL" (default), "Java" or "PMML".
type FunctionDefinition struct {
	Boxed
	Kind   string
	Params []InformationItem
	Body   BoxedExpression
}

// Conditional is the DMN 1.5 boxed conditional.
type Conditional struct {
	Boxed
	If, Then, Else BoxedExpression
}

// FilterExpression is the DMN 1.5 boxed filter: the items of In for
// which Match holds ("item" is the item).
type FilterExpression struct {
	Boxed
	In, Match BoxedExpression
}

// Iterator is the DMN 1.5 boxed for, some or every.
type Iterator struct {
	Boxed
	// Kind is "for", "some" or "every".
	Kind string
	// Variable is the iteration variable's name.
	Variable string
	In       BoxedExpression
	// Body is for's return or the quantifiers' satisfies.
	Body BoxedExpression
}

// DecisionCall is what a business rule task says about the decision the
// engine evaluates for it: Camunda 8's zeebe:calledDecision or Camunda
// 7's camunda:decisionRef.
type DecisionCall struct {
	// DecisionID is the called decision's id.
	DecisionID string
	// ResultVariable receives the result.
	ResultVariable string
	// Binding picks the decision's version: "latest" (default),
	// "deployment" (the version deployed with the process), "versionTag"
	// (the version tagged VersionTag) or, Camunda 7, "version" (Version).
	Binding    string
	VersionTag string
	Version    int
	// MapResult is Camunda 7's camunda:mapDecisionResult: "singleEntry",
	// "singleResult", "collectEntries" or "resultList" (its default). It
	// is empty for Camunda 8, which sets the decision's output as it is.
	MapResult string
	// Camunda7 is set for camunda:decisionRef.
	Camunda7 bool
}
