package provider

import (
	"encoding/json"
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

// State written by the previous release (testdata/previous-release: a job of every kind and a
// runtime, applied by the provider before security_context, pod_patch and ssh_auth_mount_path
// existed) is read by this one, whose schema only added attributes (version 0 still, no
// upgrader), and plans no change against the configuration it was applied with.
func TestAccPreviousRelease_stateItWroteReadsWithoutAChange(t *testing.T) {
	a := newAPI(t)
	t.Parallel()
	ns := a.namespace("tf-acc-previous", nil)
	read := func(name string) string {
		raw, err := os.ReadFile(filepath.Join("testdata", "previous-release", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(raw), "NAMESPACE", ns)
	}
	w := newWorkspace(t)
	// The jobs, made by this release without waiting for them to run (what runs is not what this
	// test is about); then the previous release's state of them in its place, with their UIDs.
	w.write(providerConfig() + regexp.MustCompile(`(?m)^(resource "training_[a-z]+_job" .*\{)$`).ReplaceAllString(read("main.tf"), "$1\n  wait_for = \"created\""))
	w.run("apply", "-auto-approve", "-input=false")
	w.write(providerConfig() + read("main.tf"))
	t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })
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
			attributes, _ := instance["attributes"].(map[string]any)
			if _, has := attributes["uid"]; has {
				attributes["uid"] = uids[typ+"."+name]
			}
			for _, added := range []string{"security_context", "pod_patch", "ssh_auth_mount_path", "cpu_limit", "host_network"} {
				if _, has := attributes[added]; has {
					t.Fatalf("the previous release's state has %s: it is not that release's", added)
				}
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
	// Without a refresh the plan compares the configuration with the old state alone: an
	// attribute added since must read as what the old provider did, not as a change.
	w.planIsEmpty("-refresh=false")
	w.planIsEmpty()
}
