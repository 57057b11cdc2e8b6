package jobs

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Security is the security context of a job's pods: what Kubernetes sets per pod (the user and
// group its containers run as, the volumes' group, the seccomp profile), on the pod, so that it
// covers the containers an operator adds too; and what Kubernetes sets only per container
// (privilege escalation, capabilities, a read-only root filesystem), on each container this
// provider writes.
type Security struct {
	RunAsNonRoot                   *bool
	RunAsUser, RunAsGroup, FSGroup *int64
	// SeccompProfile is RuntimeDefault, Unconfined, or localhost/PATH (a profile on the node,
	// relative to the kubelet's seccomp folder), as the old seccomp annotation wrote them.
	SeccompProfile           string
	AllowPrivilegeEscalation *bool
	ReadOnlyRootFilesystem   *bool
	DropCapabilities         []string
	AddCapabilities          []string
}

// localhostSeccomp prefixes a Localhost seccomp profile's path in Security.SeccompProfile.
const localhostSeccomp = "localhost/"

// SeccompProfiles are the forms SeccompProfile takes.
var SeccompProfiles = []string{string(corev1.SeccompProfileTypeRuntimeDefault), string(corev1.SeccompProfileTypeUnconfined), localhostSeccomp + "PATH"}

// Validate says what the API server would refuse, or a contradiction it would accept and the
// kubelet refuse at start (run as non-root as user 0).
func (s Security) Validate() error {
	for _, id := range []struct {
		name string
		v    *int64
	}{{"run_as_user", s.RunAsUser}, {"run_as_group", s.RunAsGroup}, {"fs_group", s.FSGroup}} {
		if id.v != nil && *id.v < 0 {
			return fmt.Errorf("%s %d is negative: user and group IDs are 0 or more", id.name, *id.v)
		}
	}
	if ptr.Deref(s.RunAsNonRoot, false) && s.RunAsUser != nil && *s.RunAsUser == 0 {
		return fmt.Errorf("run_as_non_root with run_as_user 0: the kubelet refuses to start a container as root when it must not run as root")
	}
	if _, err := seccompProfile(s.SeccompProfile); err != nil {
		return err
	}
	for _, c := range slices.Concat(s.DropCapabilities, s.AddCapabilities) {
		if c != strings.ToUpper(c) || strings.HasPrefix(c, "CAP_") || c == "" {
			return fmt.Errorf("capability %q: name capabilities as Kubernetes does, in capitals without CAP_ (NET_BIND_SERVICE, ALL)", c)
		}
	}
	return nil
}

func seccompProfile(s string) (*corev1.SeccompProfile, error) {
	switch {
	case s == "":
		return nil, nil
	case s == string(corev1.SeccompProfileTypeRuntimeDefault), s == string(corev1.SeccompProfileTypeUnconfined):
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileType(s)}, nil
	case strings.HasPrefix(s, localhostSeccomp) && len(s) > len(localhostSeccomp):
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To(strings.TrimPrefix(s, localhostSeccomp))}, nil
	}
	return nil, fmt.Errorf("seccomp profile %q is not one of %s", s, strings.Join(SeccompProfiles, ", "))
}

// pod is the pod-level part; nil when it sets nothing.
func (s *Security) pod() *corev1.PodSecurityContext {
	if s == nil {
		return nil
	}
	profile, _ := seccompProfile(s.SeccompProfile)
	p := &corev1.PodSecurityContext{RunAsNonRoot: s.RunAsNonRoot, RunAsUser: s.RunAsUser, RunAsGroup: s.RunAsGroup, FSGroup: s.FSGroup, SeccompProfile: profile}
	if p.RunAsNonRoot == nil && p.RunAsUser == nil && p.RunAsGroup == nil && p.FSGroup == nil && p.SeccompProfile == nil {
		return nil
	}
	return p
}

// container is the container-level part; nil when it sets nothing.
func (s *Security) container() *corev1.SecurityContext {
	if s == nil {
		return nil
	}
	c := &corev1.SecurityContext{AllowPrivilegeEscalation: s.AllowPrivilegeEscalation, ReadOnlyRootFilesystem: s.ReadOnlyRootFilesystem}
	if len(s.DropCapabilities) > 0 || len(s.AddCapabilities) > 0 {
		c.Capabilities = &corev1.Capabilities{}
		for _, name := range s.DropCapabilities {
			c.Capabilities.Drop = append(c.Capabilities.Drop, corev1.Capability(name))
		}
		for _, name := range s.AddCapabilities {
			c.Capabilities.Add = append(c.Capabilities.Add, corev1.Capability(name))
		}
	}
	if c.AllowPrivilegeEscalation == nil && c.ReadOnlyRootFilesystem == nil && c.Capabilities == nil {
		return nil
	}
	return c
}

// readSecurity recovers Security from a pod's security context and its main container's; nil
// when neither sets what Security says.
func readSecurity(p *corev1.PodSecurityContext, c *corev1.SecurityContext) *Security {
	var s Security
	if p != nil {
		s.RunAsNonRoot, s.RunAsUser, s.RunAsGroup, s.FSGroup = p.RunAsNonRoot, p.RunAsUser, p.RunAsGroup, p.FSGroup
		if sp := p.SeccompProfile; sp != nil {
			s.SeccompProfile = string(sp.Type)
			if sp.Type == corev1.SeccompProfileTypeLocalhost {
				s.SeccompProfile = localhostSeccomp + ptr.Deref(sp.LocalhostProfile, "")
			}
		}
	}
	if c != nil {
		s.AllowPrivilegeEscalation, s.ReadOnlyRootFilesystem = c.AllowPrivilegeEscalation, c.ReadOnlyRootFilesystem
		if caps := c.Capabilities; caps != nil {
			for _, name := range caps.Drop {
				s.DropCapabilities = append(s.DropCapabilities, string(name))
			}
			for _, name := range caps.Add {
				s.AddCapabilities = append(s.AddCapabilities, string(name))
			}
		}
	}
	if s.pod() == nil && s.container() == nil {
		return nil
	}
	return &s
}
