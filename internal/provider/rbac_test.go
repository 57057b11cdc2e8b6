package provider

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// rbacFile is the least-privilege RBAC the docs ship; the acceptance suite's provider acts as
// a ServiceAccount bound to exactly these roles.
const rbacFile = "../../examples/rbac/provider-rbac.yaml"

// clusterWideRoles are the roles of rbacFile that are bound cluster-wide (reads of nodes and
// ClusterTrainingRuntimes, node taints, the admission prediction, Kueue's cluster-scoped objects,
// runtimes); the others (the jobs', the LocalQueues') are bound in the test namespaces only.
var clusterWideRoles = []string{"terraform-provider-training-cluster-reads", "terraform-provider-training-node-taints",
	"terraform-provider-training-admission-prediction", "terraform-provider-training-kueue", "terraform-provider-training-runtimes"}

// roleNamespaces are the namespaces the shipped roles that are not bound cluster-wide are bound
// in, where not "default".
var roleNamespaces = map[string]string{"terraform-provider-training-kueue-config": "kueue-system"}

// jobsRole is the shipped role of the job resources alone; writeOnlyEnvRole, the one that writes
// the Secrets of their write-only variables.
const (
	jobsRole         = "terraform-provider-training"
	writeOnlyEnvRole = "terraform-provider-training-write-only-env"
)

// optInRoles are the namespaced roles that write the objects a job may have beside it, and
// the kinds of object each alone may make, change or delete.
var optInRoles = map[string][]string{
	"terraform-provider-training-elastic-jobs": {"services", "networkpolicies"},
	"terraform-provider-training-tensorboards": {"services", "deployments"},
}

// serviceAccountNamespace holds the test ServiceAccounts; jobs are in "default".
const serviceAccountNamespace = "kube-system"

var leastPrivilegeKubeconfig, leastPrivilegeDir string

// setUpLeastPrivilege makes the ServiceAccount the provider under test acts as, bound to the
// roles of rbacFile, and a kubeconfig for it.
func setUpLeastPrivilege(adminKubeconfig string) error {
	roles, err := readRoles()
	if err != nil {
		return err
	}
	if leastPrivilegeDir, err = os.MkdirTemp("", "tf-acc-rbac-"); err != nil {
		return err
	}
	leastPrivilegeKubeconfig, err = serviceAccountKubeconfig(adminKubeconfig, "terraform", roles, leastPrivilegeDir)
	return err
}

// readRoles reads the ClusterRoles the provider ships.
func readRoles() ([]rbacv1.ClusterRole, error) {
	roles, err := cluster.ReadObjects[rbacv1.ClusterRole](rbacFile)
	if err != nil {
		return nil, err
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("%s holds no ClusterRole", rbacFile)
	}
	for _, role := range roles {
		if role.Kind != "ClusterRole" {
			return nil, fmt.Errorf("%s: unexpected %s %s", rbacFile, role.Kind, role.Name)
		}
	}
	return roles, nil
}

// serviceAccountKubeconfig creates (or replaces) ServiceAccount name, the given roles under
// names of their own (ROLE-NAME, so a test's reduced copy never changes the shipped roles' test
// binding), binds clusterWideRoles cluster-wide and the others in "default", and writes a kubeconfig
// with a token for the account into dir.
func serviceAccountKubeconfig(adminKubeconfig, name string, roles []rbacv1.ClusterRole, dir string) (string, error) {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", adminKubeconfig)
	if err != nil {
		return "", err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: serviceAccountNamespace}}
	if _, err := kube.CoreV1().ServiceAccounts(serviceAccountNamespace).Create(ctx, account, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: serviceAccountNamespace}}
	for _, role := range roles {
		shipped := role.Name
		role.ObjectMeta = metav1.ObjectMeta{Name: shipped + "-" + name}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}
		if err := replace(ctx, kube.RbacV1().ClusterRoles(), &role); err != nil {
			return "", err
		}
		if slices.Contains(clusterWideRoles, shipped) {
			binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}, RoleRef: ref, Subjects: subject}
			err = replace(ctx, kube.RbacV1().ClusterRoleBindings(), binding)
		} else {
			namespace := cmp.Or(roleNamespaces[shipped], "default")
			binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: namespace}, RoleRef: ref, Subjects: subject}
			err = replace(ctx, kube.RbacV1().RoleBindings(namespace), binding)
		}
		if err != nil {
			return "", err
		}
	}
	token, err := kube.CoreV1().ServiceAccounts(serviceAccountNamespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](4 * 3600)}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	ca := cfg.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return "", err
		}
	}
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["local"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: ca}
	kubeconfig.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	kubeconfig.Contexts[name] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	kubeconfig.CurrentContext = name
	path := filepath.Join(dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*kubeconfig, path)
}

