package rest

import (
	"encoding/json"
	"net/http"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

func definitionResult(d engine.Definition) ProcessDefinitionResult {
	return ProcessDefinitionResult{Name: optString(d.Name), ResourceName: d.Resource, Version: d.Version,
		ProcessDefinitionID: d.ProcessID, TenantID: defaultTenant, ProcessDefinitionKey: key(d.Key), State: "ACTIVE"}
}

func (a *API) searchDefinitions(r *http.Request) (int, any, error) {
	var q SearchQuery
	if err := decodeBody(r, &q); err != nil {
		return 0, nil, err
	}
	defs, err := a.definitions(r.Context(), "")
	if err != nil {
		return 0, nil, err
	}
	items := make([]ProcessDefinitionResult, 0, len(defs))
	latest := map[string]bool{}
	for _, d := range defs {
		items = append(items, definitionResult(d))
		if d.Latest {
			latest[key(d.Key)] = true
		}
	}
	s, err := newSearchable(items)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.run(q, searchOptions{defaultSort: "processDefinitionKey",
		custom: map[string]func(map[string]any, json.RawMessage) (bool, error){
			"isLatestVersion": func(item map[string]any, v json.RawMessage) (bool, error) {
				k, _ := item["processDefinitionKey"].(string)
				return string(v) == "true" == latest[k], nil
			},
		}})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

func (a *API) definitionByKey(r *http.Request) (engine.Definition, error) {
	k, err := pathKey(r, "processDefinitionKey")
	if err != nil {
		return engine.Definition{}, err
	}
	return a.definitionOf(r.Context(), k, "", 0)
}

func (a *API) getDefinition(r *http.Request) (int, any, error) {
	d, err := a.definitionByKey(r)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, definitionResult(d), nil
}

func (a *API) getDefinitionXML(r *http.Request) (int, any, error) {
	d, err := a.definitionByKey(r)
	if err != nil {
		return 0, nil, err
	}
	var res wire.DefinitionXMLResult
	if err := a.call(r.Context(), "definition_xml", wire.DefinitionXMLRequest{ProcessID: d.ProcessID, Version: d.Version}, &res); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, rawBody{contentType: "text/xml", data: []byte(res.XML)}, nil
}
