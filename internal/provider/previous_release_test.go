package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tfState is the part of a Terraform state file this test rewrites.
type tfState struct {
	Resources []struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Instances []struct {
			Attributes map[string]any `json:"attributes"`
		} `json:"instances"`
	} `json:"resources"`
}

// State written by earlier releases (testdata/previous-release: each folder's state.json a job of
// every kind and a runtime, applied by the provider at that schema version) is upgraded by this one
// and plans no change against main.tf, the same configuration in this release's vocabulary (the
// folder's own, or the one beside the folders): without a refresh (the upgrade alone must say what
// the old provider did) and with one. v0 and v2 were applied with their written.tf; v1 with v2's
// (by c77963c); v3 with main.tf itself (by 0.1.0, 05a80f2). Version 0 is the provider before security_context, pod_patch and ssh_auth_mount_path;
// version 1 the one before fail_fast and min_running_seconds; version 2 the one before the one
// vocabulary (slots_per_worker, scheduling_policy, launcher_cpu, ps_cpu, etcd_image, toleration
// and single blocks); version 3 release 0.1.0, before checkpoint, protect_running and
// accelerator_hours.
func TestAccPreviousRelease_stateItWroteReadsWithoutAChange(t *testing.T) {
	for _, version := range []int{0, 1, 2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			a := newAPI(t)
			t.Parallel()
			ns := a.namespace(fmt.Sprintf("tf-acc-previous-v%d", version), nil)
			read := func(name string) string {
				dir := filepath.Join("testdata", "previous-release")
				raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("v%d", version), name))
				if os.IsNotExist(err) {
					raw, err = os.ReadFile(filepath.Join(dir, name))
				}
				if err != nil {
					t.Fatal(err)
				}
				return strings.ReplaceAll(string(raw), "NAMESPACE", ns)
			}
			w := newWorkspace(t)
			// The jobs, made by this release without waiting for them to run (what runs is not
			// what this test is about); then the earlier release's state of them in its place,
			// with their UIDs.
			made := regexp.MustCompile(`(?m)^\s*wait_for\s*=.*\n`).ReplaceAllString(read("main.tf"), "")
			made = regexp.MustCompile(`(?m)^(resource "training_[a-z]+_job" .*\{)$`).ReplaceAllString(made, "$1\n  wait_for = \"created\"")
			w.write(providerConfig() + made)
			w.run("apply", "-auto-approve", "-input=false")
			t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })
			w.write(providerConfig() + read("main.tf"))
			current, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
			if err != nil {
				t.Fatal(err)
			}
			var now tfState
			if err := json.Unmarshal(current, &now); err != nil {
				t.Fatal(err)
			}
			uids := map[string]any{}
			for _, r := range now.Resources {
				if len(r.Instances) == 1 {
					uids[r.Type+"."+r.Name] = r.Instances[0].Attributes["uid"]
				}
			}
			var previous map[string]any
			if err := json.Unmarshal([]byte(read("state.json")), &previous); err != nil {
				t.Fatal(err)
			}
			resources, _ := previous["resources"].([]any)
			for _, r := range resources {
				m, _ := r.(map[string]any)
				instances, _ := m["instances"].([]any)
				typ, _ := m["type"].(string)
				name, _ := m["name"].(string)
				for _, i := range instances {
					instance, _ := i.(map[string]any)
					if v, _ := instance["schema_version"].(float64); int(v) != version {
						t.Fatalf("%s.%s of the v%d state is at schema version %v: it is not that release's", typ, name, version, v)
					}
					attributes, _ := instance["attributes"].(map[string]any)
					if _, has := attributes["uid"]; has {
						attributes["uid"] = uids[typ+"."+name]
					}
				}
			}
			state, err := json.Marshal(previous)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.dir, "terraform.tfstate"), state, 0o600); err != nil {
				t.Fatal(err)
			}
			w.planIsEmpty("-refresh=false")
			w.planIsEmpty()
		})
	}
}
