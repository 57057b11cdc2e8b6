package jobs

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// RuntimeJobs reads the replicated jobs of a TrainingRuntime or ClusterTrainingRuntime, and the
// names of their containers.
func RuntimeJobs(runtime *unstructured.Unstructured) []RuntimeJob {
	rjs, _, _ := unstructured.NestedSlice(runtime.Object, "spec", "template", "spec", "replicatedJobs")
	var out []RuntimeJob
	for _, r := range rjs {
		m, _ := r.(map[string]any)
		name, _ := m["name"].(string)
		rj := RuntimeJob{Name: name}
		containers, _, _ := unstructured.NestedSlice(m, "template", "spec", "template", "spec", "containers")
		for _, c := range containers {
			cm, _ := c.(map[string]any)
			if n, ok := cm["name"].(string); ok {
				rj.Containers = append(rj.Containers, n)
			}
		}
		out = append(out, rj)
	}
	return out
}

// TrainJobRoles are the pods Trainer makes of a TrainJob (as Build made it) on its runtime, for
// the placement check: each replicated job of the runtime's JobSet template, with the job's
// runtime patches merged into its pod spec as Trainer merges them (a strategic merge patch, in
// the patches' order), and the trainer's resources per node merged into the trainer container of
// the jobs Trainer gives them to (newRuntimeInfo and the ML policies' plugins in Trainer
// v2.3.0's pkg/runtime). The trainer's job runs numNodes pods (with an MPI policy, the "node"
// job does, one fewer when the launcher runs as a node); every other job its parallelism.
func TrainJobRoles(job, runtime *unstructured.Unstructured) ([]RolePods, error) {
	var tj trainJob
	if err := fromUnstructured(job, &tj); err != nil {
		return nil, err
	}
	var rt trainingRuntime
	if err := fromUnstructured(runtime, &rt); err != nil {
		return nil, err
	}
	var nodes int32 = 1
	var perNode *corev1.ResourceRequirements
	if tr := tj.Spec.Trainer; tr != nil {
		nodes, perNode = ptr.Deref(tr.NumNodes, 1), tr.ResourcesPerNode
	}
	policy := ptr.Deref(rt.Spec.MLPolicy, mlPolicy{})
	launcherAsNode := policy.MPI != nil && ptr.Deref(policy.MPI.RunLauncherAsNode, false)
	var roles []RolePods
	for _, rj := range rt.Spec.Template.Spec.ReplicatedJobs {
		t := rj.Template.Spec.Template
		for _, p := range tj.Spec.RuntimePatches {
			patched, err := patchPodSpec(t.Spec, p, rj.Name)
			if err != nil {
				return nil, fmt.Errorf("runtime patch of %s on replicated job %s: %w", p.Manager, rj.Name, err)
			}
			t.Spec = patched
		}
		// As Trainer counts: the runtime's node count for the trainer's job, the job's for it
		// with a torch or plain policy; an MPI policy gives the job's to the "node" job instead.
		trainerJob := rj.Template.Metadata != nil && rj.Template.Metadata.Labels[ancestorLabel] == "trainer"
		count := ptr.Deref(rj.Template.Spec.Parallelism, 1)
		switch {
		case policy.MPI != nil && rj.Name == TrainerNode && launcherAsNode:
			count = max(nodes-1, 1)
		case policy.MPI != nil && rj.Name == TrainerNode:
			count = nodes
		case trainerJob && policy.MPI == nil:
			count = nodes
		case trainerJob:
			count = ptr.Deref(policy.NumNodes, 1)
		}
		if trainerJob || launcherAsNode && rj.Name == TrainerNode {
			for i := range t.Spec.Containers {
				if c := &t.Spec.Containers[i]; c.Name == TrainerNode {
					if perNode != nil {
						c.Resources.Limits = overlay(c.Resources.Limits, perNode.Limits)
						c.Resources.Requests = overlay(c.Resources.Requests, perNode.Requests)
					}
					if tr := tj.Spec.Trainer; tr != nil {
						c.Env = overlayEnv(c.Env, tr.Env)
					}
				}
			}
		}
		roles = append(roles, RolePods{Role: rj.Name, Count: int(count), Template: t})
	}
	return roles, nil
}

// patchPodSpec merges the pod spec of patch p for the replicated job named job into spec, with
// the strategic merge patch Trainer applies to the whole JobSet spec (the replicated jobs are
// merged by name, so this is the same for one job's pod spec).
func patchPodSpec(spec corev1.PodSpec, p runtimePatch, job string) (corev1.PodSpec, error) {
	if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil || p.TrainingRuntimeSpec.Template.Spec == nil {
		return spec, nil
	}
	for _, rj := range p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
		if rj.Name != job || rj.Template == nil || rj.Template.Spec == nil || rj.Template.Spec.Template == nil || rj.Template.Spec.Template.Spec == nil {
			continue
		}
		original, err := json.Marshal(spec)
		if err != nil {
			return spec, err
		}
		patch, err := json.Marshal(rj.Template.Spec.Template.Spec)
		if err != nil {
			return spec, err
		}
		merged, err := strategicpatch.StrategicMergePatch(original, patch, corev1.PodSpec{})
		if err != nil {
			return spec, err
		}
		var out corev1.PodSpec
		if err := json.Unmarshal(merged, &out); err != nil {
			return spec, err
		}
		spec = out
	}
	return spec, nil
}

// overlay is base with the quantities of top set over it, as Trainer merges a job's resources
// per node into its runtime's.
func overlay(base, top corev1.ResourceList) corev1.ResourceList {
	if len(top) == 0 {
		return base
	}
	out := base.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range top {
		out[name] = q
	}
	return out
}

// CheckTrainJobName says whether JobSet v0.12.0's webhook accepts the JobSet Trainer v2.3.0
// makes of a TrainJob named name, whose replicated jobs run the pods roles counts
// (TrainJobRoles). JobSet names the pods of a replicated job NAME-JOB-JOBINDEX-PODINDEX-xxxxx
// and refuses a JobSet whose longest such name is not a DNS-1035 label (its webhook's
// podNameTooLong check, jobset_webhook.go); Trainer makes one replica of each job (index 0)
// whose pods are indexed from 0. Trainer's own checks stop at 63 characters for the name, so a
// longer name makes a TrainJob whose JobSet is refused: the job exists and never runs.
func CheckTrainJobName(name string, roles []RolePods) error {
	for _, r := range roles {
		pod := fmt.Sprintf("%s-%s-0-%d-xxxxx", name, r.Role, max(r.Count-1, 0))
		if over := len(pod) - validation.DNS1035LabelMaxLength; over > 0 {
			return fmt.Errorf("%q is %d characters long; on this runtime at most %d are: JobSet names the pods of its replicated job %q "+
				"%s (%d characters), and refuses a JobSet whose pod names would exceed %d, after Trainer has made the TrainJob",
				name, len(name), len(name)-over, r.Role, pod, len(pod), validation.DNS1035LabelMaxLength)
		}
	}
	return nil
}

// overlayEnv is env with each of over's variables in place of the one of its name, or after
// them: as Trainer gives the trainer's container a TrainJob's trainer.env.
func overlayEnv(env, over []corev1.EnvVar) []corev1.EnvVar {
	out := slices.Clone(env)
	for _, e := range over {
		if i := slices.IndexFunc(out, func(o corev1.EnvVar) bool { return o.Name == e.Name }); i >= 0 {
			out[i] = e
		} else {
			out = append(out, e)
		}
	}
	return out
}
