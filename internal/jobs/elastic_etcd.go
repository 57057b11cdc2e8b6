package jobs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// newEtcdNetworkPolicy admits to the job's etcd, on its client port, the pods of the job alone
// (FrameworkController labels every pod of a Framework with its name). Where the cluster's
// network plugin enforces NetworkPolicies, nothing else reaches the unauthenticated rendezvous.
func newEtcdNetworkPolicy(s ElasticJobSpec) (*unstructured.Unstructured, error) {
	tcp := corev1.ProtocolTCP
	port := intstr.FromInt32(etcdPort)
	policy := networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: objectMeta(s.Name+"-"+EtcdRole, s.Namespace, PodOptions{}),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{FrameworkNameLabel: s.Name, TaskRoleLabel: EtcdRole}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{FrameworkNameLabel: s.Name}}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
			}},
		},
	}
	return toUnstructured(&policy)
}

// CheckEtcdImage says why an etcd image cannot serve the rendezvous, or nil: the etcd runs with
// --enable-v2 for the v2 API the rendezvous speaks, which etcd 3.6 removed (it refuses the flag
// and exits). A tag that names no version cannot be checked and is accepted.
func CheckEtcdImage(image string) error {
	if strings.TrimSpace(image) == "" {
		return fmt.Errorf("the etcd image is empty")
	}
	name := image
	if i := strings.LastIndex(name, "@"); i >= 0 {
		name = name[:i]
	}
	i := strings.LastIndex(name, ":")
	if i < 0 || strings.Contains(name[i:], "/") {
		return nil
	}
	m := etcdVersion.FindStringSubmatch(name[i+1:])
	if m == nil {
		return nil
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major > 3 || (major == 3 && minor >= 6) {
		return fmt.Errorf("%s is etcd %d.%d, which no longer serves the v2 API (--enable-v2) the rendezvous needs: use an etcd 3.4 or 3.5 image", image, major, minor)
	}
	return nil
}

var etcdVersion = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// etcdCommand is the example's etcd command line, run without a shell: etcd's images have had
// none since 3.5.7 (a distroless base), and `sh -c` never starts there.
var etcdCommand = []string{
	"/usr/local/bin/etcd",
	"--data-dir", "/var/lib/etcd", "--enable-v2",
	"--listen-client-urls", "http://0.0.0.0:2379",
	"--advertise-client-urls", "http://0.0.0.0:2379",
	"--initial-cluster-state", "new",
}
