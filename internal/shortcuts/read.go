package shortcuts

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A refresh of N jobs is N ReadResource calls, and around each job's own Read the framework
// walks the whole state three more times: it looks for attributes whose types define semantic
// equality, for write-only attributes to null, and for null blocks to make empty lists, each
// step of each walk finding the attribute's schema again from the root (copying every
// attribute map on the way) and building its type anew. In a plan of 100 jobs with refresh that
// was most of the provider's CPU. A job's schema has no semantic equality, and its write-only
// attributes are top-level ones that its Read leaves null (a state that holds one is left to the
// framework), so the first two walks change nothing; the third is done here over the blocks
// alone. directRead answers such a refresh with the job's Read and nothing more, where the
// framework's answer is certain to be the same; anything else goes to the framework.

// A readShape is what a job's refresh is answered with apart from the framework.
type readShape struct {
	newResource func() resource.Resource
	schema      schema.Schema
	state       tftypes.Type
	identity    identityschema.Schema
	identityTyp tftypes.Type
	// blocks are the schema's list blocks, each with the blocks of its objects: a null one is
	// answered as an empty list, as the framework answers it.
	blocks map[string]*blockShape
	// writeOnly are the schema's write-only attributes, all top-level (validate's walkable holds
	// that): a state in which one is not null is answered by the framework, which nulls it.
	writeOnly []string
}

// blockShape is a block and the blocks inside its objects.
type blockShape struct {
	list   bool // a list block, null answered as empty; else a single block
	inside map[string]*blockShape
}

// readShapeOf is the read shape of r, a job resource whose plan shape is known; err says what of
// its schema keeps its refreshes with the framework.
func readShapeOf(ctx context.Context, newResource func() resource.Resource, sch schema.Schema) (*readShape, error) {
	r := newResource()
	ir, ok := r.(resource.ResourceWithIdentity)
	if !ok {
		return nil, fmt.Errorf("no identity")
	}
	if at, ok := semanticEquality(ctx, sch.Attributes, sch.Blocks, ""); ok {
		return nil, fmt.Errorf("%s: its type defines semantic equality", at)
	}
	var ids resource.IdentitySchemaResponse
	ir.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &ids)
	if ids.Diagnostics.HasError() {
		return nil, fmt.Errorf("identity schema: %v", ids.Diagnostics)
	}
	blocks, err := blockShapes(sch.Blocks)
	if err != nil {
		return nil, err
	}
	return &readShape{
		newResource: newResource, schema: sch, state: sch.Type().TerraformType(ctx),
		identity: ids.IdentitySchema, identityTyp: ids.IdentitySchema.Type().TerraformType(ctx),
		blocks: blocks, writeOnly: writeOnlyOf(sch),
	}, nil
}

// read answers req as the framework would, or says it cannot (ok false): data is what the
// provider's Configure handed the resources. Only a refresh with no private state (the first
// read after an import has some) whose Read reports no error and no diagnostic at a path, and
// keeps the identity, is answered here.
func (s *readShape) read(ctx context.Context, data any, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, bool) {
	if data == nil || len(req.Private) > 0 || req.CurrentState == nil {
		return nil, false
	}
	state, err := req.CurrentState.Unmarshal(s.state)
	if err != nil {
		return nil, false
	}
	state = nullEmptyBlocks(state, s.blocks)
	identity := tftypes.NewValue(s.identityTyp, nil)
	if req.CurrentIdentity != nil && req.CurrentIdentity.IdentityData != nil {
		if identity, err = req.CurrentIdentity.IdentityData.Unmarshal(s.identityTyp); err != nil {
			return nil, false
		}
	}
	r, ok := configured(ctx, s.newResource(), data)
	if !ok {
		return nil, false
	}
	readReq := resource.ReadRequest{
		State:    tfsdk.State{Schema: s.schema, Raw: state},
		Identity: &tfsdk.ResourceIdentity{Schema: s.identity, Raw: identity},
	}
	if req.ClientCapabilities != nil {
		readReq.ClientCapabilities.DeferralAllowed = req.ClientCapabilities.DeferralAllowed
	}
	readResp := resource.ReadResponse{
		State:    tfsdk.State{Schema: s.schema, Raw: state},
		Identity: &tfsdk.ResourceIdentity{Schema: s.identity, Raw: identity},
	}
	r.Read(ctx, readReq, &readResp)
	if readResp.Deferred != nil || readResp.Identity == nil || readResp.Identity.Raw.IsFullyNull() ||
		(!identity.IsFullyNull() && !identity.Equal(readResp.Identity.Raw)) {
		return nil, false
	}
	diags, ok := protoDiagnostics(readResp.Diagnostics)
	if !ok || s.holdsWriteOnly(readResp.State.Raw) {
		return nil, false
	}
	newState, err := tfprotov6.NewDynamicValue(s.state, emptyNullBlocks(readResp.State.Raw, s.blocks))
	if err != nil {
		return nil, false
	}
	newIdentity, err := tfprotov6.NewDynamicValue(s.identityTyp, readResp.Identity.Raw)
	if err != nil {
		return nil, false
	}
	return &tfprotov6.ReadResourceResponse{
		NewState:    &newState,
		NewIdentity: &tfprotov6.ResourceIdentityData{IdentityData: &newIdentity},
		Diagnostics: diags,
	}, true
}

