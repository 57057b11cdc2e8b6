package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kubetrain/terraform-provider-training/cluster"
)

// rbacFile is the least-privilege RBAC the docs ship; the acceptance suite's provider acts as
// a ServiceAccount bound to exactly these roles.
const rbacFile = "../../examples/rbac/provider-rbac.yaml"

// clusterWideRoles are the roles of rbacFile that are bound cluster-wide (nodes, Kueue's
// cluster-scoped quotas, ClusterTrainingRuntimes); the other is bound in the test namespace only.
var clusterWideRoles = []string{"terraform-provider-training-nodes", "terraform-provider-training-quotas", "terraform-provider-training-runtimes"}

// serviceAccountNamespace holds the test ServiceAccounts; jobs are in "default".
const serviceAccountNamespace = "kube-system"

var leastPrivilegeKubeconfig, leastPrivilegeDir string

// setUpLeastPrivilege makes the ServiceAccount the provider under test acts as, bound to the
// roles of rbacFile, and a kubeconfig for it.
func setUpLeastPrivilege(adminKubeconfig string) error {
	roles, err := readRoles(rbacFile)
	if err != nil {
		return err
	}
	if leastPrivilegeDir, err = os.MkdirTemp("", "tf-acc-rbac-"); err != nil {
		return err
	}
	leastPrivilegeKubeconfig, err = serviceAccountKubeconfig(adminKubeconfig, "terraform", roles, leastPrivilegeDir)
	return err
}

func readRoles(path string) ([]rbacv1.ClusterRole, error) {
	roles, err := cluster.ReadObjects[rbacv1.ClusterRole](path)
	if err != nil {
		return nil, err
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("%s holds no ClusterRole", path)
	}
	for _, role := range roles {
		if role.Kind != "ClusterRole" {
			return nil, fmt.Errorf("%s: unexpected %s %s", path, role.Kind, role.Name)
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
			binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: "default"}, RoleRef: ref, Subjects: subject}
			err = replace(ctx, kube.RbacV1().RoleBindings("default"), binding)
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
