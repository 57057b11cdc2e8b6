package cluster_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubetrain/terraform-provider-training/cluster"
	"github.com/kubetrain/terraform-provider-training/cluster/clustertest"
)

var (
	mpiJobs     = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"}
	tfJobs      = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}
	pytorchJobs = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
	frameworks  = schema.GroupVersionResource{Group: "frameworkcontroller.microsoft.com", Version: "v1", Resource: "frameworks"}
	kueueGroup  = "kueue.x-k8s.io"
	flavors     = schema.GroupVersionResource{Group: kueueGroup, Version: "v1beta2", Resource: "resourceflavors"}
	clusterQs   = schema.GroupVersionResource{Group: kueueGroup, Version: "v1beta2", Resource: "clusterqueues"}
	localQs     = schema.GroupVersionResource{Group: kueueGroup, Version: "v1beta2", Resource: "localqueues"}
	workloads   = schema.GroupVersionResource{Group: kueueGroup, Version: "v1beta2", Resource: "workloads"}
	trainJobs   = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}
	runtimes    = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "clustertrainingruntimes"}
)

const ssdNode = "cn-beijing.192.168.3.230"

// TestLocalCluster starts a cluster of its own (it checks how it stops), proves each part on it by
// reading objects back, then stops it and checks that no process or port is left.
func TestLocalCluster(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	opts, err := clustertest.DefaultOptions(wd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, reused, err := cluster.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if reused {
		t.Fatal("a new run folder must start a new cluster")
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()

	again, reused, err := cluster.Start(ctx, opts)
	if err != nil || !reused || again.Processes["kube-apiserver"] != c.Processes["kube-apiserver"] {
		t.Fatalf("starting again must reuse the running cluster: reused=%v err=%v", reused, err)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	e := &env{t: t, kube: kube, dyn: dyn}
	watch, err := cluster.WatchNodes(ctx, c.Kubeconfig, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("nodes", func(t *testing.T) { e.t = t; e.checkNodes(ctx) })
	t.Run("nodes heartbeat through their leases", func(t *testing.T) { e.t = t; e.checkLeases(ctx) })
	t.Run("crds", func(t *testing.T) {
		for _, name := range cluster.CRDs {
			if _, err := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Errorf("CRD %s: %v", name, err)
			}
		}
	})
	t.Run("untolerated pod stays pending", func(t *testing.T) { e.t = t; e.checkUntolerated(ctx) })
	t.Run("mpijob on the ssd node, succeeds, is garbage-collected", func(t *testing.T) { e.t = t; e.checkMPIJob(ctx) })
	t.Run("tfjob runs", func(t *testing.T) {
		e.t = t
		e.create(ctx, tfJobs, tfJobYAML)
		e.waitPods(ctx, "training.kubeflow.org/job-name=tf-dist", 3)
	})
	t.Run("pytorchjob with a master runs", func(t *testing.T) {
		e.t = t
		e.create(ctx, pytorchJobs, pytorchJobYAML)
		// The workers' init container (waiting for the master's name) needs an image: the
		// operator's own flag default, which the local cluster's main sets too.
		for _, p := range e.waitPods(ctx, "training.kubeflow.org/job-name=pt-dist", 2) {
			if p.Labels["training.kubeflow.org/replica-type"] == "worker" && (len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Image == "") {
				t.Errorf("worker %s init containers %v", p.Name, p.Spec.InitContainers)
			}
		}
	})
	t.Run("invalid pytorchjob rejected by training-operator's webhook", func(t *testing.T) {
		obj := decode(t, invalidPyTorchJobYAML)
		_, err := dyn.Resource(pytorchJobs).Namespace("default").Create(ctx, obj, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "validator.pytorchjob.training-operator.kubeflow.org") {
			t.Fatalf("want a rejection by the webhook, got %v", err)
		}
	})
	t.Run("kueue admits a queued mpijob within quota and holds the next", func(t *testing.T) { e.t = t; e.checkKueue(ctx) })
	t.Run("trainjob on the default torch runtime runs on the GPU nodes", func(t *testing.T) { e.t = t; e.checkTrainJob(ctx) })
	t.Run("framework runs", func(t *testing.T) {
		e.t = t
		e.create(ctx, frameworks, frameworkYAML)
		e.waitPods(ctx, "FC_FRAMEWORK_NAME=fw", 2)
	})

	// The whole test long, no node lost Ready or was tainted by Kubernetes.
	for _, problem := range watch.Stop() {
		t.Errorf("a node stopped being healthy: %s", problem)
	}

	pids := c.Processes
	ports := c.Ports
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	for name, pid := range pids {
		if state := processState(pid); state != "" && state != "Z" {
			t.Errorf("%s (pid %d) still runs after Stop (state %s)", name, pid, state)
		}
	}
	for name, port := range ports {
		if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
			_ = conn.Close()
			t.Errorf("port %d (%s) still answers after Stop", port, name)
		}
	}
	if _, err := os.Stat(opts.RunDir); !os.IsNotExist(err) {
		t.Errorf("run folder %s is still there: %v", opts.RunDir, err)
	}
}

type env struct {
	t    *testing.T
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

func (e *env) checkNodes(ctx context.Context) {
	nodes, err := e.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var got []string
	for _, n := range nodes.Items {
		var taints []string
		for _, taint := range n.Spec.Taints {
			taints = append(taints, taint.ToString())
		}
		gpus := n.Status.Allocatable["nvidia.com/gpu"]
		ready := false
		for _, cond := range n.Status.Conditions {
			ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
		}
		got = append(got, fmt.Sprintf("%s ready=%v gpus=%s taints=%s", n.Name, ready, gpus.String(), strings.Join(taints, ",")))
	}
	want := []string{
		"cn-beijing.192.168.3.225 ready=true gpus=0 taints=node-role.kubernetes.io/control-plane:NoSchedule",
		"cn-beijing.192.168.3.226 ready=true gpus=0 taints=node-role.kubernetes.io/control-plane:NoSchedule",
		"cn-beijing.192.168.3.227 ready=true gpus=0 taints=node-role.kubernetes.io/control-plane:NoSchedule",
		"cn-beijing.192.168.3.228 ready=true gpus=8 taints=gpu_node=invalid:NoSchedule",
		"cn-beijing.192.168.3.229 ready=true gpus=8 taints=gpu_node=invalid:NoSchedule",
		"cn-beijing.192.168.3.230 ready=true gpus=8 taints=ssd_node=invalid:NoSchedule",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		e.t.Fatalf("nodes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkLeases checks that every node renews its Lease in kube-node-lease, as a kubelet does every
// 10 s: the node lifecycle controller's 50 s grace period counts from the last renewal it saw, and
// a node whose only heartbeat is a rare status update is declared unreachable between two.
func (e *env) checkLeases(ctx context.Context) {
	nodes, err := e.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	first := map[string]time.Time{}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		renewed := 0
		for _, n := range nodes.Items {
			lease, err := e.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil || lease.Spec.RenewTime == nil {
				continue
			}
			at := lease.Spec.RenewTime.Time
			if seen, ok := first[n.Name]; !ok {
				first[n.Name] = at
			} else if at.After(seen) {
				renewed++
			}
		}
		return renewed == len(nodes.Items), nil
	})
	if err != nil {
		e.t.Fatalf("not every node renewed its Lease within 30 s (first renewals seen: %v): %v", first, err)
	}
}

func (e *env) checkUntolerated(ctx context.Context) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "no-toleration", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if _, err := e.kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	var reason string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := e.kube.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
				reason = cond.Message
				return p.Status.Phase == corev1.PodPending, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for the scheduler to report the pod unschedulable: %v", err)
	}
	if !strings.Contains(reason, "untolerated taint") {
		e.t.Fatalf("scheduler's reason %q does not name the untolerated taints", reason)
	}
}

func (e *env) checkMPIJob(ctx context.Context) {
	e.create(ctx, mpiJobs, mpiJobYAML)
	selector := "training.kubeflow.org/job-name=mpi-dist"
	pods := e.waitPods(ctx, selector, 3)
	for _, p := range pods {
		if p.Spec.NodeName != ssdNode {
			e.t.Errorf("pod %s runs on %s, want the ssd node %s", p.Name, p.Spec.NodeName, ssdNode)
		}
	}

	// Finish the launcher as a real one would when mpirun returns 0.
	for _, p := range pods {
		if p.Labels["training.kubeflow.org/job-role"] != "launcher" {
			continue
		}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"Succeeded"}}}`, cluster.SimulateExitAnnotation)
		if _, err := e.kube.CoreV1().Pods("default").Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		job, err := e.dyn.Resource(mpiJobs).Namespace("default").Get(ctx, "mpi-dist", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(job.Object, "status", "conditions")
		for _, c := range conditions {
			m, _ := c.(map[string]any)
			if m["type"] == "Succeeded" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for the MPIJob to report success: %v", err)
	}

	background := metav1.DeletePropagationBackground
	if err := e.dyn.Resource(mpiJobs).Namespace("default").Delete(ctx, "mpi-dist", metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		e.t.Fatal(err)
	}
	// The garbage collector can take ~20 s on a CRD created seconds ago.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := e.kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
		return err == nil && len(list.Items) == 0, err
	})
	if err != nil {
		e.t.Fatalf("the deleted MPIJob's pods were not garbage-collected: %v", err)
	}
}

// checkKueue makes a 2-GPU quota on the GPU nodes' flavor and submits two MPIJobs of 2 GPUs to
// it: Kueue's webhook suspends both, its scheduler admits the first (unsuspended, its workers
// run on the flavor's nodes, tolerating its taint through the flavor) and holds the second with
// the quota's reason; deleting the first admits the second.
func (e *env) checkKueue(ctx context.Context) {
	e.create(ctx, flavors, gpuFlavorYAML)
	e.create(ctx, clusterQs, gpuClusterQueueYAML)
	e.create(ctx, localQs, localQueueYAML)
	e.create(ctx, mpiJobs, fmt.Sprintf(queuedMPIJobYAML, "queued-a"))
	e.waitPods(ctx, "training.kubeflow.org/job-name=queued-a,training.kubeflow.org/job-role=worker", 2)
	e.create(ctx, mpiJobs, fmt.Sprintf(queuedMPIJobYAML, "queued-b"))
	a := e.get(ctx, mpiJobs, "queued-a")
	if suspended, _, _ := unstructured.NestedBool(a.Object, "spec", "runPolicy", "suspend"); suspended {
		e.t.Errorf("the admitted MPIJob is still suspended")
	}
	for _, p := range e.waitPods(ctx, "training.kubeflow.org/job-name=queued-a,training.kubeflow.org/job-role=worker", 2) {
		if p.Spec.NodeSelector["nvidia.com/gpu.present"] != "true" {
			e.t.Errorf("worker %s: Kueue did not apply the flavor's node labels: %v", p.Name, p.Spec.NodeSelector)
		}
	}
	reason := e.waitWorkload(ctx, "queued-b", "QuotaReserved", "False")
	if !strings.Contains(reason, "insufficient unused quota for nvidia.com/gpu") {
		e.t.Errorf("the second workload waits for %q, want the GPU quota", reason)
	}
	b := e.get(ctx, mpiJobs, "queued-b")
	if suspended, _, _ := unstructured.NestedBool(b.Object, "spec", "runPolicy", "suspend"); !suspended {
		e.t.Errorf("Kueue's webhook did not suspend the queued MPIJob")
	}
	if err := e.dyn.Resource(mpiJobs).Namespace("default").Delete(ctx, "queued-a", metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.waitWorkload(ctx, "queued-b", "Admitted", "True")
	e.waitPods(ctx, "training.kubeflow.org/job-name=queued-b,training.kubeflow.org/job-role=worker", 2)
}

// checkTrainJob runs a TrainJob of 2 nodes x 1 GPU on Trainer's default torch runtime,
// tolerating the GPU nodes' taint through a runtime patch: Trainer makes a JobSet, JobSet a Job,
// and its 2 pods run on the two GPU nodes with the torchrun environment Trainer generates.
func (e *env) checkTrainJob(ctx context.Context) {
	for _, name := range cluster.DefaultRuntimes {
		if _, err := e.dyn.Resource(runtimes).Get(ctx, name, metav1.GetOptions{}); err != nil {
			e.t.Errorf("default runtime %s: %v", name, err)
		}
	}
	e.create(ctx, trainJobs, trainJobYAML)
	pods := e.waitPods(ctx, cluster.JobSetNameLabel+"=tj", 2)
	nodes := map[string]bool{}
	for _, p := range pods {
		nodes[p.Spec.NodeName] = true
		env := map[string]string{}
		for _, v := range p.Spec.Containers[0].Env {
			env[v.Name] = v.Value
			if v.ValueFrom != nil && v.ValueFrom.FieldRef != nil {
				env[v.Name] = v.ValueFrom.FieldRef.FieldPath
			}
		}
		want := map[string]string{"PET_NNODES": "2", "PET_MASTER_ADDR": "tj-node-0-0.tj", "PET_MASTER_PORT": "29500",
			"PET_NODE_RANK": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}
		for k, v := range want {
			if env[k] != v {
				e.t.Errorf("pod %s: %s=%q, want %q", p.Name, k, env[k], v)
			}
		}
	}
	if !nodes["cn-beijing.192.168.3.228"] || !nodes["cn-beijing.192.168.3.229"] {
		e.t.Errorf("the TrainJob's pods run on %v, want the two GPU nodes", nodes)
	}
}

func (e *env) get(ctx context.Context, gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	obj, err := e.dyn.Resource(gvr).Namespace("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return obj
}

// waitWorkload waits until the Workload of the named MPIJob has the condition with that
// status, and returns the condition's message.
func (e *env) waitWorkload(ctx context.Context, job, condition, status string) (message string) {
	uid := e.get(ctx, mpiJobs, job).GetUID()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := e.dyn.Resource(workloads).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "kueue.x-k8s.io/job-uid=" + string(uid)})
		if err != nil || len(list.Items) != 1 {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(list.Items[0].Object, "status", "conditions")
		for _, c := range conditions {
			m, _ := c.(map[string]any)
			if m["type"] == condition && m["status"] == status {
				message, _ = m["message"].(string)
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for the workload of %s to be %s=%s: %v", job, condition, status, err)
	}
	return message
}

func (e *env) create(ctx context.Context, gvr schema.GroupVersionResource, manifest string) {
	obj := decode(e.t, manifest)
	if _, err := e.dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("creating %s %s: %v", gvr.Resource, obj.GetName(), err)
	}
}

// waitPods waits until exactly n pods match selector, all in phase.
// waitPods waits for exactly n pods matching selector, all Running.
func (e *env) waitPods(ctx context.Context, selector string, n int) []corev1.Pod {
	var pods []corev1.Pod
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := e.kube.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		pods = list.Items
		var states []string
		for _, p := range pods {
			states = append(states, p.Name+"="+string(p.Status.Phase))
			if p.Status.Phase != corev1.PodRunning {
				return false, nil
			}
		}
		last = strings.Join(states, " ")
		return len(pods) == n, nil
	})
	if err != nil {
		e.t.Fatalf("waiting for %d Running pods matching %s (last seen: %s): %v", n, selector, last, err)
	}
	return pods
}

func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

const mpiJobYAML = `
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi-dist, namespace: default}
spec:
  slotsPerWorker: 1
  runPolicy: {cleanPodPolicy: Running}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          tolerations: [{key: ssd_node, operator: Exists}]
          containers: [{name: launcher, image: horovod, command: [mpirun, python, train.py]}]
    Worker:
      replicas: 2
      template:
        spec:
          tolerations: [{key: ssd_node, operator: Exists}]
          containers:
          - name: worker
            image: horovod
            resources: {limits: {nvidia.com/gpu: 1}}
