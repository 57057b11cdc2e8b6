package provider

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// stringRule validates a string at plan time with the same function that later uses it, so a
// value that passes validation cannot fail when the object is built.
type stringRule struct {
	description string
	check       func(string) error
}

var _ validator.String = stringRule{}

func (r stringRule) Description(context.Context) string             { return r.description }
func (r stringRule) MarkdownDescription(ctx context.Context) string { return r.description }

func (r stringRule) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := r.check(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+r.description, nestedPath(req.Path)+err.Error())
	}
}

// nestedPath names an attribute inside an object in a diagnostic's detail (`tensorboard.log_dir: `):
// Terraform points at the whole object in the configuration, so the detail says which of its
// attributes is wrong. A top-level attribute's line names it already.
func nestedPath(p path.Path) string {
	if len(p.Steps()) < 2 {
		return ""
	}
	return p.String() + ": "
}

// apimachinery's validators return a list of messages; this turns them into one error.
func messages(value string, errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%q: %s", value, strings.Join(errs, "; "))
}

var (
	// mountPathRule: a folder a volume is mounted at, absolute and clean as the API server
	// wants it.
	mountPathRule = stringRule{"mount path", func(s string) error {
		if !filepath.IsAbs(s) || filepath.Clean(s) != s {
			return fmt.Errorf("%q must be an absolute, clean path", s)
		}
		return nil
	}}
	tolerationRule = tolerationString{}
	secretKeyRule  = stringRule{"Secret key", func(s string) error {
		return messages(s, validation.IsConfigMapKey(s))
	}}
	// nonBlankRule: an image, a script, a directory or a queue named by spaces alone would
	// fail only once the objects exist.
	nonBlankRule = stringRule{"value", func(s string) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("%q is empty or only spaces", s)
		}
		if strings.TrimSpace(s) != s {
			return fmt.Errorf("%q starts or ends with spaces", s)
		}
		return nil
	}}
	quotaRule = stringRule{"quota", func(s string) error {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return fmt.Errorf("%q is not a Kubernetes quantity (examples: 0, 4, 256Gi)", s)
		}
		if q.Sign() < 0 {
			return fmt.Errorf("%q must not be negative", s)
		}
		return nil
	}}
	quantityRule = stringRule{"Kubernetes quantity", func(s string) error {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return fmt.Errorf("%q is not a Kubernetes quantity (examples: 500m, 2, 16Gi)", s)
		}
		if q.Sign() <= 0 {
			return fmt.Errorf("%q must be greater than zero", s)
		}
		return nil
	}}
	rendezvousEndpointRule = stringRule{"rendezvous endpoint", func(s string) error { return jobs.CheckRendezvous("", s) }}
	dataVolumeRule         = stringRule{"data volume", func(s string) error {
		_, err := jobs.ParseDataVolume(s)
		return err
	}}
	namespaceRule = stringRule{"namespace", func(s string) error {
		return messages(s, validation.IsDNS1123Label(s))
	}}
	objectNameRule = stringRule{"object name", func(s string) error {
		return messages(s, validation.IsDNS1123Subdomain(s))
	}}
	envNameRule = stringRule{"environment variable name", func(s string) error {
		return messages(s, validation.IsEnvVarName(s))
	}}
	labelKeyRule = stringRule{"label or annotation key", func(s string) error {
		return messages(s, validation.IsQualifiedName(s))
	}}
	// A job's labels leave Kueue's to the attributes that say them.
	jobLabelKeyRule = stringRule{"job label key", func(s string) error {
		switch s {
		case jobs.QueueLabel:
			return fmt.Errorf("%q is the job's queue: set queue_name instead", s)
		case jobs.PriorityClassLabel:
			return fmt.Errorf("%q is the job's Kueue priority: set workload_priority_class instead (the job keeps the same label)", s)
		}
		return nil
	}}
	taintRule      = stringRule{"taint", func(s string) error { _, err := jobs.ParseTaint(s); return err }}
	labelValueRule = stringRule{"label value", func(s string) error {
		return messages(s, validation.IsValidLabelValue(s))
	}}
	// Extended resources such as nvidia.com/gpu must be domain-prefixed names.
	gpuResourceRule      = stringRule{"GPU resource name", extendedResourceName}
	extendedResourceRule = stringRule{"extended resource name", extendedResourceName}
	// An extended resource is counted in whole devices.
	wholeCountRule = stringRule{"whole number of devices", func(s string) error {
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() <= 0 || q.MilliValue()%1000 != 0 {
			return fmt.Errorf("%q is not a whole number of at least 1: an extended resource is counted in whole devices", s)
		}
		return nil
	}}
)

