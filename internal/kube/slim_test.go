package kube

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
)

// wholeWorker is a worker pod as the API server lists it: a spec of its own (containers, environment,
// volumes, tolerations), annotations and managed fields beside what a read looks at.
func wholeWorker(name, roleLabel string, status corev1.PodStatus) corev1.Pod {
	created := metav1.NewTime(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-" + name), ResourceVersion: "42", CreationTimestamp: created,
			Labels:        map[string]string{roleLabel: "worker", "training.kubeflow.org/replica-index": "1"},
			Annotations:   map[string]string{"sidecar.istio.io/inject": "false"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec: corev1.PodSpec{
			NodeName: "gpu-node-1",
			Containers: []corev1.Container{{
				Name: "main", Image: "pytorch/pytorch:2.5.1", Command: []string{"torchrun", "train.py"},
				Env:       []corev1.EnvVar{{Name: "EPOCHS", Value: "3"}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
			}},
			Volumes:          []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Tolerations:      []corev1.Toleration{{Key: "gpu_node", Operator: corev1.TolerationOpExists}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry-credentials"}},
		},
		Status: status,
	}
}

func running() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", ContainerStatuses: []corev1.ContainerStatus{{
		Name: "main", Ready: true, Image: "pytorch/pytorch:2.5.1", ImageID: "sha256:abc",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
	}}}
}

func waiting(reason string, restarts int32) corev1.PodStatus {
	return waitingFor(reason, "the kubelet says why", restarts)
}

func waitingFor(reason, message string, restarts int32) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "main", RestartCount: restarts, Image: "pytorch/pytorch:2.5.1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
	}}}
}

// seenAMinuteBefore is a wait's memory that first saw the pods a minute before now (past PullGrace, within MissingGrace), their
// containers not yet restarted.
func seenAMinuteBefore(pods []corev1.Pod, now time.Time) *jobs.Memory {
	m := new(jobs.Memory)
	first := make([]corev1.Pod, len(pods))
	for i := range pods {
		first[i] = *pods[i].DeepCopy()
		for j := range first[i].Status.ContainerStatuses {
			first[i].Status.ContainerStatuses[j].RestartCount = 0
		}
	}
	m.PodFailure(first, now.Add(-time.Minute))
	return m
}

// A pod as a shared list or an informer keeps it (slimPod) reads as the whole pod: every
// kind's status and instances, whether the job runs as expected, and why a pod cannot run are
// the same, for running pods, a pod whose image cannot be pulled, a crash loop, a pod being
// deleted and one not yet scheduled; and it holds nothing of the pod's spec but its node and
// its pull Secrets' names.
func TestASlimPodReadsAsTheWholePod(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, kind := range jobs.Kinds() {
		if kind.InstancesFromObject {
			continue // a Framework's instances are its tasks, read from the object
		}
		obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"conditions": []any{map[string]any{"type": "Running", "status": "True"}},
			"startTime":  "2026-11-25T10:00:00Z",
		}}}
		deleting := wholeWorker("w-2", kind.RoleLabel, running())
		deleting.DeletionTimestamp = &metav1.Time{Time: now}
		unscheduled := wholeWorker("w-3", kind.RoleLabel, corev1.PodStatus{Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/6 nodes are available"}}})
		unscheduled.Spec.NodeName = ""
		for what, pods := range map[string][]corev1.Pod{
			"running":                 {wholeWorker("w-0", kind.RoleLabel, running()), wholeWorker("w-1", kind.RoleLabel, running())},
			"an image not pulled":     {wholeWorker("w-0", kind.RoleLabel, running()), wholeWorker("w-1", kind.RoleLabel, waiting("ImagePullBackOff", 0))},
			"an image refused":        {wholeWorker("w-0", kind.RoleLabel, running()), wholeWorker("w-1", kind.RoleLabel, waitingFor("ErrImagePull", "pull access denied", 0))},
			"a crash loop":            {wholeWorker("w-0", kind.RoleLabel, waiting("CrashLoopBackOff", 5)), wholeWorker("w-1", kind.RoleLabel, running())},
			"a pod being deleted":     {wholeWorker("w-0", kind.RoleLabel, running()), deleting},
			"a pod not yet scheduled": {wholeWorker("w-0", kind.RoleLabel, running()), unscheduled},
		} {
			slim := make([]corev1.Pod, len(pods))
			for i := range pods {
				slim[i] = *slimPod(&pods[i])
				if slim[i].Spec.Containers != nil || slim[i].Spec.Volumes != nil || slim[i].ManagedFields != nil || slim[i].Annotations != nil {
					t.Fatalf("%s, %s: the slim pod holds more than a read looks at: %+v", kind.Name, what, slim[i].Spec)
				}
			}
			whole, err := kind.Status(jobs.Observed{Object: obj, Pods: pods}, now)
			if err != nil {
				t.Fatalf("%s, %s: %v", kind.Name, what, err)
			}
			got, err := kind.Status(jobs.Observed{Object: obj, Pods: slim}, now)
			if err != nil {
				t.Fatalf("%s, %s: %v", kind.Name, what, err)
			}
			if diff := cmp.Diff(whole, got); diff != "" {
				t.Errorf("%s, %s: the status read otherwise (-whole +slim):\n%s", kind.Name, what, diff)
			}
			w := jobs.RunningWait{Expect: map[string]int{"worker": 2}, FailFast: jobs.FailFastPermanent, MinRunning: 10 * time.Second}
			w.Memory = seenAMinuteBefore(pods, now)
			wholeRuns, wholeNext, wholeErr := kind.Running(jobs.Observed{Object: obj, Pods: pods}, w, now)
			w.Memory = seenAMinuteBefore(slim, now)
			slimRuns, slimNext, slimErr := kind.Running(jobs.Observed{Object: obj, Pods: slim}, w, now)
			if wholeRuns != slimRuns || wholeNext != slimNext || (wholeErr == nil) != (slimErr == nil) || (wholeErr != nil && wholeErr.Error() != slimErr.Error()) {
				t.Errorf("%s, %s: runs %v (%v, next %s), the whole pods %v (%v, next %s)", kind.Name, what, slimRuns, slimErr, slimNext, wholeRuns, wholeErr, wholeNext)
			}
			wholeFailure, _ := seenAMinuteBefore(pods, now).PodFailure(pods, now)
			if slimFailure, _ := seenAMinuteBefore(slim, now).PodFailure(slim, now); wholeFailure != slimFailure {
				t.Errorf("%s, %s: the failure %q, the whole pods' %q", kind.Name, what, slimFailure, wholeFailure)
			}
		}
	}
}
