package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// MultiKueue's objects as code, judged by what the local cluster's Kueue (MultiKueue on) says of
// them: worker clusters whose kubeconfig Secret is missing, lacks its key, or holds no
// kubeconfig are not connected, each with MultiKueue's reason and message; the admission check
// of a config of those clusters has no usable cluster; the ClusterQueue lists the check. The
// Secret's contents are in neither the state nor the plan. Each object imports exactly, and a
// second plan is empty; destroy leaves nothing.
func TestAccMultiKueue_workerClustersWithABadKubeconfigAreNotConnectedAndSayWhy(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	prefix := acctest.RandomWithPrefix("tf-acc-mk")
	const garbage = "this is no kubeconfig: ["
	for name, data := range map[string]map[string]string{
		prefix + "-garbage": {kueue.KubeconfigSecretKey: garbage},
		prefix + "-nokey":   {"config": garbage},
	} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster.KueueNamespace}, StringData: data}
		if _, err := a.kube.CoreV1().Secrets(cluster.KueueNamespace).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = a.kube.CoreV1().Secrets(cluster.KueueNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	config := providerConfig() + fmt.Sprintf(`
resource "training_multikueue_cluster" "missing" {
  name              = "%[1]s-missing"
  kubeconfig_secret = "%[1]s-none"
}

resource "training_multikueue_cluster" "nokey" {
  name              = "%[1]s-nokey"
  kubeconfig_secret = "%[1]s-nokey"
}

resource "training_multikueue_cluster" "garbage" {
  name              = "%[1]s-garbage"
  kubeconfig_secret = "%[1]s-garbage"
}

resource "training_multikueue_config" "fleet" {
  name     = "%[1]s-fleet"
  clusters = [training_multikueue_cluster.missing.name, training_multikueue_cluster.nokey.name, training_multikueue_cluster.garbage.name]
}

resource "training_admission_check" "fleet" {
  name              = "%[1]s-fleet"
  multikueue_config = training_multikueue_config.fleet.name
}

resource "training_resource_flavor" "cpu" {
  name = "%[1]s-cpu"
}

resource "training_cluster_queue" "fleet" {
  name             = "%[1]s-fleet"
  admission_checks = [training_admission_check.fleet.name]
  resource_group {
    covered_resources = ["cpu"]
    flavor {
      name = training_resource_flavor.cpu.name
      resource {
        name          = "cpu"
        nominal_quota = "8"
      }
    }
  }
}
`, prefix)
	objects := []struct {
		gvr  schema.GroupVersionResource
		name string
	}{
		{kueue.MultiKueueClusterGVR, prefix + "-missing"}, {kueue.MultiKueueClusterGVR, prefix + "-nokey"}, {kueue.MultiKueueClusterGVR, prefix + "-garbage"},
		{kueue.MultiKueueConfigGVR, prefix + "-fleet"}, {kueue.AdmissionCheckGVR, prefix + "-fleet"}, {kueue.ClusterQueueGVR, prefix + "-fleet"},
	}
	notConnected := func(address, reason, message string) resource.TestCheckFunc {
		return resource.ComposeTestCheckFunc(
			resource.TestCheckResourceAttr(address, "active", "false"),
			resource.TestMatchResourceAttr(address, "reason", regexp.MustCompile("^"+reason+"$")),
			resource.TestMatchResourceAttr(address, "message", regexp.MustCompile(message)))
	}
	imported := func(address, id string) resource.TestStep {
		return resource.TestStep{ResourceName: address, ImportState: true, ImportStateId: id, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"}}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			for _, o := range objects {
				if _, err := a.get(o.gvr, "", o.name); err == nil {
					return fmt.Errorf("%s %s is left after destroy", o.gvr.Resource, o.name)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: config, Check: resource.ComposeTestCheckFunc(
				notConnected("training_multikueue_cluster.missing", "BadKubeConfig", regexp.QuoteMeta(fmt.Sprintf(`Secret "%s-none" not found`, prefix))),
				notConnected("training_multikueue_cluster.nokey", "BadKubeConfig", regexp.QuoteMeta(`key "kubeconfig" not found`)),
				notConnected("training_multikueue_cluster.garbage", "(BadKubeConfig|InsecureKubeConfig)", "."),
				notConnected("training_admission_check.fleet", "NoUsableClusters", "Inactive clusters"),
				func(s *terraform.State) error {
					for _, r := range s.RootModule().Resources {
						for k, v := range r.Primary.Attributes {
							if strings.Contains(v, garbage) {
								return fmt.Errorf("%s.%s holds the Secret's contents", r.Type, k)
							}
						}
					}
					queue, err := a.get(kueue.ClusterQueueGVR, "", prefix+"-fleet")
					if err != nil {
						return err
					}
					spec, err := kueue.ReadClusterQueue(queue)
					if err != nil {
						return err
					}
					if !slices.Equal(spec.AdmissionChecks, []string{prefix + "-fleet"}) {
						return fmt.Errorf("the ClusterQueue's admission checks are %q", spec.AdmissionChecks)
					}
					return nil
				},
			)},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			imported("training_multikueue_cluster.garbage", prefix+"-garbage"),
			imported("training_multikueue_config.fleet", prefix+"-fleet"),
			imported("training_admission_check.fleet", prefix+"-fleet"),
			imported("training_cluster_queue.fleet", prefix+"-fleet"),
		},
	})
}
