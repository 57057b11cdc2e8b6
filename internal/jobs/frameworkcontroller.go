package jobs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// FrameworkController's side of an elastic job: a mirror of the fields of its Framework API
// (frameworkcontroller.microsoft.com/v1) that this provider writes and reads, FrameworkController's
// own module being from Kubernetes 1.16 and not importable here, and what a Framework says of
// itself: its roles, worker count, rescale, status and failure.

// frameworkRoles are the roles of a Framework: its task roles.
func frameworkRoles(obj *unstructured.Unstructured) ([]RolePods, error) {
	roles, _, _ := unstructured.NestedSlice(obj.Object, "spec", "taskRoles")
	var out []RolePods
	for _, r := range roles {
		m, _ := r.(map[string]any)
		name, _ := m["name"].(string)
		count, _ := m["taskNumber"].(int64)
		pod, _, _ := unstructured.NestedMap(m, "task", "pod")
		role, err := rolePods(name, count, pod)
		if err != nil {
			return nil, err
		}
		withoutNewerFields(&role.Template.Spec)
		out = append(out, role)
	}
	return out, nil
}

// frameworkTemplates are the pod templates of a Framework's task roles, by role, as the
// object's own maps.
func frameworkTemplates(obj *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	spec, _ := obj.Object["spec"].(map[string]any)
	roles, _ := spec["taskRoles"].([]any)
	for _, r := range roles {
		m, _ := r.(map[string]any)
		name, _ := m["name"].(string)
		task, _ := m["task"].(map[string]any)
		if pod, ok := task["pod"].(map[string]any); ok {
			out[name] = pod
		}
	}
	return out
}

// frameworkControllerDrops says what FrameworkController v1.0.1 leaves out of the pods it makes.
const frameworkControllerDrops = "FrameworkController v1.0.1 makes its pods with Kubernetes 1.16's types, which have no seccompProfile: " +
	"it drops the one a job sets, so Pod Security \"restricted\" refuses an elastic job's pods whatever its security_context says"

// withoutNewerFields is a pod spec as FrameworkController v1.0.1 makes it of a task's template:
// it decodes the template into Kubernetes 1.16's types (pkg/apis/frameworkcontroller/v1's
// NewPod) and so drops what they lack; seccompProfile (1.19) is what Pod Security reads.
func withoutNewerFields(spec *corev1.PodSpec) {
	if spec.SecurityContext != nil {
		spec.SecurityContext.SeccompProfile = nil
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if cs[i].SecurityContext != nil {
				cs[i].SecurityContext.SeccompProfile = nil
			}
		}
	}
}

// FrameworkController's pod labels, and the task roles of an elastic job.
const (
	FrameworkNameLabel = "FC_FRAMEWORK_NAME"
	TaskRoleLabel      = "FC_TASKROLE_NAME"
	TaskIndexLabel     = "FC_TASK_INDEX"

	EtcdRole   = "etcd"
	WorkerRole = "worker"
	// workerRoleIndex is the worker role's index in spec.taskRoles, which the rescale patch tests.
	workerRoleIndex = 1
	etcdPort        = 2379
)

// FrameworkNamePattern is FrameworkController's rule for Framework names: no hyphens.
var FrameworkNamePattern = regexp.MustCompile(`^[a-z0-9]{1,63}$`)

// framework mirrors the fields of frameworkcontroller.microsoft.com/v1 Framework this provider
// sets; FrameworkController's own module is from Kubernetes 1.16 and cannot be imported here.
type framework struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              frameworkSpec `json:"spec"`
}

type frameworkSpec struct {
	ExecutionType string          `json:"executionType"`
	RetryPolicy   retryPolicy     `json:"retryPolicy"`
	TaskRoles     []*taskRoleSpec `json:"taskRoles"`
}

type retryPolicy struct {
	FancyRetryPolicy bool  `json:"fancyRetryPolicy"`
	MaxRetryCount    int32 `json:"maxRetryCount"`
}

type taskRoleSpec struct {
	Name                             string               `json:"name"`
	TaskNumber                       int32                `json:"taskNumber"`
	FrameworkAttemptCompletionPolicy completionPolicySpec `json:"frameworkAttemptCompletionPolicy"`
	Task                             taskSpec             `json:"task"`
}

type completionPolicySpec struct {
	MinFailedTaskCount    int32 `json:"minFailedTaskCount"`
	MinSucceededTaskCount int32 `json:"minSucceededTaskCount"`
}

type taskSpec struct {
	RetryPolicy                   retryPolicy            `json:"retryPolicy"`
	PodGracefulDeletionTimeoutSec *int64                 `json:"podGracefulDeletionTimeoutSec,omitempty"`
	Pod                           corev1.PodTemplateSpec `json:"pod"`
}

// elasticRescalePatch is the example's guarded JSON patch on /spec: it tests that the task role
// at the worker index is still "worker", and that its taskNumber is still what Terraform last
// read (so a concurrent rescale is not silently overwritten), then replaces taskNumber and
// minSucceededTaskCount together.
func elasticRescalePatch(from, to int32) []byte {
	role := fmt.Sprintf("/spec/taskRoles/%d", workerRoleIndex)
	patch, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": role + "/name", "value": WorkerRole},
		{"op": "test", "path": role + "/taskNumber", "value": from},
		{"op": "replace", "path": role + "/taskNumber", "value": to},
		{"op": "replace", "path": role + "/frameworkAttemptCompletionPolicy/minSucceededTaskCount", "value": to},
	})
	return patch
}

