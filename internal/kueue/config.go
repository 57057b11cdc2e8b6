package kueue

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/inf.v0"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Config is what of Kueue's own configuration (its manager's Configuration,
// config.kueue.x-k8s.io v1beta1 or v1beta2, which an installation keeps in a ConfigMap) decides
// what Kueue does with a job: which kinds it manages, and what of a pod's requests it counts.
type Config struct {
	// Frameworks are the integrations Kueue runs (integrations.frameworks), by name:
	// "kubeflow.org/pytorchjob".
	Frameworks []string
	// ExcludeResourcePrefixes: resources whose names start so are left out of every Workload
	// (resources.excludeResourcePrefixes).
	ExcludeResourcePrefixes []string
	// Transformations turn a pod's requests into what Kueue counts (resources.transformations).
	Transformations []Transformation
	// IgnoreUndeclared: a resource no ClusterQueue declares is not checked against quota
	// (resources.quotaCheckStrategy: IgnoreUndeclared, behind a feature gate).
	IgnoreUndeclared bool
	// FairSharing: Kueue shares borrowed quota fairly (fairSharing.enable, or the fairSharing
	// block of v1beta2), preempting by FairSharingStrategies (fairSharing.preemptionStrategies;
	// none: Kueue's two, LessThanOrEqualToFinalShare then LessThanInitialShare).
	FairSharing           bool
	FairSharingStrategies []string
	// AdmissionFairSharing orders a queue's workloads by their LocalQueues' usage, which the
	// prediction does not model.
	AdmissionFairSharing bool
	// PodsReady is waitForPodsReady as the configuration writes it; nil where it says nothing,
	// which Kueue reads by its release (PodsReadyOn).
	PodsReady *PodsReady
	// v1beta1: the configuration is of the older version, whose waitForPodsReady is off unless
	// enabled.
	v1beta1 bool
}

// PodsReady is Kueue's waitForPodsReady: a workload whose pods are not all ready Timeout after
// its admission, or that has lost a ready pod for RecoveryTimeout, is evicted and requeued; with
// BlockAdmission, Kueue admits the next workload only once the admitted ones' pods are ready.
type PodsReady struct {
	Enabled                  bool
	Timeout, RecoveryTimeout time.Duration
	BlockAdmission           bool
}

// defaultPodsReadyTimeout is Kueue v0.19.2's waitForPodsReady.timeout where none is given
// (apis/config/v1beta2/defaults.go, DefaultWaitForPodsReadyTimeout; v1beta1's is the same).
const defaultPodsReadyTimeout = 30 * time.Minute

// PodsReadyOn is waitForPodsReady as Kueue of release r runs it with this configuration: what it
// sets, with Kueue's defaults for what it leaves out. Kueue v0.19 runs it where a v1beta2
// configuration says nothing (timeout 30 minutes, recovery timeout the same, admission not
// blocked; apis/config/v1beta2/defaults.go), unless its feature gate DisableWaitForPodsReady is
// on, which is a flag of Kueue's command line the provider cannot read. Earlier releases, and
// v1beta1 configurations, leave it off unless enabled, and then block admission by default
// (apis/config/v1beta1/defaults.go). Kueue v0.18, untested, is taken for v0.19 (Current).
func (c *Config) PodsReadyOn(r Release) PodsReady {
	p := PodsReady{}
	switch {
	case c.PodsReady != nil:
		p = *c.PodsReady
	case r == Current && !c.v1beta1:
		p.Enabled = true
	}
	if !p.Enabled {
		return PodsReady{}
	}
	if p.Timeout == 0 {
		p.Timeout = defaultPodsReadyTimeout
	}
	if p.RecoveryTimeout == 0 {
		p.RecoveryTimeout = p.Timeout
	}
	return p
}

// Transformation is one of resources.transformations: what a request of Input counts as.
type Transformation struct {
	Input string
	// Replace: the input itself is not counted (Kueue's strategy Replace; Retain keeps it).
	Replace bool
	// MultiplyBy names a request whose amount scales the outputs.
	MultiplyBy string
	// Outputs are counted per unit of input.
	Outputs corev1.ResourceList
}

// configFile is the part of Kueue's Configuration that Config reads, in either version.
type configFile struct {
	Integrations *struct {
		Frameworks []string `json:"frameworks"`
	} `json:"integrations"`
	Resources *struct {
		ExcludeResourcePrefixes []string `json:"excludeResourcePrefixes"`
		QuotaCheckStrategy      string   `json:"quotaCheckStrategy"`
		Transformations         []struct {
			Input      string              `json:"input"`
			Strategy   string              `json:"strategy"`
			MultiplyBy string              `json:"multiplyBy"`
			Outputs    corev1.ResourceList `json:"outputs"`
		} `json:"transformations"`
	} `json:"resources"`
	FairSharing *struct {
		Enable               *bool    `json:"enable"`
		PreemptionStrategies []string `json:"preemptionStrategies"`
	} `json:"fairSharing"`
	AdmissionFairSharing *struct{} `json:"admissionFairSharing"`
	WaitForPodsReady     *struct {
		Enable          *bool            `json:"enable"`
		Timeout         *metav1.Duration `json:"timeout"`
		RecoveryTimeout *metav1.Duration `json:"recoveryTimeout"`
		BlockAdmission  *bool            `json:"blockAdmission"`
	} `json:"waitForPodsReady"`
	APIVersion string `json:"apiVersion"`
}

// DefaultFrameworks are the integrations Kueue v0.19.2 runs when its configuration lists none
// (apis/config/v1beta2/defaults.go, defaultJobFrameworkName); the configuration its manifests
// and Helm chart install lists more, and since v0.19 not the Kubeflow training-operator's
// (PyTorchJob, TFJob).
var DefaultFrameworks = []string{"batch/job"}