`

const tfJobYAML = `
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: tf-dist, namespace: default}
spec:
  tfReplicaSpecs:
    PS:
      replicas: 1
      template:
        spec:
          tolerations: [{key: gpu_node, operator: Exists}]
          containers: [{name: tensorflow, image: tf}]
    Worker:
      replicas: 2
      template:
        spec:
          tolerations: [{key: gpu_node, operator: Exists}]
          containers:
          - name: tensorflow
            image: tf
            resources: {limits: {nvidia.com/gpu: 1}}
`

const pytorchJobYAML = `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt-dist, namespace: default}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          tolerations: [{key: gpu_node, operator: Exists}]
          containers: [{name: pytorch, image: pytorch}]
    Worker:
      replicas: 1
      template:
        spec:
          tolerations: [{key: gpu_node, operator: Exists}]
          containers: [{name: pytorch, image: pytorch}]
`

// The container must be named "pytorch"; the webhook rejects this one.
const invalidPyTorchJobYAML = `
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt-invalid, namespace: default}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: not-pytorch, image: pt}]
`

const frameworkYAML = `
apiVersion: frameworkcontroller.microsoft.com/v1
kind: Framework
metadata: {name: fw, namespace: default}
spec:
  executionType: Start
  retryPolicy: {fancyRetryPolicy: false, maxRetryCount: 0}
  taskRoles:
  - name: worker
    taskNumber: 2
    frameworkAttemptCompletionPolicy: {minFailedTaskCount: 1, minSucceededTaskCount: -1}
    task:
      retryPolicy: {fancyRetryPolicy: false, maxRetryCount: 0}
      pod:
        spec:
          restartPolicy: Never
          tolerations: [{key: gpu_node, operator: Exists}]
          containers: [{name: worker, image: pytorch}]
