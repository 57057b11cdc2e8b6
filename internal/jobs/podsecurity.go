package jobs

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// PodSecurityRefusal is why a namespace's Pod Security admission would refuse a role's pods.
type PodSecurityRefusal struct {
	Role string
	// Level is the namespace's enforced level and version, as its labels say it
	// ("restricted:latest").
	Level string
	// Reasons are the admission's own words, one per failed check ("allowPrivilegeEscalation !=
	// false (container \"worker\" must set securityContext.allowPrivilegeEscalation=false)").
	Reasons []string
}

func (r PodSecurityRefusal) Error() string {
	return fmt.Sprintf("the %s pods violate PodSecurity %q: %s", r.Role, r.Level, strings.Join(r.Reasons, "; "))
}

// CheckPodSecurity evaluates each role's pods as the API server's Pod Security admission does
// in a namespace with these labels (pod-security.kubernetes.io/enforce and enforce-version), at
// the server's version (major.minor) for "latest". It returns the roles the admission would
// refuse, in the roles' order; none when the namespace enforces nothing. The pods are those of
// the roles' templates: what an operator adds to them is checked by the API server alone.
func CheckPodSecurity(namespaceLabels map[string]string, serverVersion string, roles []RolePods) ([]PodSecurityRefusal, error) {
	p, errs := api.PolicyToEvaluate(namespaceLabels, api.Policy{Enforce: api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()}})
	if len(errs) > 0 {
		return nil, fmt.Errorf("the namespace's Pod Security labels: %w", errs.ToAggregate())
	}
	if p.Enforce.Level == api.LevelPrivileged {
		return nil, nil
	}
	var emulation *api.Version
	if v, err := api.ParseVersion(serverVersion); err == nil && !v.Latest() {
		emulation = &v
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), emulation)
	if err != nil {
		return nil, err
	}
	var out []PodSecurityRefusal
	for _, role := range roles {
		t := role.Template
		result := policy.AggregateCheckResults(evaluator.EvaluatePod(p.Enforce, &t.ObjectMeta, &t.Spec))
		if result.Allowed {
			continue
		}
		var reasons []string
		for i, r := range result.ForbiddenReasons {
			if d := result.ForbiddenDetails[i]; d != "" {
				r += " (" + d + ")"
			}
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		out = append(out, PodSecurityRefusal{Role: role.Role, Level: p.Enforce.String(), Reasons: reasons})
	}
	return out, nil
}
