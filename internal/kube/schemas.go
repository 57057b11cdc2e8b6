package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// HasField says whether the schema the cluster publishes for kind at gv (its CRD's, from the API
// server's OpenAPI v3 document of the group version, which every authenticated user may read)
// has the field at path, "*" stepping into a list's items. A schema that keeps unknown fields
// (x-kubernetes-preserve-unknown-fields) has every field below it. The document is read once per
// process, and only by a plan that writes such a field.
func (c *Client) HasField(ctx context.Context, gv schema.GroupVersion, kind string, path []string) (bool, error) {
	if _, err := c.dynamic(); err != nil {
		return false, err
	}
	doc, err := c.schemas.get(ctx, gv, func(ctx context.Context) (*spec3.OpenAPI, error) {
		tflog.Debug(ctx, "GET the OpenAPI v3 schemas of "+gv.String())
		doc := &spec3.OpenAPI{}
		err := retry(ctx, "GET /openapi/v3/apis/"+gv.String(), func() error {
			raw, err := c.raw.Get().AbsPath("/openapi/v3/apis", gv.Group, gv.Version).DoRaw(ctx)
			if err != nil {
				return err
			}
			return json.Unmarshal(raw, doc)
		})
		if err != nil {
			return nil, fmt.Errorf("reading the schemas the cluster serves at %s: %w", gv, err)
		}
		return doc, nil
	})
	if err != nil {
		return false, err
	}
	root := kindSchema(doc, gv, kind)
	if root == nil {
		return false, fmt.Errorf("the cluster's OpenAPI document of %s has no schema of %s", gv, kind)
	}
	return schemaHas(doc, root, path), nil
}

// kindSchema is the schema of kind at gv in doc, found by its group-version-kind extension.
func kindSchema(doc *spec3.OpenAPI, gv schema.GroupVersion, kind string) *spec.Schema {
	if doc.Components == nil {
		return nil
	}
	for _, s := range doc.Components.Schemas {
		gvks, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			if m["group"] == gv.Group && m["version"] == gv.Version && m["kind"] == kind {
				return s
			}
		}
	}
	return nil
}

// schemaHas walks path down s, through references and single-schema allOf wrappers.
func schemaHas(doc *spec3.OpenAPI, s *spec.Schema, path []string) bool {
	for depth := 0; s != nil && depth < 8; depth++ {
		switch {
		case s.Ref.String() != "":
			s = doc.Components.Schemas[strings.TrimPrefix(s.Ref.String(), "#/components/schemas/")]
			continue
		case len(s.Properties) == 0 && s.Items == nil && len(s.AllOf) == 1:
			s = &s.AllOf[0]
			continue
		}
		break
	}
	if s == nil {
		return false
	}
	if len(path) == 0 {
		return true
	}
	if keep, _ := s.Extensions["x-kubernetes-preserve-unknown-fields"].(bool); keep && len(s.Properties) == 0 {
		return true
	}
	if path[0] == "*" {
		return s.Items != nil && s.Items.Schema != nil && schemaHas(doc, s.Items.Schema, path[1:])
	}
	p, ok := s.Properties[path[0]]
	return ok && schemaHas(doc, &p, path[1:])
}