// upgrade answers the decoding of a stored state of the schema's own version as the framework
// does (any other version goes to the framework's upgraders): the state as stored, with the
// attributes it lacks null and its null list blocks empty.
func (s *readShape) upgrade(req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, bool) {
	if req.RawState == nil || req.Version != s.schema.Version {
		return nil, false
	}
	if req.RawState.JSON == nil {
		return nil, false // a state written by Terraform 0.11 (Flatmap) goes to the framework
	}
	v, err := stateFromJSON(req.RawState.JSON, s.state)
	if err != nil || s.holdsWriteOnly(v) {
		return nil, false
	}
	upgraded, err := tfprotov6.NewDynamicValue(s.state, emptyNullBlocks(v, s.blocks))
	if err != nil {
		return nil, false
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &upgraded}, true
}

// holdsWriteOnly says whether the state v holds a value of a write-only attribute, which the
// framework would null.
func (s *readShape) holdsWriteOnly(v tftypes.Value) bool { return holdsWriteOnly(v, s.writeOnly) }

// writeOnlyOf are the names of the write-only attributes of sch (top-level; see walkable).
func writeOnlyOf(sch schema.Schema) []string {
	var names []string
	for name, a := range sch.Attributes {
		if a.IsWriteOnly() {
			names = append(names, name)
		}
	}
	return names
}

// holdsWriteOnly says whether the object v holds a value of one of the write-only attributes.
func holdsWriteOnly(v tftypes.Value, writeOnly []string) bool {
	if len(writeOnly) == 0 || !v.IsKnown() || v.IsNull() {
		return false
	}
	var vals map[string]tftypes.Value
	if err := v.As(&vals); err != nil {
		return true
	}
	for _, name := range writeOnly {
		if a, ok := vals[name]; ok && !a.IsNull() {
			return true
		}
	}
	return false
}

// configured is r configured with data, as the framework configures a resource before each
// call; ok is false when its Configure reports an error (the framework answers then).
func configured(ctx context.Context, r resource.Resource, data any) (resource.Resource, bool) {
	if c, ok := r.(resource.ResourceWithConfigure); ok {
		var resp resource.ConfigureResponse
		c.Configure(ctx, resource.ConfigureRequest{ProviderData: data}, &resp)
		return r, !resp.Diagnostics.HasError()
	}
	return r, true
}

// protoDiagnostics is diags as the framework sends them, when none is an error or is about an
// attribute (ok false: the framework answers those).
func protoDiagnostics(diags diag.Diagnostics) (out []*tfprotov6.Diagnostic, ok bool) {
	for _, d := range diags {
		if _, at := d.(diag.DiagnosticWithPath); at || d.Severity() != diag.SeverityWarning {
			return nil, false
		}
		out = append(out, &tfprotov6.Diagnostic{Severity: tfprotov6.DiagnosticSeverityWarning, Summary: d.Summary(), Detail: d.Detail()})
	}
	return out, true
}

// emptyNullBlocks is v (an object of blocks' schema) with each null list block an empty list,
// at any depth, as the framework sends a state.
func emptyNullBlocks(v tftypes.Value, blocks map[string]*blockShape) tftypes.Value {
	return withListBlocks(v, blocks, func(l tftypes.Value) tftypes.Value {
		if l.IsNull() {
			return tftypes.NewValue(l.Type(), []tftypes.Value{})
		}
		return l
	})
}

// nullEmptyBlocks is v (an object of blocks' schema) with each known, empty list block null, at
// any depth, as the framework reads a configuration, a plan or a state from Terraform.
func nullEmptyBlocks(v tftypes.Value, blocks map[string]*blockShape) tftypes.Value {
	return withListBlocks(v, blocks, func(l tftypes.Value) tftypes.Value {
		if elems := listElements(l); l.IsKnown() && !l.IsNull() && len(elems) == 0 {
			return tftypes.NewValue(l.Type(), nil)
		}
		return l
	})
}

