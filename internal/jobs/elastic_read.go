package jobs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// ReadElasticJob recovers the spec of an elastic job from its Framework (for import).
func ReadElasticJob(obj *unstructured.Unstructured) (ElasticJobSpec, error) {
	spec, err := readElasticSpec(obj)
	if err == nil {
		spec.Pod.Roles = readRoles(Elastic, spec, obj)
	}
	return spec, err
}

// readElasticSpec is ReadElasticJob but for its roles.
func readElasticSpec(obj *unstructured.Unstructured) (ElasticJobSpec, error) {
	var f framework
	if err := fromUnstructured(obj, &f); err != nil {
		return ElasticJobSpec{}, err
	}
	spec := ElasticJobSpec{Name: f.Name, Namespace: f.Namespace}
	var etcd, worker *taskRoleSpec
	for _, r := range f.Spec.TaskRoles {
		switch {
		case r == nil:
		case r.Name == EtcdRole:
			etcd = r
		case r.Name == WorkerRole:
			worker = r
		}
	}
	if etcd == nil || worker == nil {
		return spec, fmt.Errorf("framework %s/%s has no %q and %q task roles: it is not an elastic job", f.Namespace, f.Name, EtcdRole, WorkerRole)
	}
	spec.Pod = readPodOptions(worker.Task.Pod)
	spec.Pod.Spread = Elastic.readSpread(worker.Task.Pod, f.Name, WorkerRole)
	spec.Pod.MountShm = false // always mounted for elastic jobs; not an input
	raw, ok := f.Annotations[ElasticInputsAnnotation]
	if !ok {
		if err := readElasticCommand(&spec, worker); err != nil {
			return spec, fmt.Errorf("framework %s/%s: %w", f.Namespace, f.Name, err)
		}
	} else {
		var in elasticInputs
		if err := json.Unmarshal([]byte(raw), &in); err != nil {
			return spec, fmt.Errorf("framework %s/%s: annotation %s: %w", f.Namespace, f.Name, ElasticInputsAnnotation, err)
		}
		spec.Launcher, spec.Script, spec.ScriptArgs, spec.Command = in.Launcher, in.Script, in.ScriptArgs, in.Command
		if spec.Launcher == "" && spec.Script != "" {
			spec.Launcher = LauncherTorchelastic // made before the launcher was a choice
		}
		spec.MinWorkers, spec.MaxWorkers, spec.ProcsPerNode, spec.EtcdNetworkPolicy = in.MinWorkers, in.MaxWorkers, in.ProcsPerNode, in.EtcdNetworkPolicy
	}
	spec.Pod.Labels, _, _ = userLabels(f.Labels)
	spec.Pod.Annotations = userAnnotations(f.Annotations)
	spec.Pod.Checkpoint = checkpointOf(f.Annotations)
	withoutCheckpointEnv(&spec.Pod)
	readSensitiveEnv(&spec.Pod, f.Labels, f.Annotations)
	readWriteOnlyEnv(&spec.Pod, f.Name, f.Annotations)
	spec.Workers = worker.TaskNumber
	spec.MaxRetryCount = worker.Task.RetryPolicy.MaxRetryCount
	spec.PodGracefulDeletionTimeout = ptr.Deref(worker.Task.PodGracefulDeletionTimeoutSec, DefaultPodGracefulDeletionTimeout)
	// The annotation says what the command was made from; a command edited since (kubectl
	// edit) is what the workers run, and is read as such, so that a refresh shows the change.
	if !ok {
		return spec, nil
	}
	if containers := worker.Task.Pod.Spec.Containers; len(containers) > 0 &&
		!slices.Equal(containers[0].Command, spec.workerCommand()) && !slices.Equal(containers[0].Command, spec.legacyWorkerCommand()) {
		spec.Command, spec.Script, spec.ScriptArgs = containers[0].Command, "", nil
	}
	return spec, nil
}

// readElasticCommand reads the inputs of an elastic job that another tool made (a Framework
// without this provider's record of its inputs, such as FrameworkController's example written
// by hand): the workers' command as it is, the bounds of their count from the launcher's
// --nnodes=MIN:MAX and the processes per worker from its --nproc_per_node, wherever in the
// command they are (the example's is one sh -c line). A command that says no --nnodes bounds the
// workers to the count they have (a fixed-size job: changing it replaces the job); one that says
// no number of processes per worker has the default, the GPUs per worker, at least 1.
func readElasticCommand(spec *ElasticJobSpec, worker *taskRoleSpec) error {
	containers := worker.Task.Pod.Spec.Containers
	if len(containers) == 0 || len(containers[0].Command) == 0 {
		return fmt.Errorf("its workers' container sets no command (it runs its image's entrypoint), which training_elastic_job cannot say")
	}
	spec.Command = append(slices.Clone(containers[0].Command), containers[0].Args...)
	line := strings.Join(spec.Command, " ")
	spec.MinWorkers, spec.MaxWorkers = worker.TaskNumber, worker.TaskNumber
	if m := nnodesFlag.FindStringSubmatch(line); m != nil {
		low, _ := strconv.ParseInt(m[1], 10, 32)
		high := low
		if m[2] != "" {
			high, _ = strconv.ParseInt(m[2], 10, 32)
		}
		spec.MinWorkers, spec.MaxWorkers = int32(low), int32(high)
	}
	spec.ProcsPerNode = int32(max(1, spec.Pod.GPUs))
	if m := nprocFlag.FindStringSubmatch(line); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 32)
		spec.ProcsPerNode = int32(n)
	}
	return nil
}

// The launchers' flags that bound an elastic job's workers and set its processes per worker,
// in either spelling torchrun accepts (--nproc_per_node, --nproc-per-node) and either form
// (--flag=VALUE, --flag VALUE).
var (
	nnodesFlag = regexp.MustCompile(`(?:^|\s)--nnodes[=\s]+(\d{1,9})(?::(\d{1,9}))?(?:\s|$)`)
	nprocFlag  = regexp.MustCompile(`(?:^|\s)--nproc[_-]per[_-]node[=\s]+(\d{1,9})(?:\s|$)`)
)
