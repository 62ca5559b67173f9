package rest

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// deploy serves POST /v2/deployments: a multipart form of one or more
// "resources" files. Each .bpmn (or .xml) file is deployed with the deploy
// operation, in order; the first one rejected fails the request with the
// engine's problems, those before it staying deployed (Camunda deploys
// all or nothing; see docs/camunda-rest.md). A .dmn file deploys its
// decisions the same way (the engine tells DMN from BPMN by content);
// forms (.form) are refused: flowtrack has no forms yet.
func (a *API) deploy(r *http.Request) (int, any, error) {
	if err := r.ParseMultipartForm(MaxBody); err != nil {
		return 0, nil, badRequest("the deployment is not a multipart/form-data request: %v", err)
	}
	defer r.MultipartForm.RemoveAll()
	files := r.MultipartForm.File["resources"]
	if len(files) == 0 {
		return 0, nil, badRequest("the deployment has no resources (form field \"resources\")")
	}
	type resource struct {
		name string
		data []byte
	}
	var resources []resource
	for _, fh := range files {
		switch ext := strings.ToLower(path.Ext(fh.Filename)); ext {
		case ".bpmn", ".xml", ".dmn":
		case ".form":
			return 0, nil, badRequest("resource %q: flowtrack deploys BPMN processes and DMN decisions, not forms", fh.Filename)
		default:
			return 0, nil, badRequest("resource %q: expected a .bpmn or .dmn file", fh.Filename)
		}
		f, err := fh.Open()
		if err != nil {
			return 0, nil, badRequest("resource %q: %v", fh.Filename, err)
		}
		data, err := io.ReadAll(f)
		_ = f.Close()
		if err != nil {
			return 0, nil, badRequest("resource %q: %v", fh.Filename, err)
		}
		resources = append(resources, resource{fh.Filename, data})
	}
	res := DeploymentResult{DeploymentKey: key(a.keys.next()), TenantID: defaultTenant, Deployments: []DeploymentMetadataResult{}}
	for _, rs := range resources {
		doc := base64.StdEncoding.EncodeToString(rs.data)
		var out wire.DeployResult
		if err := a.call(r.Context(), "deploy", wire.DeployRequest{Name: rs.name, XMLBase64: &doc}, &out); err != nil {
			return 0, nil, fmt.Errorf("resource %q: %w", rs.name, err)
		}
		for _, p := range out.Processes {
			res.Deployments = append(res.Deployments, DeploymentMetadataResult{ProcessDefinition: &DeploymentProcessResult{
				ProcessDefinitionID: p.ID, ProcessDefinitionVersion: p.Version, ResourceName: rs.name,
				TenantID: defaultTenant, ProcessDefinitionKey: key(p.Key)}})
		}
		if len(out.Decisions) > 0 {
			drg := definitionsID(rs.data)
			drgKey := key(a.keys.next())
			for _, d := range out.Decisions {
				res.Deployments = append(res.Deployments, DeploymentMetadataResult{DecisionDefinition: &DeploymentDecisionResult{
					DecisionDefinitionID: d.ID, Version: d.Version, Name: d.Name, TenantID: defaultTenant,
					DecisionRequirementsID: drg, DecisionDefinitionKey: key(a.keys.next()), DecisionRequirementsKey: drgKey}})
			}
		}
	}
	return http.StatusOK, res, nil
}

// definitionsID is the id of a DMN model's definitions element, its
// decision requirements graph's id in Camunda's terms; "" when the
// document has none.
func definitionsID(doc []byte) string {
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, at := range se.Attr {
				if at.Name.Local == "id" && at.Name.Space == "" {
					return at.Value
				}
			}
			return ""
		}
	}
}
