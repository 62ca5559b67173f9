package rest

import (
	"encoding/base64"
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
// all or nothing; see docs/camunda-rest.md). Decisions (.dmn) and forms
// (.form) are refused: flowtrack has no decision engine or forms yet.
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
		case ".bpmn", ".xml":
		case ".dmn", ".form":
			return 0, nil, badRequest("resource %q: flowtrack deploys BPMN processes only, not %s files", fh.Filename, ext)
		default:
			return 0, nil, badRequest("resource %q: expected a .bpmn file", fh.Filename)
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
	}
	return http.StatusOK, res, nil
}