// extendedResourceName checks the name of an extended resource: domain-prefixed (nvidia.com/gpu,
// rdma/hca), and not in Kubernetes' own domains, whose resources are not extended ones.
func extendedResourceName(s string) error {
	domain, _, ok := strings.Cut(s, "/")
	if !ok {
		return fmt.Errorf("%q must be a domain-prefixed extended resource name, like %s or rdma/hca", s, jobs.DefaultGPUResource)
	}
	if domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io") {
		return fmt.Errorf("%q is in Kubernetes' own domain, where no extended resource is", s)
	}
	return messages(s, validation.IsQualifiedName(s))
}

// notTheGPUResource refuses, among extended_resources, the resource the GPUs are given as
// (gpu_resource_name, or its default): that one is gpus.
type notTheGPUResource struct{}

func (notTheGPUResource) Description(context.Context) string {
	return "does not name the GPUs' resource, which gpus gives"
}
func (v notTheGPUResource) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (notTheGPUResource) ValidateMap(ctx context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	var gpuResource types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("gpu_resource_name"), &gpuResource)...)
	if gpuResource.IsUnknown() || req.ConfigValue.IsUnknown() {
		return
	}
	name := cmp.Or(gpuResource.ValueString(), jobs.DefaultGPUResource)
	if _, ok := req.ConfigValue.Elements()[name]; ok {
		resp.Diagnostics.AddAttributeError(req.Path, "GPUs given as an extended resource",
			fmt.Sprintf("extended_resources names %s, the resource the GPUs are given as (gpu_resource_name): set gpus instead.", name))
	}
}

// jobNameRule checks a job name for the objects an operator derives from it: pod hostnames
// NAME-SUFFIX must be DNS-1035 labels, so NAME is one with room for the longest suffix.
func jobNameRule(longestSuffix string) stringRule {
	limit := validation.DNS1035LabelMaxLength - len(longestSuffix)
	return stringRule{"job name", func(s string) error {
		if errs := validation.IsDNS1035Label(s); len(errs) > 0 {
			return messages(s, errs)
		}
		if len(s) > limit {
			return fmt.Errorf("%q is %d characters long; at most %d are allowed, since pods are named %s%s", s, len(s), limit, s, longestSuffix)
		}
		return nil
	}}
}

// tolerationString checks one toleration string in Arena's grammar, and warns about `all`,
// which is seldom what is meant: it also tolerates the taints Kubernetes puts on cordoned,
// not-ready and unreachable nodes.
type tolerationString struct{}

var _ validator.String = tolerationString{}

func (tolerationString) Description(context.Context) string { return "a toleration string" }
func (v tolerationString) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (tolerationString) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	if _, err := jobs.ParseToleration(s); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid toleration", err.Error())
		return
	}
	if s == jobs.TolerateAll {
		resp.Diagnostics.AddAttributeWarning(req.Path, "The job tolerates every taint",
			"\"all\" tolerates every taint, including those Kubernetes puts on cordoned (node.kubernetes.io/unschedulable), "+
				"not-ready and unreachable nodes: the pods may be placed on a node being drained, and are never evicted from one that "+
				"stops answering. Name the taints to tolerate instead (\"nvidia.com/gpu\") unless that is what you want.")
	}
}

// distinctKeys refuses a map key that the other map attributes (at the root) also set: one
// environment variable defined twice would leave which value wins to the container runtime.
type distinctKeys []string

var _ validator.Map = distinctKeys{}

func (d distinctKeys) Description(context.Context) string {
	return "keys not also set in " + strings.Join(d, " or ")
}
func (d distinctKeys) MarkdownDescription(ctx context.Context) string { return d.Description(ctx) }

func (d distinctKeys) ValidateMap(ctx context.Context, req validator.MapRequest, resp *validator.MapResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for _, other := range d {
		var m types.Map
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(other), &m)...)
		if m.IsNull() || m.IsUnknown() {
			continue
		}
		for _, key := range slices.Sorted(maps.Keys(req.ConfigValue.Elements())) {
			if _, twice := m.Elements()[key]; twice {
				resp.Diagnostics.AddAttributeError(req.Path, "Variable set twice",
					fmt.Sprintf("%s is also set in %s: set each environment variable in one place only.", key, other))
			}
		}
	}
}

// labelMapRule checks a map of labels: keys and values as the API server wants them.
var labelMapRule = mapvalidator.All(mapvalidator.KeysAre(labelKeyRule), mapvalidator.ValueStringsAre(labelValueRule))