// replace creates obj, or deletes and recreates it when it exists: a role binding's roleRef
// cannot be changed in place. Two test binaries setting up the same cluster at once may race
// here, so a create or delete that loses is tried again.
func replace[T any, PT interface {
	*T
	metav1.Object
}](ctx context.Context, client interface {
	Create(context.Context, PT, metav1.CreateOptions) (PT, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}, obj PT) error {
	var err error
	for range 5 {
		if _, err = client.Create(ctx, obj, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err = client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return err
}

// withoutVerb is a copy of roles in which the rule granting verb on resource grants it no more.
func withoutVerb(roles []rbacv1.ClusterRole, verb, resource string) []rbacv1.ClusterRole {
	out := make([]rbacv1.ClusterRole, len(roles))
	for i, role := range roles {
		out[i] = *role.DeepCopy()
		var rules []rbacv1.PolicyRule
		for _, rule := range role.Rules {
			if !slices.Contains(rule.Resources, resource) || !slices.Contains(rule.Verbs, verb) {
				rules = append(rules, rule)
				continue
			}
			// Split the resource out of the rule, keeping its other verbs.
			if others := without(rule.Resources, resource); len(others) > 0 {
				rules = append(rules, rbacv1.PolicyRule{APIGroups: rule.APIGroups, Resources: others, Verbs: rule.Verbs})
			}
			rules = append(rules, rbacv1.PolicyRule{APIGroups: rule.APIGroups, Resources: []string{resource}, Verbs: without(rule.Verbs, verb)})
		}
		out[i].Rules = rules
	}
	return out
}

func without(list []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(x string) bool { return x == s })
}

// grantNamespace binds the shipped namespaced role to the suite's ServiceAccount in another
// namespace too, as a platform team binds it in each namespace Terraform manages.
func (a *api) grantNamespace(namespace string) {
	a.t.Helper()
	const account = "terraform"
	roles, err := cluster.ReadObjects[rbacv1.ClusterRole](rbacFile)
	if err != nil {
		a.t.Fatal(err)
	}
	for _, role := range roles {
		if slices.Contains(clusterWideRoles, role.Name) {
			continue
		}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-" + account, Namespace: namespace},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name + "-" + account},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: serviceAccountNamespace}}}
		if _, err := a.kube.RbacV1().RoleBindings(namespace).Create(context.Background(), binding, metav1.CreateOptions{}); err != nil {
			a.t.Fatal(err)
		}
	}
}

// No shipped role lets the provider's identity change, make, exec into or delete a pod (a patch
// could swap a pod's image and run code as its ServiceAccount), or read a Secret; only the role
// of the write-only variables may write Secrets, only the role of training_node_taint may change
// nodes, and only the admission prediction's reads Workloads of every namespace.
func TestShippedRolesNeverChangePodsOrReadSecrets(t *testing.T) {
	roles, err := readRoles()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, role := range roles {
		names[role.Name] = true
		for _, rule := range role.Rules {
			for _, resource := range rule.Resources {
				core := slices.Contains(rule.APIGroups, "")
				switch {
				case resource == "*" || slices.Contains(rule.Verbs, "*") || slices.Contains(rule.APIGroups, "*"):
					t.Errorf("role %s grants a wildcard: %v", role.Name, rule)
				case core && resource == "secrets" && (role.Name != writeOnlyEnvRole || slices.ContainsFunc(rule.Verbs, func(v string) bool { return v != "create" && v != "patch" && v != "delete" })):
					t.Errorf("role %s grants %v on Secrets", role.Name, rule.Verbs)
				case core && strings.HasPrefix(resource, "pods/"):
					t.Errorf("role %s grants %v on %s", role.Name, rule.Verbs, resource)
				case core && resource == "pods" && slices.ContainsFunc(rule.Verbs, func(v string) bool { return v != "list" && v != "watch" && v != "get" }):
					t.Errorf("role %s grants %v on pods: the provider only reads them", role.Name, rule.Verbs)
				case core && resource == "nodes" && slices.Contains(rule.Verbs, "patch") && role.Name != "terraform-provider-training-node-taints":
					t.Errorf("role %s may change nodes; only terraform-provider-training-node-taints may", role.Name)
				}
			}
		}
	}
	namespaced := append(slices.Collect(maps.Keys(roleNamespaces)), slices.Collect(maps.Keys(optInRoles))...)
	for _, name := range append(append(slices.Clone(clusterWideRoles), namespaced...), jobsRole, "terraform-provider-training-local-queues", writeOnlyEnvRole) {
		if !names[name] {
			t.Errorf("%s has no role %s", rbacFile, name)
		}
	}
	if len(names) != len(clusterWideRoles)+len(namespaced)+3 {
		t.Errorf("%s has roles %v; the tests bind only those they know of", rbacFile, names)
	}
}

// Making, changing or deleting a Service, Deployment or NetworkPolicy lets an identity reroute
// or replace what any workload of the namespace serves: only the opt-in roles of the elastic
// jobs and the TensorBoards grant it, each for its own kinds; the jobs' role only reads them.
func TestOnlyOptInRolesWriteServicesDeploymentsAndNetworkPolicies(t *testing.T) {
	roles, err := readRoles()
	if err != nil {
		t.Fatal(err)
	}
	writes := func(v string) bool { return v != "get" && v != "list" && v != "watch" }
	for _, role := range roles {
		for _, rule := range role.Rules {
			for _, resource := range rule.Resources {
				if resource != "services" && resource != "deployments" && resource != "networkpolicies" {
					continue
				}
				if slices.ContainsFunc(rule.Verbs, writes) && !slices.Contains(optInRoles[role.Name], resource) {
					t.Errorf("role %s grants %v on %s; only the opt-in roles %v may write them", role.Name, rule.Verbs, resource, slices.Sorted(maps.Keys(optInRoles)))
				}
			}
		}
	}
}

// The identity the suite's provider acts as (bound to every shipped role) cannot change, delete,
// exec into or make a pod, nor read a Secret: a pod someone else made stays as it is.
func TestAccTheProvidersIdentityCannotChangeAPodItDidNotMake(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: acctest.RandomWithPrefix("tf-acc-notours"), Namespace: "default"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"no-such-node": "true"},
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	if _, err := a.kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.kube.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{}) })
	cfg, err := clientcmd.BuildConfigFromFlags("", providerKubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	as := kubernetes.NewForConfigOrDie(cfg)
	pods := as.CoreV1().Pods("default")
	patch := []byte(`{"spec":{"containers":[{"name":"app","image":"registry.example/swapped:1"}]}}`)
	for what, err := range map[string]error{
		"patch the pod's image": func() error {
			_, err := pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			return err
		}(),
		"delete the pod": pods.Delete(ctx, pod.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}),
		"make a pod": func() error {
			_, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name + "-2"}, Spec: pod.Spec},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}(),
		"exec into the pod": as.CoreV1().RESTClient().Post().Namespace("default").Resource("pods").Name(pod.Name).SubResource("exec").
			Param("container", "app").Param("command", "true").Do(ctx).Error(),
		"read a Secret": func() error {
			_, err := as.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
			return err
		}(),
	} {
		if !apierrors.IsForbidden(err) {
			t.Errorf("the provider's identity may %s (err %v), want 403 Forbidden", what, err)
		}
	}
	got, err := a.kube.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil || got.Spec.Containers[0].Image != pod.Spec.Containers[0].Image {
		t.Errorf("the pod was changed: %v %v", err, got)
	}
}

