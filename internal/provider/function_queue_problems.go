package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// queue_problems checks Kueue's objects of a configuration together, which no resource can do
// alone: Terraform plans a flavor before the ClusterQueues that name it and a cohort's queues in
// no fixed order, and a provider sees one resource at a time. A function sees what it is given,
// all at once, at every plan: kueue.QueueProblems.
type queueProblemsFunction struct{}

func newQueueProblemsFunction() function.Function { return &queueProblemsFunction{} }

func (f *queueProblemsFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "queue_problems"
}

func (f *queueProblemsFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "What Kueue's flavors, ClusterQueues, cohorts and admission checks of a configuration, taken together, have wrong",
		MarkdownDescription: "Checks the `training_resource_flavor`s, `training_cluster_queue`s and (optionally) `training_cohort`s, " +
			"`training_admission_check`s and `training_provisioning_request_config`s it is " +
			"given together and returns each problem found, naming both ends: a flavor that none of the ClusterQueues covers (no queued " +
			"job runs on its nodes); a ClusterQueue's or cohort's `borrowing_limit` beyond what the rest of the tree above it could ever " +
			"lend it for that flavor and resource (the others' `nominal_quota`, or their `lending_limit` where set, at every level); and " +
			"cohorts whose parents loop, below which Kueue admits nothing and says so on no condition; an admission check a ClusterQueue " +
			"names that is not given, and a provisioning check whose ProvisioningRequestConfig is not given (Kueue holds every job of " +
			"their queues). A cohort that the queues name but that is not given holds no quota of its own. No resource can check these alone: Terraform plans a " +
			"flavor before the queues that name it, and a cohort's queues in no fixed order. Call it in a `check` block, whose failed " +
			"assertion is a warning in every plan (Terraform 1.8+, OpenTofu 1.7+): see the example. It reads nothing from the cluster.",
		Parameters: []function.Parameter{
			function.DynamicParameter{Name: "flavors", AllowUnknownValues: true, MarkdownDescription: "The `training_resource_flavor` resources (or their names), as a list or tuple: `[training_resource_flavor.a100, ...]`."},
			function.DynamicParameter{Name: "cluster_queues", AllowUnknownValues: true, MarkdownDescription: "The `training_cluster_queue` resources, as a list or tuple."},
		},
		VariadicParameter: function.DynamicParameter{Name: "more", AllowUnknownValues: true,
			MarkdownDescription: "Optional, in any order, each a list or tuple of one kind: the `training_cohort` resources " +
				"(`[training_cohort.research, ...]`), with which the borrowing is checked through the whole tree (each cohort's own quota, " +
				"`lending_limit` and `borrowing_limit`) and a loop of cohorts is found; the `training_admission_check` resources, with which a " +
				"check a ClusterQueue names that is not given is found; the `training_provisioning_request_config` resources, with which a " +
				"provisioning check whose config is not given is found. What is not given may exist on the cluster outside the configuration: " +
				"the problem says so."},
		Return: function.ListReturn{ElementType: types.StringType},
	}
}

