package jobs

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