// The job resources need the jobs' role alone: an identity bound to nothing else (a RoleBinding
// in its namespace) creates a job, waits for it to run, refreshes it to an empty plan and
// destroys it. The plan's checks that need more (the nodes, the queues) are skipped.
func TestAccJobsNeedOnlyTheJobsRole(t *testing.T) {
	a := newAPI(t)
	roles, err := readRoles()
	if err != nil {
		t.Fatal(err)
	}
	roles = slices.DeleteFunc(roles, func(r rbacv1.ClusterRole) bool { return r.Name != jobsRole })
	kubeconfig, err := serviceAccountKubeconfig(clustertest.Kubeconfig(), "terraform-jobs-only", roles, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Locked once running in parallel: a test that paused holding the lock would keep the tests
	// that wait for it from ever giving up their places.
	t.Parallel()
	nodeTaintsMu.RLock()
	defer nodeTaintsMu.RUnlock()
	name := mpiJobName()
	config := fmt.Sprintf("provider \"training\" {\n  config_path = %q\n}\n", kubeconfig) + mpiJobBlock("test", name, "  tolerations = [\"ssd_node\"]\n")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, name),
		Steps: []resource.TestStep{
			{Config: config, ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("training_mpi_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running))}},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// An elastic job writes Services and a NetworkPolicy beside its Framework, which the jobs' role
// does not grant: with that role alone, the apply fails naming the opt-in role to bind, and
// leaves nothing behind; with that role bound too, the job is made, runs, and is destroyed.
func TestAccElasticJobsNeedTheirOptInRole(t *testing.T) {
	a := newAPI(t)
	roles, err := readRoles()
	if err != nil {
		t.Fatal(err)
	}
	only := func(names ...string) []rbacv1.ClusterRole {
		return slices.DeleteFunc(slices.Clone(roles), func(r rbacv1.ClusterRole) bool { return !slices.Contains(names, r.Name) })
	}
	jobsOnly, err := serviceAccountKubeconfig(clustertest.Kubeconfig(), "terraform-no-elastic", only(jobsRole), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	withElastic, err := serviceAccountKubeconfig(clustertest.Kubeconfig(), "terraform-elastic", only(jobsRole, elasticJobsRole), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	name := elasticJobName()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy:             checkNothingLeft(a, name),
		Steps: []resource.TestStep{
			{
				Config:      elasticWorkspaceConfig(jobsOnly, name, 2),
				ExpectError: regexp.MustCompile(`(?s)forbidden.*needs the ClusterRole\s+` + elasticJobsRole + `.*bound in namespace\s+default`),
			},
			{
				PreConfig: func() {
					if err := checkNothingLeft(a, name)(nil); err != nil {
						t.Errorf("the refused apply: %v", err)
					}
				},
				Config: elasticWorkspaceConfig(withElastic, name, 2),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("training_elastic_job.test", tfjsonpath.New("status"), knownvalue.StringExact(jobs.Running))},
			},
		},
	})
}