func (f *queueProblemsFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var flavorsArg, queuesArg types.Dynamic
	var moreArgs types.Tuple
	resp.Error = req.Arguments.Get(ctx, &flavorsArg, &queuesArg, &moreArgs)
	if resp.Error != nil {
		return
	}
	more, funcErr := sortArguments(moreArgs.Elements())
	if funcErr != nil {
		resp.Error = funcErr
		return
	}
	if more == nil {
		resp.Error = resp.Result.Set(ctx, types.ListUnknown(types.StringType))
		return
	}
	cohortsArg := more["cohort"]
	// A resource's computed attributes are unknown until it is made; the names, quotas and
	// cohorts this reads come from the configuration. Only an argument unknown as a whole (its
	// list not known yet) leaves the answer unknown.
	if flavorsArg.IsUnderlyingValueUnknown() || queuesArg.IsUnderlyingValueUnknown() || flavorsArg.IsUnknown() || queuesArg.IsUnknown() {
		resp.Error = resp.Result.Set(ctx, types.ListUnknown(types.StringType))
		return
	}
	unknown := func() {
		resp.Error = resp.Result.Set(ctx, types.ListUnknown(types.StringType))
	}
	var flavors []string
	for i, v := range elements(flavorsArg) {
		if v.IsUnknown() || nameUnknown(v) {
			unknown() // while Terraform validates the configuration: the resources are not planned yet
			return
		}
		name := stringValue(v)
		if o, ok := v.(types.Object); ok {
			name = stringValue(o.Attributes()["name"])
		}
		if name == "" {
			resp.Error = function.NewArgumentFuncError(0, fmt.Sprintf("flavors: element %d is neither a training_resource_flavor nor a name", i))
			return
		}
		flavors = append(flavors, name)
	}
	var queues []kueue.ClusterQueueSpec
	for i, v := range elements(queuesArg) {
		if v.IsUnknown() || nameUnknown(v) {
			unknown()
			return
		}
		o, ok := v.(types.Object)
		if !ok || stringValue(o.Attributes()["name"]) == "" {
			resp.Error = function.NewArgumentFuncError(1, fmt.Sprintf("cluster_queues: element %d is not a training_cluster_queue", i))
			return
		}
		queues = append(queues, queueOf(o))
	}
	var cohorts []kueue.CohortSpec
	for i, v := range elements(cohortsArg) {
		if v.IsUnknown() || nameUnknown(v) {
			unknown()
			return
		}
		o, ok := v.(types.Object)
		if !ok || stringValue(o.Attributes()["name"]) == "" {
			resp.Error = function.NewArgumentFuncError(2, fmt.Sprintf("cohorts: element %d is not a training_cohort", i))
			return
		}
		a := o.Attributes()
		cohorts = append(cohorts, kueue.CohortSpec{Name: stringValue(a["name"]), Parent: stringValue(a["parent"]), ResourceGroups: resourceGroupsOfValue(a["resource_group"])})
	}
	var checks []kueue.AdmissionCheckSpec
	if more["check"] != nil {
		checks = []kueue.AdmissionCheckSpec{}
	}
	for i, v := range elements(more["check"]) {
		if v.IsUnknown() || nameUnknown(v) {
			unknown()
			return
		}
		o, ok := v.(types.Object)
		if !ok || o.Attributes()["provisioning_request_config"] == nil {
			resp.Error = function.NewArgumentFuncError(2, fmt.Sprintf("admission checks: element %d is not a training_admission_check", i))
			return
		}
		a := o.Attributes()
		checks = append(checks, kueue.AdmissionCheckSpec{Name: stringValue(a["name"]), Config: stringValue(a["multikueue_config"]),
			ProvisioningConfig: stringValue(a["provisioning_request_config"])})
	}
	var configs []string
	if more["config"] != nil {
		configs = []string{}
	}
	for i, v := range elements(more["config"]) {
		if v.IsUnknown() || nameUnknown(v) {
			unknown()
			return
		}
		o, ok := v.(types.Object)
		if !ok || o.Attributes()["provisioning_class"] == nil {
			resp.Error = function.NewArgumentFuncError(2, fmt.Sprintf("provisioning configs: element %d is not a training_provisioning_request_config", i))
			return
		}
		configs = append(configs, stringValue(o.Attributes()["name"]))
	}
	problems := kueue.QueueProblems(flavors, queues, cohorts...)
	problems = append(problems, kueue.AdmissionCheckProblems(queues, checks, configs)...)
	values := make([]attr.Value, len(problems))
	for i, p := range problems {
		values[i] = types.StringValue(p)
	}
	resp.Error = resp.Result.Set(ctx, types.ListValueMust(types.StringType, values))
}

// nameUnknown says whether v is an object whose name is not known yet.
func nameUnknown(v attr.Value) bool {
	o, ok := v.(types.Object)
	return ok && o.Attributes()["name"] != nil && o.Attributes()["name"].IsUnknown()
}