`

const gpuFlavorYAML = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
spec:
  nodeLabels: {nvidia.com/gpu.present: "true"}
  tolerations: [{key: gpu_node, operator: Exists, effect: NoSchedule}, {key: ssd_node, operator: Exists, effect: NoSchedule}]
`

const gpuClusterQueueYAML = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: gpus}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: 64}
      - {name: memory, nominalQuota: 256Gi}
      - {name: nvidia.com/gpu, nominalQuota: 2}
`

const localQueueYAML = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: team, namespace: default}
spec: {clusterQueue: gpus}
`

// Two workers of one GPU; the launcher asks for nothing, so it gets no flavor and tolerates
// the control-plane nodes itself.
const queuedMPIJobYAML = `
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: %s, namespace: default, labels: {kueue.x-k8s.io/queue-name: team}}
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          tolerations: [{operator: Exists}]
          containers: [{name: launcher, image: mpioperator/mpi-pi, command: [mpirun, hostname]}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: worker, image: mpioperator/mpi-pi, resources: {limits: {nvidia.com/gpu: 1}}}]
`

const trainJobYAML = `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    image: pytorch/pytorch:2
    command: [torchrun, train.py]
    numNodes: 2
    resourcesPerNode: {limits: {nvidia.com/gpu: 1}}
  runtimePatches:
  - manager: training.kubetrain.io/cluster-test
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    tolerations: [{key: gpu_node, operator: Exists}]
`

// processState is the state letter /proc gives pid ("" once it is gone). A zombie ("Z") has
// exited: the goroutine that started it reaps it in its own time, possibly after Stop returned.
func processState(pid int) string {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}
