package jobs

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func TestElasticRescalePatch(t *testing.T) {
	// The seed's scale-down 4 -> 2, with one more test op: the count Terraform last read.
	var ops []map[string]any
	if err := json.Unmarshal(Elastic.RescalePatch(4, 2), &ops); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"op": "test", "path": "/spec/taskRoles/1/name", "value": "worker"},
		{"op": "test", "path": "/spec/taskRoles/1/taskNumber", "value": 4.0},
		{"op": "replace", "path": "/spec/taskRoles/1/taskNumber", "value": 2.0},
		{"op": "replace", "path": "/spec/taskRoles/1/frameworkAttemptCompletionPolicy/minSucceededTaskCount", "value": 2.0},
	}
	if diff := cmp.Diff(want, ops); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	fw, _, _, err := NewElasticJob(seedElasticSpec())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := Elastic.Workers(fw); err != nil || n != 4 {
		t.Errorf("ElasticWorkers = %d, %v; want 4", n, err)
	}
}

func TestFrameworkStatus(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	node := "n1"
	status := func(state, completion string) *unstructured.Unstructured {
		attempt := map[string]any{
			"taskRoleStatuses": []any{
				map[string]any{"name": "etcd", "taskStatuses": []any{
					map[string]any{"index": int64(0), "state": "AttemptRunning", "attemptStatus": map[string]any{"podName": "pet-etcd-0", "podNodeName": node}},
				}},
				map[string]any{"name": "worker", "taskStatuses": []any{
					map[string]any{"index": int64(0), "state": "AttemptRunning", "attemptStatus": map[string]any{"podName": "pet-worker-0", "podNodeName": node}},
					map[string]any{"index": int64(1), "state": "AttemptCreationPending", "attemptStatus": map[string]any{"podName": "pet-worker-1"}},
				}},
			},
		}
		st := map[string]any{"startTime": start.Format(time.RFC3339), "state": state, "attemptStatus": attempt}
		if completion != "" {
			st["completionTime"] = start.Add(time.Minute).Format(time.RFC3339)
			attempt["completionStatus"] = map[string]any{"type": map[string]any{"name": completion}, "diagnostics": "exit 1"}
		}
		return &unstructured.Unstructured{Object: map[string]any{"status": st}}
	}
	cases := []struct {
		obj      *unstructured.Unstructured
		phase    string
		duration time.Duration
		failure  bool
	}{
		{&unstructured.Unstructured{Object: map[string]any{}}, Pending, 0, false},
		{status("AttemptCreationPending", ""), Pending, 30 * time.Second, false},
		{status("AttemptRunning", ""), Running, 30 * time.Second, false},
		{status("Completed", "Succeeded"), Succeeded, time.Minute, false},
		{status("Completed", "Failed"), Failed, time.Minute, true},
		// An attempt ended and the framework retries: restarting is running, as in `arena get`.
		{status("AttemptCompleted", "Failed"), Running, time.Minute, false},
		{status("AttemptDeleting", ""), Running, 30 * time.Second, false},
		{retried(status("AttemptCreationPending", "")), Running, 30 * time.Second, false},
	}
	for _, c := range cases {
		got, err := readFrameworkStatus(c.obj, start.Add(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if got.Phase != c.phase || got.Duration != c.duration {
			t.Errorf("state %v: phase %s duration %s, want %s %s", c.obj.Object["status"], got.Phase, got.Duration, c.phase, c.duration)
		}
		if (frameworkFailure(c.obj) != "") != c.failure {
			t.Errorf("frameworkFailure(%s) = %q", got.Phase, frameworkFailure(c.obj))
		}
	}
	got, _ := readFrameworkStatus(status("AttemptRunning", ""), start)
	want := []Instance{
		{Name: "pet-etcd-0", Role: "etcd", Phase: "Running", Node: "n1"},
		{Name: "pet-worker-0", Role: "worker", Phase: "Running", Node: "n1"},
		{Name: "pet-worker-1", Role: "worker", Index: 1, Phase: "Pending"},
	}
	if diff := cmp.Diff(want, got.Instances); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
}

func retried(obj *unstructured.Unstructured) *unstructured.Unstructured {
	_ = unstructured.SetNestedField(obj.Object, int64(1), "status", "retryPolicyStatus", "totalRetriedCount")
	return obj
}

func TestFrameworkStatusOfSeedCompletedFramework(t *testing.T) {
	data, err := os.ReadFile("testdata/seed-framework-completed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&obj.Object); err != nil {
		t.Fatal(err)
	}
	got, err := readFrameworkStatus(obj, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// 06:52:25 to 07:56:14, as the seed's status says.
	if got.Phase != Succeeded || got.Duration != 63*time.Minute+49*time.Second {
		t.Errorf("phase %s duration %s, want SUCCEEDED 1h3m49s", got.Phase, got.Duration)
	}
	want := []Instance{
		// The etcd was stopped when the attempt completed (FrameworkController's completion code
		// -220, of type Failed); the workers succeeded. In pods' words, as every kind's instances.
		{Name: "pet-etcd-0", Role: "etcd", Phase: "Failed", Node: "node11"},
		{Name: "pet-worker-0", Role: "worker", Phase: "Succeeded", Node: "node9"},
		{Name: "pet-worker-1", Role: "worker", Index: 1, Phase: "Succeeded", Node: "node10"},
		{Name: "pet-worker-2", Role: "worker", Index: 2, Phase: "Succeeded", Node: "node6"},
	}
	if diff := cmp.Diff(want, got.Instances, cmpopts.IgnoreFields(Instance{}, "Created")); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
	// worker-2 joined at the seed's scale-up, 42 minutes into the training.
	if c := got.Instances[3].Created; !c.Equal(time.Date(2020, 7, 31, 7, 34, 55, 0, time.UTC)) {
		t.Errorf("pet-worker-2 created %s, want the scale-up's 07:34:55", c)
	}
	if n, err := Elastic.Workers(obj); err != nil || n != 3 {
		t.Errorf("ElasticWorkers = %d, %v; want 3 (after the seed's rescale)", n, err)
	}
}
