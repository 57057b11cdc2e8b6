package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// Helpers of the provider's acceptance tests: what is left in the cluster after a destroy.

// checkJobsGone checks, for every job resource in the state that destroy ran on, that nothing of
// the job is left (jobGone).
func checkJobsGone(a *api) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for _, rs := range s.RootModule().Resources {
			name, isJob := strings.CutSuffix(strings.TrimPrefix(rs.Type, "training_"), "_job")
			if kind := jobs.KindByName(name); isJob && kind != nil {
				if err := jobGone(a, kind, rs.Primary.Attributes["namespace"], rs.Primary.Attributes["name"]); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// namedJobsGone reports, for a test that drove the CLI itself (no state to read), every job of
// that kind and name in namespace default of which something is left.
func namedJobsGone(t *testing.T, a *api, kind *jobs.Kind, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := jobGone(a, kind, "default", name); err != nil {
			t.Error(err)
		}
	}
}

// checkGone checks that nothing is left of the job of that kind and name in namespace default.
func checkGone(a *api, kind *jobs.Kind, name string) resource.TestCheckFunc {
	return func(*terraform.State) error { return jobGone(a, kind, "default", name) }
}

// jobGone says what is left of a job after destroy: its object, its dependents (an elastic
// job's Services and policy), an object its operator made under its name (a TrainJob's JobSet),
// its pods, or anything owned by it or by what is named after it.
func jobGone(a *api, kind *jobs.Kind, namespace, name string) error {
	if _, err := a.get(kind.GVR, namespace, name); !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s/%s still exists after destroy (err=%v)", kind.Object, namespace, name, err)
	}
	for _, d := range kind.Dependents(name) {
		if _, err := a.get(d.GVR, namespace, d.Name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s of %s %s/%s still exists after destroy (err=%v)", d, kind.Object, namespace, name, err)
		}
	}
	for _, gvr := range kind.Owns {
		if _, err := a.get(gvr, namespace, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s/%s of %s %[2]s/%[3]s still exists after destroy (err=%v)", gvr.Resource, namespace, name, kind.Object, err)
		}
	}
	if pods := a.pods(namespace, kind.PodSelector(name)); len(pods) > 0 {
		return fmt.Errorf("%d pods of %s %s/%s are left after destroy", len(pods), kind.Object, namespace, name)
	}
	return a.checkNothingOwned(namespace, name)
}

// operatorMade are the resources of what the operators make for a job that destroy waits for:
// Services, ConfigMaps, batch Jobs and JobSets (not mpi-operator's Secret: the provider does not
// read Secrets). It is the tests' own list, not the kinds' (jobs.Kind.Owns).
var operatorMade = []schema.GroupVersionResource{jobs.ServiceGVR, {Version: "v1", Resource: "configmaps"},
	{Group: "batch", Version: "v1", Resource: "jobs"}, {Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}}

// checkNothingOwned fails if anything of operatorMade in the namespace has an owner of that name
// (the job, or the JobSet or launcher named after it): destroy waits until all of it is gone,
// so a job made again under the name never meets its predecessor's.
func (a *api) checkNothingOwned(namespace, owner string) error {
	var left []string
	for _, gvr := range operatorMade {
		list, err := a.dyn.Resource(gvr).Namespace(namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, item := range list.Items {
			for _, ref := range item.GetOwnerReferences() {
				if ref.Name == owner {
					left = append(left, fmt.Sprintf("%s/%s (owned by %s %s)", gvr.Resource, item.GetName(), ref.Kind, ref.Name))
				}
			}
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("left after destroy: %s", strings.Join(left, ", "))
	}
	return nil
}

// checkNothingLeft checks that no job, Service or pod whose name starts with prefix is left.
func checkNothingLeft(a *api, prefix string) func(*terraform.State) error {
	return func(*terraform.State) error {
		ctx := context.Background()
		var left []string
		for _, gvr := range []schema.GroupVersionResource{jobs.MPI.GVR, jobs.Elastic.GVR, jobs.TF.GVR, jobs.ServiceGVR, jobs.DeploymentGVR,
			{Version: "v1", Resource: "pods"}} {
			list, err := a.dyn.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, item := range list.Items {
				if strings.HasPrefix(item.GetName(), prefix) {
					left = append(left, gvr.Resource+"/"+item.GetName())
				}
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("left in the cluster after destroy: %s", strings.Join(left, ", "))
		}
		return nil
	}
}

// waitGone checks that the job object is gone (destroy waits for it).
func (a *api) waitGone(kind *jobs.Kind, namespace, name string) error {
	if _, err := a.get(kind.GVR, namespace, name); !apierrors.IsNotFound(err) {
		return fmt.Errorf("still there (err=%v)", err)
	}
	return nil
}

// namespace makes a namespace of its own for the test, named from prefix and with labels, that
// the provider under test may manage jobs in, and deletes it when the test ends.
func (a *api) namespace(prefix string, labels map[string]string) string {
	a.t.Helper()
	ns := acctest.RandomWithPrefix(prefix)
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}
	if _, err := a.kube.CoreV1().Namespaces().Create(context.Background(), namespace, metav1.CreateOptions{}); err != nil {
		a.t.Fatal(err)
	}
	a.t.Cleanup(func() { _ = a.kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	a.grantNamespace(ns)
	return ns
}