// ParseConfig reads Kueue's Configuration.
func ParseConfig(data []byte) (*Config, error) {
	var f configFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("reading Kueue's configuration: %w", err)
	}
	c := &Config{Frameworks: DefaultFrameworks}
	if f.Integrations != nil && f.Integrations.Frameworks != nil {
		c.Frameworks = f.Integrations.Frameworks
	}
	if r := f.Resources; r != nil {
		c.ExcludeResourcePrefixes = r.ExcludeResourcePrefixes
		c.IgnoreUndeclared = r.QuotaCheckStrategy == "IgnoreUndeclared"
		for _, t := range r.Transformations {
			c.Transformations = append(c.Transformations, Transformation{Input: t.Input, Replace: t.Strategy == "Replace",
				MultiplyBy: t.MultiplyBy, Outputs: t.Outputs})
		}
	}
	// v1beta2 enables fair sharing and waitForPodsReady by their blocks' presence; v1beta1 by
	// their enable fields.
	c.FairSharing = f.FairSharing != nil && (f.FairSharing.Enable == nil || *f.FairSharing.Enable)
	if c.FairSharing {
		c.FairSharingStrategies = f.FairSharing.PreemptionStrategies
	}
	c.AdmissionFairSharing = f.AdmissionFairSharing != nil
	c.v1beta1 = strings.HasSuffix(f.APIVersion, "/v1beta1")
	if w := f.WaitForPodsReady; w != nil {
		// v1beta2 enables it by the block's presence; v1beta1 by enable, and blocks admission
		// where it does not say otherwise.
		p := PodsReady{Enabled: !c.v1beta1, BlockAdmission: c.v1beta1}
		if w.Enable != nil {
			p.Enabled = *w.Enable
		}
		if w.Timeout != nil {
			p.Timeout = w.Timeout.Duration
		}
		if w.RecoveryTimeout != nil {
			p.RecoveryTimeout = w.RecoveryTimeout.Duration
		}
		if w.BlockAdmission != nil {
			p.BlockAdmission = *w.BlockAdmission
		}
		c.PodsReady = &p
	}
	return c, nil
}

// Manages says whether Kueue runs the integration.
func (c *Config) Manages(integration string) bool { return slices.Contains(c.Frameworks, integration) }

// Excludes says whether Kueue leaves the resource out of every Workload.
func (c *Config) Excludes(name string) bool {
	return slices.ContainsFunc(c.ExcludeResourcePrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

// Unmodeled are the settings that decide admission and that the prediction does not follow, in
// words, as Kueue of release r runs them; none when they are off.
func (c *Config) Unmodeled(r Release) []string {
	var out []string
	if c.AdmissionFairSharing {
		out = append(out, "admission fair sharing, which orders a queue's workloads by their LocalQueues' usage")
	}
	// waitForPodsReady changes admission only when it blocks it; otherwise it evicts later, which
	// a prediction of admission need not follow.
	if p := c.PodsReadyOn(r); p.BlockAdmission {
		out = append(out, fmt.Sprintf("waitForPodsReady with blockAdmission, which admits one workload at a time until its pods are "+
			"ready (or %s pass)", p.Timeout))
	}
	return out
}

// Counted is what Kueue counts of a pod set's requests (Kueue v0.19.2, pkg/workload/workload.go:
// dropExcludedResources, then applyResourceTransformations): excluded resources dropped, then each
// transformed input adding its outputs (scaled by MultiplyBy's request where it is asked for; a
// negative total counted as zero) and kept unless replaced.
func (c *Config) Counted(requests corev1.ResourceList) corev1.ResourceList {
	kept := corev1.ResourceList{}
	for name, q := range requests {
		if !c.Excludes(string(name)) {
			kept[name] = q
		}
	}
	transforms := map[corev1.ResourceName]Transformation{}
	for _, t := range c.Transformations {
		transforms[corev1.ResourceName(t.Input)] = t
	}
	out, generated := corev1.ResourceList{}, corev1.ResourceList{}
	for name, q := range kept {
		t, ok := transforms[name]
		if !ok {
			out[name] = q
			continue
		}
		base := q
		if t.MultiplyBy != "" {
			if m, ok := kept[corev1.ResourceName(t.MultiplyBy)]; ok {
				base = multiply(q, m)
			}
		}
		for output, factor := range t.Outputs {
			sum := generated[output]
			sum.Add(multiply(base, factor))
			generated[output] = sum
		}
		if !t.Replace {
			out[name] = q
		}
	}
	for name, q := range generated {
		if q.Sign() < 0 {
			q = resource.Quantity{}
		}
		sum := out[name]
		sum.Add(q)
		out[name] = sum
	}
	return out
}

func multiply(a, b resource.Quantity) resource.Quantity {
	product := new(inf.Dec).Mul(a.AsDec(), b.AsDec())
	return *resource.NewDecimalQuantity(*product, a.Format)
}

// CountedPodSet is PodSetOf with what Kueue's configuration c counts of the pods' requests (nil:
// Kueue's default configuration, which counts them all).
func CountedPodSet(name string, count int64, spec corev1.PodSpec, c *Config) PodSet {
	ps := PodSetOf(name, count, spec)
	if c == nil {
		return ps
	}
	ps.Requests = map[string]int64{}
	for r, q := range c.Counted(PodRequests(spec)) {
		if !q.IsZero() {
			ps.Requests[string(r)] = Amount(string(r), q)
		}
	}
	return ps
}
