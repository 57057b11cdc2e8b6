package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
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
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+r.description, err.Error())
	}
}

// apimachinery's validators return a list of messages; this turns them into one error.
func messages(value string, errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%q: %s", value, strings.Join(errs, "; "))
}

var (
	tolerationRule = stringRule{"toleration", func(s string) error {
		_, err := jobs.ParseToleration(s)
		return err
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
	etcdImageRule          = stringRule{"etcd image", jobs.CheckEtcdImage}
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
	labelValueRule = stringRule{"label value", func(s string) error {
		return messages(s, validation.IsValidLabelValue(s))
	}}
	// Extended resources such as nvidia.com/gpu must be domain-prefixed names.
	gpuResourceRule = stringRule{"GPU resource name", func(s string) error {
		if !strings.Contains(s, "/") {
			return fmt.Errorf("%q must be a domain-prefixed extended resource name, like %s", s, jobs.DefaultGPUResource)
		}
		return messages(s, validation.IsQualifiedName(s))
	}}
)

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