// elasticWorkers returns the worker taskNumber of a Framework object.
func elasticWorkers(obj *unstructured.Unstructured) (int32, error) {
	var f framework
	if err := fromUnstructured(obj, &f); err != nil {
		return 0, err
	}
	for _, r := range f.Spec.TaskRoles {
		if r != nil && r.Name == WorkerRole {
			return r.TaskNumber, nil
		}
	}
	return 0, fmt.Errorf("framework %s/%s has no %q task role", obj.GetNamespace(), obj.GetName(), WorkerRole)
}

// frameworkStatus mirrors the parts of FrameworkStatus the status mapping reads.
type frameworkStatus struct {
	Status *struct {
		StartTime      *metav1.Time `json:"startTime"`
		CompletionTime *metav1.Time `json:"completionTime"`
		State          string       `json:"state"`
		// TotalRetriedCount > 0 means an attempt before this one ran.
		RetryPolicyStatus struct {
			TotalRetriedCount int32 `json:"totalRetriedCount"`
		} `json:"retryPolicyStatus"`
		AttemptStatus struct {
			CompletionStatus *struct {
				Diagnostics string `json:"diagnostics"`
				Type        struct {
					Name string `json:"name"`
				} `json:"type"`
			} `json:"completionStatus"`
			TaskRoleStatuses []struct {
				Name         string `json:"name"`
				TaskStatuses []struct {
					Index         int32        `json:"index"`
					State         string       `json:"state"`
					StartTime     *metav1.Time `json:"startTime"`
					AttemptStatus struct {
						PodName          string  `json:"podName"`
						PodNodeName      *string `json:"podNodeName"`
						CompletionStatus *struct {
							Type struct {
								Name string `json:"name"`
							} `json:"type"`
						} `json:"completionStatus"`
					} `json:"attemptStatus"`
				} `json:"taskStatuses"`
			} `json:"taskRoleStatuses"`
		} `json:"attemptStatus"`
	} `json:"status"`
}

// readFrameworkStatus maps a Framework's state to the job phases, and its task statuses to the
// instances (role, index, task state, pod, node).
func readFrameworkStatus(obj *unstructured.Unstructured, now time.Time) (Status, error) {
	var f frameworkStatus
	if err := fromUnstructured(obj, &f); err != nil {
		return Status{}, err
	}
	s := Status{Phase: Pending, Instances: []Instance{}}
	if f.Status == nil {
		return s, nil
	}
	st := f.Status
	switch st.State {
	case "AttemptRunning":
		s.Phase = Running
	case "AttemptDeletionPending", "AttemptDeletionRequested", "AttemptDeleting", "AttemptCompleted":
		// An attempt ended and the framework is being retried: still running, as `arena get`
		// shows a restarting job.
		s.Phase = Running
	case "Completed":
		s.Phase = Failed
		if cs := st.AttemptStatus.CompletionStatus; cs != nil && cs.Type.Name == "Succeeded" {
			s.Phase = Succeeded
		}
	default:
		// A new attempt being created is a restart once the first attempt has been.
		if st.RetryPolicyStatus.TotalRetriedCount > 0 {
			s.Phase = Running
		}
	}
	if st.StartTime != nil {
		s.StartTime = &st.StartTime.Time
	}
	if st.CompletionTime != nil {
		s.CompletionTime = &st.CompletionTime.Time
	}
	s.Duration = trainingDuration(s.StartTime, s.CompletionTime, now)
	for _, role := range st.AttemptStatus.TaskRoleStatuses {
		for _, task := range role.TaskStatuses {
			in := Instance{
				Name:  task.AttemptStatus.PodName,
				Role:  role.Name,
				Index: task.Index,
				Phase: taskPhase(task.State, task.AttemptStatus.CompletionStatus != nil && task.AttemptStatus.CompletionStatus.Type.Name == "Succeeded"),
				Node:  ptr.Deref(task.AttemptStatus.PodNodeName, ""),
			}
			if task.StartTime != nil {
				in.Created = task.StartTime.Time
			}
			s.Instances = append(s.Instances, in)
		}
	}
	return s, nil
}

// frameworkFailure returns why a Framework failed, or "".
func frameworkFailure(obj *unstructured.Unstructured) string {
	var f frameworkStatus
	if obj == nil || fromUnstructured(obj, &f) != nil || f.Status == nil || f.Status.State != "Completed" {
		return ""
	}
	if cs := f.Status.AttemptStatus.CompletionStatus; cs != nil && cs.Type.Name != "Succeeded" {
		return fmt.Sprintf("the job failed: %s: %s", cs.Type.Name, cs.Diagnostics)
	}
	return ""
}

// taskPhase is a FrameworkController task's state in the words of a pod's phase, as every other
// kind's instances say theirs: Running while its attempt runs, Succeeded or Failed once it has
// completed, Pending otherwise (being created, or between attempts).
func taskPhase(state string, succeeded bool) string {
	switch state {
	case "AttemptRunning":
		return string(corev1.PodRunning)
	case "Completed", "AttemptCompleted":
		if succeeded {
			return string(corev1.PodSucceeded)
		}
		return string(corev1.PodFailed)
	}
	return string(corev1.PodPending)
}
