package jobs

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func decodeObject(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

// Kueue writes the assigned flavor's node labels and tolerations into an admitted job's pod
// templates; its Workload keeps the templates as they were given. The read takes those.
func TestWithoutAdmission(t *testing.T) {
	job := decodeObject(t, `
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: team}}
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists}]
    Worker:
      template:
        spec:
          nodeSelector: {nvidia.com/gpu.present: "true"}
          tolerations: [{key: gpu_node, operator: Exists}]
`)
	workload := decodeObject(t, `
spec:
  podSets:
  - name: launcher
    template: {spec: {tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists}]}}
  - name: worker
    template: {spec: {containers: [{name: w}]}}
`)
	out := WithoutAdmission(job, workload)
	if _, found, _ := unstructured.NestedFieldNoCopy(out.Object, "spec", "mpiReplicaSpecs", "Worker", "template", "spec", "nodeSelector"); found {
		t.Error("the worker's node selector is Kueue's and should read as unset")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(out.Object, "spec", "mpiReplicaSpecs", "Worker", "template", "spec", "tolerations"); found {
		t.Error("the worker's tolerations are Kueue's and should read as unset")
	}
	if l, _, _ := unstructured.NestedSlice(out.Object, "spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "tolerations"); len(l) != 1 {
		t.Errorf("the launcher's own toleration was lost: %v", l)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(job.Object, "spec", "mpiReplicaSpecs", "Worker", "template", "spec", "nodeSelector"); !found {
		t.Error("WithoutAdmission changed the object it was given")
	}
}

func TestQueuedStatus(t *testing.T) {
	job := decodeObject(t, `
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: team}}
spec: {runPolicy: {suspend: true}}
status: {conditions: [{type: Suspended, status: "True"}]}
`)
	pending := decodeObject(t, `status: {conditions: [{type: QuotaReserved, status: "False", message: "insufficient unused quota for nvidia.com/gpu"}]}`)
	s, err := MPI.Status(Observed{Object: job, Workload: pending}, job.GetCreationTimestamp().Time)
	if err != nil || s.Phase != Queued || s.QueueReason != "insufficient unused quota for nvidia.com/gpu" {
		t.Errorf("queued job: %+v, %v", s, err)
	}
	if s, _ := MPI.Status(Observed{Object: job}, job.GetCreationTimestamp().Time); s.Phase != Queued {
		t.Errorf("a queued job before its Workload exists reads %s", s.Phase)
	}
	admitted := decodeObject(t, `status: {conditions: [{type: Admitted, status: "True"}]}`)
	if s, _ := MPI.Status(Observed{Object: job, Workload: admitted}, job.GetCreationTimestamp().Time); s.Phase != Pending {
		t.Errorf("an admitted job the operator has not resumed yet reads %s, want PENDING", s.Phase)
	}
	unqueued := decodeObject(t, `
metadata: {name: j}
spec: {runPolicy: {suspend: true}}
status: {conditions: [{type: Suspended, status: "True"}]}
`)
	if s, _ := MPI.Status(Observed{Object: unqueued}, unqueued.GetCreationTimestamp().Time); s.Phase != Suspended {
		t.Errorf("a job without a queue, suspended, reads %s", s.Phase)
	}
}

// A queued TrainJob that Kueue's webhook suspended reads QUEUED before Kueue has made its
// Workload, as a queued Kubeflow job does: its suspend is spec.suspend, not a run policy's.
func TestQueuedTrainJobBeforeItsWorkloadExists(t *testing.T) {
	job := decodeObject(t, `
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: team}}
spec: {suspend: true, trainer: {numNodes: 2}}
status: {conditions: [{type: Suspended, status: "True", reason: Suspended}]}
`)
	if s, err := Train.Status(Observed{Object: job}, job.GetCreationTimestamp().Time); err != nil || s.Phase != Queued {
		t.Errorf("a queued TrainJob before its Workload exists reads %s (%v), want %s", s.Phase, err, Queued)
	}
}

// A job MultiKueue dispatched names its worker cluster whatever its state, from the Workload's
// status.clusterName; while the dispatch waits, its reason carries what the admission check
// says. A job of no queue, or one not dispatched, names none.
func TestDispatchedJobNamesItsWorkerCluster(t *testing.T) {
	job := decodeObject(t, `
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: team}}
spec: {runPolicy: {suspend: true}}
status: {conditions: [{type: Suspended, status: "True"}]}
`)
	nominated := decodeObject(t, `
status:
  conditions: [{type: QuotaReserved, status: "True"}]
  admissionChecks: [{name: fleet, state: Pending, message: 'The workload got reservation on "w1"'}]
`)
	s, err := MPI.Status(Observed{Object: job, Workload: nominated}, job.GetCreationTimestamp().Time)
	if err != nil || s.Phase != Queued || s.Cluster != "" ||
		s.QueueReason != `quota reserved, waiting for its admission checks (fleet is Pending: The workload got reservation on "w1")` {
		t.Errorf("a job waiting for its MultiKueue check: %+v, %v", s, err)
	}
	running := decodeObject(t, `
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: team}}
spec: {runPolicy: {managedBy: kueue.x-k8s.io/multikueue}}
status: {conditions: [{type: Running, status: "True"}]}
`)
	dispatched := decodeObject(t, `
status:
  clusterName: w1
  conditions: [{type: QuotaReserved, status: "True"}, {type: Admitted, status: "True"}]
  admissionChecks: [{name: fleet, state: Ready}]
`)
	o := Observed{Object: running, Workload: dispatched}
	if got := DispatchedTo(o); got != "w1" {
		t.Errorf("DispatchedTo = %q, want w1", got)
	}
	if s, err := MPI.Status(o, running.GetCreationTimestamp().Time); err != nil || s.Cluster != "w1" || s.Phase != Running {
		t.Errorf("a dispatched running job: %+v, %v", s, err)
	}
	finished := decodeObject(t, `
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: team}}
status: {conditions: [{type: Succeeded, status: "True"}]}
`)
	if s, _ := MPI.Status(Observed{Object: finished, Workload: dispatched}, finished.GetCreationTimestamp().Time); s.Cluster != "w1" {
		t.Errorf("a finished dispatched job names %q, want w1", s.Cluster)
	}
	running.SetLabels(nil)
	if got := DispatchedTo(Observed{Object: running, Workload: dispatched}); got != "" {
		t.Errorf("a job of no queue reads dispatched to %q", got)
	}
}

// A queued job that Kueue neither suspended nor gave a Workload within KueueGrace of its making
// runs outside every quota: the wait fails, naming the integration to enable; one Kueue
// suspended, or gave a Workload, or that is younger, does not; a running wait is never done for
// a queued job Kueue has not admitted.
func TestAQueuedJobKueueDoesNotManageIsSaidSo(t *testing.T) {
	made := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	job := func(suspend bool) *unstructured.Unstructured {
		obj, err := NewPyTorchJob(PyTorchJobSpec{Name: "j", Namespace: "default", Workers: 1, Pod: PodOptions{Image: "i"}, RunPolicy: RunPolicy{QueueName: "team"}})
		if err != nil {
			t.Fatal(err)
		}
		obj.SetCreationTimestamp(metav1.NewTime(made))
		_ = unstructured.SetNestedField(obj.Object, suspend, "spec", "runPolicy", "suspend")
		obj.Object["status"] = map[string]any{"conditions": []any{condition("Running")}}
		return obj
	}
	running := job(false)
	if why, recheck := PyTorch.Unqueued(Observed{Object: running}, made.Add(5*time.Second)); why != "" || recheck != KueueGrace-5*time.Second {
		t.Errorf("5 s after it was made: %q, look again in %s", why, recheck)
	}
	if done, _, err := PyTorch.Running(Observed{Object: running}, RunningWait{}, made.Add(5*time.Second)); done || err != nil {
		t.Errorf("a queued job without a Workload was done running (%v, %v)", done, err)
	}
	why, _ := PyTorch.Unqueued(Observed{Object: running}, made.Add(KueueGrace))
	for _, want := range []string{"Kueue does not manage PyTorchJobs", `queue_name "team"`, "kubeflow.org/pytorchjob"} {
		if !strings.Contains(why, want) {
			t.Errorf("the failure does not say %q: %s", want, why)
		}
	}
	if _, _, err := PyTorch.Running(Observed{Object: running}, RunningWait{}, made.Add(time.Minute)); err == nil {
		t.Error("the running wait did not fail on a queued job Kueue does not manage")
	}
	if why, _ := PyTorch.Unqueued(Observed{Object: job(true)}, made.Add(time.Hour)); why != "" {
		t.Errorf("a suspended queued job: %q", why)
	}
	if why, _ := PyTorch.Unqueued(Observed{Object: running, Workload: &unstructured.Unstructured{}}, made.Add(time.Hour)); why != "" {
		t.Errorf("a queued job with a Workload: %q", why)
	}
}
