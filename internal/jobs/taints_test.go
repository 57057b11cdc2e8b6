package jobs

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestTaintEditsLeaveOthersAlone(t *testing.T) {
	foreign := []corev1.Taint{
		{Key: "gpu_node", Value: "invalid", Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoExecute},
	}
	mine := corev1.Taint{Key: "dedicated", Value: "ml", Effect: corev1.TaintEffectNoSchedule}
	added, err := WithTaint(foreign, mine, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(append([]corev1.Taint{}, foreign...), mine), added); diff != "" {
		t.Errorf("add (-want +got):\n%s", diff)
	}
	if again, err := WithTaint(added, mine, true); err != nil || len(again) != 3 {
		t.Errorf("this create's own earlier attempt: %v, %v", again, err)
	}
	// An identical taint that someone else set is not taken over either.
	if _, err := WithTaint(added, mine, false); err == nil {
		t.Error("an identical taint that Terraform did not add was adopted")
	}
	if _, err := WithTaint(added, corev1.Taint{Key: "gpu_node", Value: "other", Effect: corev1.TaintEffectNoSchedule}, true); err == nil {
		t.Error("a foreign taint of the same key and effect was overwritten")
	}
	if diff := cmp.Diff(foreign, WithoutTaint(added, "dedicated", corev1.TaintEffectNoSchedule)); diff != "" {
		t.Errorf("remove (-want +got):\n%s", diff)
	}
	var ops []map[string]any
	if err := json.Unmarshal(TaintPatch("42", nil), &ops); err != nil {
		t.Fatal(err)
	}
	if ops[0]["op"] != "test" || ops[0]["value"] != "42" || ops[1]["path"] != "/spec/taints" {
		t.Errorf("patch %v is not guarded by the resourceVersion", ops)
	}
}
