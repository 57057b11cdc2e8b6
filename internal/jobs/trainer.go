package jobs

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Kubeflow Trainer v2.3.0's side of a TrainJob: a mirror of the fields of its TrainJob API
// (trainer.kubeflow.org/v1alpha1) and of the JobSet template its runtime patches reach, and what
// a TrainJob says of itself: its status and failure.

type trainJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              trainJobSpec  `json:"spec"`
	Status            trainJobState `json:"status,omitempty"`
}

type trainJobSpec struct {
	RuntimeRef            runtimeRef     `json:"runtimeRef"`
	Trainer               *trainer       `json:"trainer,omitempty"`
	RuntimePatches        []runtimePatch `json:"runtimePatches,omitempty"`
	Suspend               *bool          `json:"suspend,omitempty"`
	ActiveDeadlineSeconds *int64         `json:"activeDeadlineSeconds,omitempty"`
}

type runtimeRef struct {
	Name     string  `json:"name"`
	APIGroup *string `json:"apiGroup,omitempty"`
	Kind     *string `json:"kind,omitempty"`
}

type trainer struct {
	Image            *string                      `json:"image,omitempty"`
	Command          []string                     `json:"command,omitempty"`
	Args             []string                     `json:"args,omitempty"`
	Env              []corev1.EnvVar              `json:"env,omitempty"`
	NumNodes         *int32                       `json:"numNodes,omitempty"`
	ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`
	NumProcPerNode   *int32                       `json:"numProcPerNode,omitempty"`
}

// runtimePatch is one manager's entry of runtimePatches, down to the pod templates of the
// runtime's replicated jobs.
type runtimePatch struct {
	Manager             string                    `json:"manager"`
	TrainingRuntimeSpec *trainingRuntimeSpecPatch `json:"trainingRuntimeSpec,omitempty"`
}

type trainingRuntimeSpecPatch struct {
	Template *jobSetTemplatePatch `json:"template,omitempty"`
}

type jobSetTemplatePatch struct {
	Spec *jobSetSpecPatch `json:"spec,omitempty"`
}

type jobSetSpecPatch struct {
	ReplicatedJobs []replicatedJobPatch `json:"replicatedJobs,omitempty"`
}

type replicatedJobPatch struct {
	Name     string            `json:"name"`
	Template *jobTemplatePatch `json:"template,omitempty"`
}

type jobTemplatePatch struct {
	Spec *jobSpecPatch `json:"spec,omitempty"`
}

type jobSpecPatch struct {
	Template *podTemplatePatch `json:"template,omitempty"`
}

type podTemplatePatch struct {
	Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec     *podSpecPatch      `json:"spec,omitempty"`
}

type podSpecPatch struct {
	ServiceAccountName *string                       `json:"serviceAccountName,omitempty"`
	Volumes            []corev1.Volume               `json:"volumes,omitempty"`
	Containers         []containerPatch              `json:"containers,omitempty"`
	ImagePullSecrets   []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	NodeSelector       map[string]string             `json:"nodeSelector,omitempty"`
	Tolerations        []corev1.Toleration           `json:"tolerations,omitempty"`
	Affinity           *corev1.Affinity              `json:"affinity,omitempty"`
	SchedulingGates    []corev1.PodSchedulingGate    `json:"schedulingGates,omitempty"`
	InitContainers     []containerPatch              `json:"initContainers,omitempty"`
	SecurityContext    *corev1.PodSecurityContext    `json:"securityContext,omitempty"`
	// TerminationGracePeriodSeconds is immutable (Trainer's CEL rule): a change replaces the job.
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

type containerPatch struct {
	Name            string                  `json:"name"`
	Env             []corev1.EnvVar         `json:"env,omitempty"`
	VolumeMounts    []corev1.VolumeMount    `json:"volumeMounts,omitempty"`
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

type trainJobState struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	JobsStatus []struct {
		Name      string `json:"name"`
		Ready     *int32 `json:"ready,omitempty"`
		Succeeded *int32 `json:"succeeded,omitempty"`
		Failed    *int32 `json:"failed,omitempty"`
		Active    *int32 `json:"active,omitempty"`
		Suspended *int32 `json:"suspended,omitempty"`
	} `json:"jobsStatus,omitempty"`
}

// trainJobStatus reads a TrainJob's status like `arena get`: SUCCEEDED, FAILED or SUSPENDED from
// its conditions; RUNNING once JobSet reports every replicated job's active Jobs ready (all
// their pods ready) or done; PENDING before. It starts when its first pod did, and completes
// when its terminal condition came.
func trainJobStatus(o Observed, now time.Time) (Status, error) {
	var job trainJob
	if err := fromUnstructured(o.Object, &job); err != nil {
		return Status{}, err
	}
	s := Status{Phase: Pending, Instances: instances(o.Pods, ReplicatedJobLabel)}
	cond := func(t string) *metav1.Condition {
		for i := range job.Status.Conditions {
			if c := &job.Status.Conditions[i]; c.Type == t && c.Status == metav1.ConditionTrue {
				return c
			}
		}
		return nil
	}
	for _, p := range o.Pods {
		if st := p.Status.StartTime; st != nil && (s.StartTime == nil || st.Before(&metav1.Time{Time: *s.StartTime})) {
			s.StartTime = ptr.To(st.Time)
		}
	}
	switch {
	case cond("Complete") != nil:
		s.Phase, s.CompletionTime = Succeeded, ptr.To(cond("Complete").LastTransitionTime.Time)
	case cond("Failed") != nil:
		s.Phase, s.CompletionTime = Failed, ptr.To(cond("Failed").LastTransitionTime.Time)
	case cond("Suspended") != nil || ptr.Deref(job.Spec.Suspend, false):
		s.Phase = Suspended
	case allJobsReady(job.Status):
		s.Phase = Running
	}
	s.Duration = trainingDuration(s.StartTime, s.CompletionTime, now)
	return s, nil
}

// allJobsReady: JobSet reports every replicated job, and each has Jobs ready or succeeded and
// no active Job that is not ready.
func allJobsReady(st trainJobState) bool {
	if len(st.JobsStatus) == 0 {
		return false
	}
	for _, j := range st.JobsStatus {
		ready, done, active := ptr.Deref(j.Ready, 0), ptr.Deref(j.Succeeded, 0), ptr.Deref(j.Active, 0)
		if ready+done == 0 || active > ready || ptr.Deref(j.Suspended, 0) > 0 {
			return false
		}
	}
	return true
}

// trainJobFailure says why the TrainJob failed or Trainer cannot run it, or "".
func trainJobFailure(o Observed) string {
	if o.Object == nil {
		return ""
	}
	var job trainJob
	if err := fromUnstructured(o.Object, &job); err != nil {
		return ""
	}
	for _, c := range job.Status.Conditions {
		if c.Type == "Failed" && c.Status == metav1.ConditionTrue {
			return fmt.Sprintf("the job failed: %s: %s", c.Reason, c.Message)
		}
	}
	// Trainer reports a job it cannot make the objects of (a runtime's pod-group policy without
	// the PodGroup CRD, a patch its runtime does not take) only as this event, and retries for
	// ever: the job will not run until someone changes it or the cluster.
	for _, e := range o.Events {
		if e.Type == corev1.EventTypeWarning && e.Reason == "TrainJobResourcesCreationFailed" && aboutThisObject(e, o.Object) {
			return "Trainer cannot make the job's objects: " + e.Message
		}
	}
	return ""
}