// withListBlocks is v (an object of blocks' schema) with each known list block, at any depth,
// replaced by f of it, once the blocks inside its objects are.
func withListBlocks(v tftypes.Value, blocks map[string]*blockShape, f func(tftypes.Value) tftypes.Value) tftypes.Value {
	if len(blocks) == 0 || !v.IsKnown() || v.IsNull() {
		return v
	}
	var vals map[string]tftypes.Value
	if err := v.As(&vals); err != nil {
		return v
	}
	changed := false
	out := make(map[string]tftypes.Value, len(vals))
	for name, val := range vals {
		out[name] = val
		b := blocks[name]
		if b == nil || !val.IsKnown() {
			continue
		}
		nv := val
		switch {
		case b.list && !val.IsNull() && len(b.inside) > 0:
			elems := listElements(val)
			inner := make([]tftypes.Value, len(elems))
			for i, e := range elems {
				inner[i] = withListBlocks(e, b.inside, f)
			}
			nv = f(tftypes.NewValue(val.Type(), inner))
		case b.list:
			nv = f(val)
		default:
			nv = withListBlocks(val, b.inside, f)
		}
		if !nv.Equal(val) {
			out[name], changed = nv, true
		}
	}
	if !changed {
		return v
	}
	return tftypes.NewValue(v.Type(), out)
}

// blockShapes are the shapes of blocks; a set block, whose null the framework also makes empty,
// is not among the job schemas' and fails.
func blockShapes(blocks map[string]schema.Block) (map[string]*blockShape, error) {
	out := map[string]*blockShape{}
	for name, b := range blocks {
		var (
			shape = &blockShape{}
			err   error
		)
		switch b := b.(type) {
		case schema.ListNestedBlock:
			shape.list = true
			shape.inside, err = blockShapes(b.NestedObject.Blocks)
		case schema.SingleNestedBlock:
			shape.inside, err = blockShapes(b.Blocks)
		default:
			err = fmt.Errorf("%s: a %T is not walked", name, b)
		}
		if err != nil {
			return nil, err
		}
		out[name] = shape
	}
	return out, nil
}

// semanticEquality names the first attribute at prefix whose type (or a type inside it) defines
// semantic equality, which the framework's read would apply.
func semanticEquality(ctx context.Context, attrs map[string]schema.Attribute, blocks map[string]schema.Block, prefix string) (string, bool) {
	for name, a := range attrs {
		if hasSemanticEquality(ctx, a.GetType()) {
			return prefix + name, true
		}
	}
	for name, b := range blocks {
		if hasSemanticEquality(ctx, b.Type()) {
			return prefix + name, true
		}
	}
	return "", false
}

// hasSemanticEquality says whether values of t, or of a type inside it, define semantic
// equality.
func hasSemanticEquality(ctx context.Context, t attr.Type) bool {
	switch t.ValueType(ctx).(type) {
	case basetypes.BoolValuableWithSemanticEquals, basetypes.Float32ValuableWithSemanticEquals,
		basetypes.Float64ValuableWithSemanticEquals, basetypes.Int32ValuableWithSemanticEquals,
		basetypes.Int64ValuableWithSemanticEquals, basetypes.NumberValuableWithSemanticEquals,
		basetypes.StringValuableWithSemanticEquals, basetypes.ListValuableWithSemanticEquals,
		basetypes.MapValuableWithSemanticEquals, basetypes.SetValuableWithSemanticEquals,
		basetypes.ObjectValuableWithSemanticEquals, basetypes.DynamicValuableWithSemanticEquals:
		return true
	}
	switch t := t.(type) {
	case attr.TypeWithElementType:
		return hasSemanticEquality(ctx, t.ElementType())
	case attr.TypeWithAttributeTypes:
		for _, at := range t.AttributeTypes() {
			if hasSemanticEquality(ctx, at) {
				return true
			}
		}
	case attr.TypeWithElementTypes:
		for _, et := range t.ElementTypes() {
			if hasSemanticEquality(ctx, et) {
				return true
			}
		}
	}
	return false
}

// ReadTypes are the state and identity types of each resource type whose refreshes a server of
// p answers itself.
func ReadTypes(ctx context.Context, p provider.Provider) map[string]struct{ State, Identity tftypes.Type } {
	_, reads, _ := planShapes(ctx, p)
	out := map[string]struct{ State, Identity tftypes.Type }{}
	for name, r := range reads {
		out[name] = struct{ State, Identity tftypes.Type }{r.state, r.identityTyp}
	}
	return out
}

// AnswersRead says whether s, a server made by New or Checked, answers the refresh req itself
// rather than the framework.
func AnswersRead(ctx context.Context, s tfprotov6.ProviderServer, req *tfprotov6.ReadResourceRequest) bool {
	var srv *server
	switch s := s.(type) {
	case *server:
		srv = s
	case checked:
		srv = s.server
	default:
		return false
	}
	srv.init(ctx)
	shape := srv.reads[req.TypeName]
	if shape == nil {
		return false
	}
	_, ok := shape.read(ctx, srv.resourceData(), req)
	return ok
}