// queueOf is the part of a training_cluster_queue's value that QueueProblems and
// AdmissionCheckProblems read.
func queueOf(o types.Object) kueue.ClusterQueueSpec {
	a := o.Attributes()
	var checks []string
	for _, c := range elements(a["admission_checks"]) {
		checks = append(checks, stringValue(c))
	}
	return kueue.ClusterQueueSpec{Name: stringValue(a["name"]), Cohort: stringValue(a["cohort"]), ResourceGroups: resourceGroupsOfValue(a["resource_group"]),
		AdmissionChecks: checks}
}

// moreKinds are the resources the function's optional arguments give, by the attribute only
// each has: each argument a list of one of them.
var moreKinds = []struct{ kind, attribute, resource string }{
	{"cohort", "parent", "training_cohort"},
	{"check", "provisioning_request_config", "training_admission_check"},
	{"config", "provisioning_class", "training_provisioning_request_config"},
}

// sortArguments sorts the optional arguments by what they list ("cohort", "check", "config"; an
// empty list gives nothing); nil when one is not known yet.
func sortArguments(args []attr.Value) (map[string]attr.Value, *function.FuncError) {
	out := map[string]attr.Value{}
	for i, arg := range args {
		if d, ok := arg.(types.Dynamic); arg.IsUnknown() || ok && d.IsUnderlyingValueUnknown() {
			return nil, nil
		}
		list := elements(arg)
		if len(list) == 0 {
			continue
		}
		if list[0].IsUnknown() {
			return nil, nil // while Terraform validates the configuration: the resources are not planned yet
		}
		o, _ := list[0].(types.Object)
		kind := ""
		for _, k := range moreKinds {
			if o.Attributes()[k.attribute] != nil {
				kind = k.kind
			}
		}
		if kind == "" {
			return nil, function.NewArgumentFuncError(int64(2+i), fmt.Sprintf("argument %d: a list of training_cohort, training_admission_check "+
				"or training_provisioning_request_config resources; its first element is none of these", 3+i))
		}
		if out[kind] != nil {
			for _, k := range moreKinds {
				if k.kind == kind {
					return nil, function.NewArgumentFuncError(int64(2+i), fmt.Sprintf("argument %d: give every %s in one list", 3+i, k.resource))
				}
			}
		}
		out[kind] = arg
	}
	return out, nil
}

// resourceGroupsOfValue is the resource groups of a ClusterQueue's or Cohort's value.
func resourceGroupsOfValue(v attr.Value) []kueue.ResourceGroup {
	var out []kueue.ResourceGroup
	for _, g := range elements(v) {
		gobj, _ := g.(types.Object)
		group := kueue.ResourceGroup{}
		for _, f := range elements(gobj.Attributes()["flavor"]) {
			fo, _ := f.(types.Object)
			fq := kueue.FlavorQuotas{Name: stringValue(fo.Attributes()["name"])}
			for _, r := range elements(fo.Attributes()["resource"]) {
				ro, _ := r.(types.Object)
				ra := ro.Attributes()
				fq.Resources = append(fq.Resources, kueue.Quota{Name: stringValue(ra["name"]), Nominal: stringValue(ra["nominal_quota"]),
					BorrowingLimit: stringValue(ra["borrowing_limit"]), LendingLimit: stringValue(ra["lending_limit"])})
			}
			group.Flavors = append(group.Flavors, fq)
		}
		out = append(out, group)
	}
	return out
}

// elements are the elements of a list, set or tuple (through a dynamic value), none for
// anything else or an unknown or null one.
func elements(v attr.Value) []attr.Value {
	if d, ok := v.(types.Dynamic); ok {
		v = d.UnderlyingValue()
	}
	if v == nil || v.IsNull() || v.IsUnknown() {
		return nil
	}
	switch c := v.(type) {
	case types.List:
		return c.Elements()
	case types.Set:
		return c.Elements()
	case types.Tuple:
		return c.Elements()
	}
	return nil
}

// stringValue is a known string's value, "" for anything else.
func stringValue(v attr.Value) string {
	if s, ok := v.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
		return strings.TrimSpace(s.ValueString())
	}
	return ""
}
