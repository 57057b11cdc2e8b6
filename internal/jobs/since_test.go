package jobs

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A field of fieldsSince is found wherever a list step of its path holds it, and only there.
func TestFieldsSinceInFindsTheFieldInAnyItemOfAList(t *testing.T) {
	grace := func(secondJob bool) *unstructured.Unstructured {
		job := map[string]any{"name": "node", "template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{}}}}}
		withGrace := map[string]any{"name": "launcher", "template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"terminationGracePeriodSeconds": int64(300)}}}}}
		jobs := []any{job}
		if secondJob {
			jobs = append(jobs, withGrace)
		}
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"runtimePatches": []any{
			map[string]any{"manager": "a"},
			map[string]any{"manager": "b", "trainingRuntimeSpec": map[string]any{"template": map[string]any{"spec": map[string]any{"replicatedJobs": jobs}}}},
		}}}}
	}
	if got := FieldsSinceIn(Train.GVR, grace(true)); len(got) != 1 || got[0].Attribute != "termination_grace_period_seconds" {
		t.Errorf("a TrainJob whose second patch's second job sets the grace: %+v", got)
	}
	if got := FieldsSinceIn(Train.GVR, grace(false)); len(got) != 0 {
		t.Errorf("a TrainJob without the grace: %+v", got)
	}
	if got := FieldsSinceIn(MPI.GVR, grace(true)); len(got) != 0 {
		t.Errorf("another kind with the same path: %+v", got)
	}
	want := "spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.terminationGracePeriodSeconds"
	if got := fieldsSince[0].Field(); got != want {
		t.Errorf("Field() = %s, want %s", got, want)
	}
}

// A field the schema refuses tells the operator's release: older than the release that added a
// field whose history the provider knows; for another field, older than the oldest release
// supported or newer than those tested; for an API the provider has no requirement of, neither.
func TestAnUnknownFieldSaysWhetherTheOperatorIsOlderOrNewer(t *testing.T) {
	grace := "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[1].template.spec.template.spec.terminationGracePeriodSeconds"
	for _, c := range []struct {
		gvr    schema.GroupVersionResource
		fields []string
		want   []string
	}{
		{Train.GVR, []string{"spec.other", grace}, []string{
			"Kubeflow Trainer on the cluster is older than v2.3.0, which added spec.runtimePatches[*]", "remove termination_grace_period_seconds"}},
		{MPI.GVR, []string{"spec.runPolicy.managedBy"}, []string{
			"mpi-operator on the cluster is either older than v0.4.0", "or newer than the releases it is tested with (the provider is tested with v0.8.2"}},
		{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "things"}, nil, []string{
			"the operator that serves things.example.com is older or newer than the provider expects"}},
	} {
		got := UnknownFieldsMessage(c.gvr, c.fields)
		for _, want := range c.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s %v: %q does not say %q", c.gvr.Resource, c.fields, got, want)
			}
		}
	}
}
