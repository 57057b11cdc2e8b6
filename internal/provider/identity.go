package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Resource identity (Terraform 1.12+): what names each object in the cluster, so that `import`
// blocks can name it by `identity = { ... }` and Terraform can check that a refresh still
// reads the same object. Every resource sets it on create, read, update and import from the
// attributes that name the object; a state written before identity existed gets it on its
// next refresh.

// identityAttributes are the identity schema's attributes, each required to import.
func identityAttributes(descriptions map[string]string) identityschema.Schema {
	attrs := map[string]identityschema.Attribute{}
	for name, description := range descriptions {
		attrs[name] = identityschema.StringAttribute{RequiredForImport: true, Description: description}
	}
	return identityschema.Schema{Attributes: attrs}
}

// namespacedIdentity is the identity of a namespaced object: its namespace and name.
func namespacedIdentity(kind string) identityschema.Schema {
	return identityAttributes(map[string]string{"namespace": "Namespace of the " + kind + ".", "name": "Name of the " + kind + "."})
}

// setIdentity sets the identity's attributes; nil identity (a Terraform without identity
// support, or a resource without it) is left alone.
func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, values map[string]string, diags *diag.Diagnostics) {
	if identity == nil {
		return
	}
	for name, v := range values {
		diags.Append(identity.SetAttribute(ctx, path.Root(name), v)...)
	}
}

// importIdentity reads an import's identity into values (by name): for `import` blocks with
// `identity = { ... }` instead of `id`. A name ending in "?" may be missing.
func importIdentity(ctx context.Context, req resource.ImportStateRequest, names ...string) (map[string]string, error) {
	if req.Identity == nil {
		return nil, fmt.Errorf("neither an import ID nor an identity was given")
	}
	values := map[string]string{}
	for _, name := range names {
		name, optional := strings.CutSuffix(name, "?")
		var v types.String
		if diags := req.Identity.GetAttribute(ctx, path.Root(name), &v); diags.HasError() || v.ValueString() == "" {
			if optional && !diags.HasError() {
				continue
			}
			return nil, fmt.Errorf("the identity has no %s", name)
		}
		values[name] = v.ValueString()
	}
	return values, nil
}
