package jobs

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// effect is what a change of one field of a spec does to the running job (Compare).
type effect string

const (
	replaces = effect("replaces")
	inPlace  = effect("in place")
	rescales = effect("rescales in place")
	refused  = effect("refused") // the kind does not take the field: the spec does not build
	nothing  = effect("nothing") // the job object does not change
)

// changeRow is a field of a spec (by its Go path: Pod.Image), a value to change it to, and what
// that change does on each kind (by name; every other kind: want).
type changeRow struct {
	field  string
	to     any
	want   effect
	except map[string]effect
}

// podChanges are the rows of what every kind has: its name and namespace, and the pod options.
var podChanges = []changeRow{
	{field: "Name", to: "other", want: replaces},
	{field: "Namespace", to: "other", want: replaces},
	{field: "Pod.Image", to: "train:2", want: replaces},
	{field: "Pod.GPUs", to: int64(4), want: replaces},
	{field: "Pod.GPUResource", to: "amd.com/gpu", want: replaces},
	{field: "Pod.CPU", to: "3", want: replaces},
	{field: "Pod.Memory", to: "3Gi", want: replaces},
	{field: "Pod.NoCPULimit", to: true, want: replaces, except: map[string]effect{"pytorch": nothing, "elastic": nothing}}, // without a cpu, no limit to drop
	{field: "Pod.ExtendedResources", to: map[string]string{"rdma/hca": "1"}, want: replaces},
	{field: "Pod.Env", to: map[string]string{"EPOCHS": "9"}, want: replaces},
	// Which variables are sensitive is recorded on the job object alone (for an import): a
	// variable moved between env and sensitive_env with its value keeps the pods as they are.
	{field: "Pod.SensitiveEnv", to: []string{"EPOCHS"}, want: inPlace},
	{field: "Pod.SecretEnv", to: map[string]SecretKey{"KEY": {Secret: "s", Key: "k"}}, want: replaces},
	{field: "Pod.EnvFromSecrets", to: []string{"wandb"}, want: replaces, except: map[string]effect{"train": refused}},
	// Pods take the job's write-only Secret whole: a job that starts taking it is replaced (a
	// new version of its values, TestANewVersionOfTheWriteOnlyVariablesChangesTheJobInPlace).
	{field: "Pod.WriteOnlyEnv", to: &WriteOnlyEnv{Secret: "job-write-only-env", Version: 1, Names: []string{"HF_TOKEN"}}, want: replaces},
	// The job object's own labels and annotations; a TrainJob's pods' (its pod_labels).
	{field: "Pod.Labels", to: map[string]string{"team": "speech"}, want: inPlace, except: map[string]effect{"train": replaces}},
	{field: "Pod.Annotations", to: map[string]string{"owner": "platform"}, want: inPlace, except: map[string]effect{"train": replaces}},
	{field: "Pod.NodeSelector", to: map[string]string{"pool": "b"}, want: replaces},
	{field: "Pod.Tolerations", to: []corev1.Toleration{{Key: "b", Operator: corev1.TolerationOpExists}}, want: replaces},
	{field: "Pod.PriorityClassName", to: "low", want: replaces, except: map[string]effect{"train": refused}},
	{field: "Pod.ServiceAccountName", to: "other", want: replaces},
	{field: "Pod.ImagePullSecrets", to: []string{"mirror"}, want: replaces},
	{field: "Pod.ImagePullPolicy", to: corev1.PullAlways, want: replaces, except: map[string]effect{"train": refused}},
	{field: "Pod.DataVolumes", to: []DataVolume{{Claim: "other", MountPath: "/other"}}, want: replaces},
	{field: "Pod.ShmSize", to: "4Gi", want: replaces},
	{field: "Pod.MountShm", to: true, want: replaces, except: map[string]effect{"mpi": nothing, "elastic": nothing}}, // a shm_size mounts one already
	{field: "Pod.Security", to: &Security{RunAsUser: ptr.To[int64](1000)}, want: replaces},
	{field: "Pod.SchedulerName", to: "volcano", want: replaces, except: map[string]effect{"train": refused}},
	{field: "Pod.HostNetwork", to: true, want: replaces, except: map[string]effect{"train": refused}},
	{field: "Pod.HostIPC", to: true, want: replaces, except: map[string]effect{"train": refused}},
	{field: "Pod.RequiredTopology", to: map[string]string{"worker": "rack"}, want: replaces, except: map[string]effect{"train": refused}},
	{field: "Pod.PreferredTopology", to: map[string]string{"worker": "rack"}, want: replaces, except: map[string]effect{"train": refused}},
	{field: "Pod.TerminationGracePeriod", to: ptr.To[int64](90), want: replaces},
	{field: "Pod.Checkpoint", to: &Checkpoint{Path: "s3://bucket/run", SaveSeconds: 30}, want: replaces},
	{field: "Pod.Spread", to: []Spread{{TopologyKey: "kubernetes.io/hostname", MaxSkew: 1, WhenUnsatisfiable: corev1.ScheduleAnyway}}, want: replaces,
		except: map[string]effect{"train": refused}},
	{field: "Pod.Patches", to: map[string]string{"worker": `{"spec":{"dnsPolicy":"Default"}}`}, want: replaces, except: map[string]effect{"train": refused}},
}

// runPolicyChanges are the rows of a Kubeflow job's run policy: what its operator reads while
// the job runs changes in place (LiveRunPolicy).
var runPolicyChanges = []changeRow{
	{field: "RunPolicy.CleanPodPolicy", to: "All", want: inPlace},
	{field: "RunPolicy.TTLSecondsAfterFinished", to: ptr.To[int32](600), want: inPlace, except: map[string]effect{"mpi": replaces}},
	{field: "RunPolicy.BackoffLimit", to: ptr.To[int32](9), want: inPlace, except: map[string]effect{"mpi": replaces}},
	{field: "RunPolicy.ActiveDeadlineSeconds", to: ptr.To[int64](7200), want: inPlace, except: map[string]effect{"mpi": replaces}},
	{field: "RunPolicy.QueueName", to: "team-b", want: replaces},
	// Kueue refuses a class added to a running job (TestAWorkloadPriorityClassChangesInPlace...).
	{field: "RunPolicy.WorkloadPriorityClass", to: "urgent", want: replaces},
	{field: "RunPolicy.Suspend", to: true, want: inPlace},
	{field: "RunPolicy.Scheduling", to: &SchedulingPolicy{MinAvailable: ptr.To[int32](2)}, want: replaces},
}

// kindChanges are each kind's base spec and the rows of its own fields. Every field of a kind's
// spec has a row (TestEveryFieldOfEveryKindSaysWhatItsChangeDoes): a field added without one
// fails, naming it.
var kindChanges = []struct {
	base func() Spec
	rows []changeRow
}{
	{base: func() Spec { return arenaSSDSpec() }, rows: append(slices.Clone(runPolicyChanges),
		changeRow{field: "LauncherCommand", to: []string{"mpirun", "other"}, want: replaces},
		changeRow{field: "WorkerCommand", to: []string{"/usr/sbin/sshd", "-D"}, want: replaces},
		// Plain mpirun fixes its ranks when it starts: a new count replaces the job.
		changeRow{field: "Workers", to: int32(3), want: replaces},
		changeRow{field: "SlotsPerWorker", to: int32(4), want: replaces},
		changeRow{field: "Elastic", to: &MPIElastic{MinWorkers: 1, MaxWorkers: 8}, want: replaces},
		changeRow{field: "MountDataOnLauncher", to: true, want: replaces},
		changeRow{field: "Pod.Roles", to: map[string]RoleOptions{"launcher": {CPU: "5"}}, want: replaces},
		changeRow{field: "SSHAuthMountPath", to: "/home/mpiuser/.ssh", want: replaces},
	)},
	{base: func() Spec { return arenaTFSpec() }, rows: append(slices.Clone(runPolicyChanges),
		changeRow{field: "Command", to: []string{"python", "other.py"}, want: replaces},
		changeRow{field: "Workers", to: int32(3), want: replaces},
		changeRow{field: "PS", to: int32(2), want: replaces},
		changeRow{field: "Chief", to: false, want: replaces},
		// A chief needs the whole cluster: dynamic workers are refused beside one.
		changeRow{field: "DynamicWorkers", to: true, want: refused},
		changeRow{field: "Pod.Roles", to: map[string]RoleOptions{"ps": {CPU: "5"}}, want: replaces},
	)},
	{base: func() Spec { return arenaPyTorchSpec() }, rows: append(slices.Clone(runPolicyChanges),
		changeRow{field: "Command", to: []string{"torchrun", "other.py"}, want: replaces},
		changeRow{field: "Workers", to: int32(3), want: replaces},
		changeRow{field: "ProcsPerNode", to: int32(4), want: replaces},
		changeRow{field: "Pod.Roles", to: map[string]RoleOptions{"master": {CPU: "5"}}, want: replaces},
		changeRow{field: "Elastic", to: &PyTorchElastic{MinWorkers: 1, MaxWorkers: 4, RendezvousBackend: "c10d"}, want: replaces},
	)},
	{base: func() Spec { return seedElasticSpec() }, rows: []changeRow{
		{field: "Launcher", to: LauncherTorchrun, want: replaces},
		{field: "Script", to: "/other.py", want: replaces},
		{field: "ScriptArgs", to: []string{"--epochs=3"}, want: replaces},
		{field: "Command", to: []string{"python", "-m", "other"}, want: replaces},
		// torchelastic takes workers as they come, within the bounds.
		{field: "Workers", to: int32(2), want: rescales},
		{field: "MinWorkers", to: int32(2), want: replaces},
		{field: "MaxWorkers", to: int32(8), want: replaces},
		{field: "ProcsPerNode", to: int32(2), want: replaces},
		{field: "MaxRetryCount", to: int32(9), want: replaces},
		{field: "PodGracefulDeletionTimeout", to: int64(60), want: replaces},
		// The NetworkPolicy is made or deleted beside the running job.
		{field: "EtcdNetworkPolicy", to: true, want: inPlace},
		{field: "Pod.Roles", to: map[string]RoleOptions{EtcdRole: {Image: "quay.io/coreos/etcd:v3.5.0"}}, want: replaces},
	}},
	{base: func() Spec { return trainSpec() }, rows: []changeRow{
		{field: "Runtime", to: RuntimeRef{Name: "mpi", Kind: ClusterTrainingRuntimeKind}, want: replaces},
		{field: "Labels", to: map[string]string{"team": "speech"}, want: inPlace},
		{field: "Annotations", to: map[string]string{"owner": "platform"}, want: inPlace},
		{field: "Command", to: []string{"torchrun", "other.py"}, want: replaces},
		{field: "Args", to: []string{"--lr", "0.2"}, want: replaces},
		{field: "Nodes", to: int32(3), want: replaces},
		{field: "ProcsPerNode", to: int32(2), want: replaces},
		{field: "Suspend", to: true, want: inPlace},
		{field: "QueueName", to: "team-b", want: replaces},
		{field: "WorkloadPriorityClass", to: "urgent", want: replaces},
		{field: "ActiveDeadlineSeconds", to: ptr.To[int64](86400), want: replaces},
		{field: "Pod.Roles", to: map[string]RoleOptions{"node": {CPU: "5"}}, want: refused},
		// The runtime's replicated jobs say where the provider's patch goes, not what it holds.
		{field: "RuntimeJobs", to: []RuntimeJob{{Name: "node", Containers: []string{"node"}}, {Name: "other", Containers: []string{"node"}}}, want: replaces},
	}},
}

// withField is spec with the field at the Go path (Pod.Image) set to v.
func withField(t *testing.T, spec Spec, field string, v any) Spec {
	t.Helper()
	copied := reflect.New(reflect.TypeOf(spec)).Elem()
	copied.Set(reflect.ValueOf(spec))
	f := copied
	for _, name := range strings.Split(field, ".") {
		if f = f.FieldByName(name); !f.IsValid() {
			t.Fatalf("%T has no field %s", spec, field)
		}
	}
	f.Set(reflect.ValueOf(v))
	out, ok := copied.Interface().(Spec)
	if !ok {
		t.Fatalf("%T is not a Spec", copied.Interface())
	}
	return out
}

// effectOf is what Compare says a change from old to new does.
func effectOf(old, planned Spec) (effect, Change) {
	c, err := Compare(old, planned)
	switch {
	case err != nil:
		return refused, c
	case c.Replaces():
		return replaces, c
	case c.Rescale != nil:
		return rescales, c
	case c.Patch != nil:
		return inPlace, c
	}
	return nothing, c
}

// Each field of each kind's spec, changed on its own, does what its row says: replaces the job,
// changes it in place, or rescales it in place.
func TestEveryFieldChangeDoesWhatItsKindSays(t *testing.T) {
	for _, kc := range kindChanges {
		base := kc.base()
		kind := base.Kind()
		if e, c := effectOf(base, base); e != nothing {
			t.Fatalf("%s: an unchanged spec %s: %+v", kind.Name, e, c)
		}
		for _, row := range append(slices.Clone(podChanges), kc.rows...) {
			want := row.want
			if e, ok := row.except[kind.Name]; ok {
				want = e
			}
			got, c := effectOf(base, withField(t, base, row.field, row.to))
			if got != want {
				t.Errorf("%s: a change of %s %s, want %s (%v)", kind.Name, row.field, got, want, c.Replace)
			}
		}
	}
}

// specFields are the Go paths of a spec's fields that a change may set, down into the pod
// options and the run policy.
func specFields(t reflect.Type, at string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := at + f.Name
		if f.Type.Kind() == reflect.Struct && (f.Name == "Pod" || f.Name == "RunPolicy") {
			out = append(out, specFields(f.Type, name+".")...)
			continue
		}
		out = append(out, name)
	}
	return out
}

// Every field of every registered kind's spec has a row above: a kind or a field added without
// one fails here, naming it, so that what its change does is said and tested.
func TestEveryFieldOfEveryKindSaysWhatItsChangeDoes(t *testing.T) {
	seen := map[*Kind]bool{}
	for _, kc := range kindChanges {
		base := kc.base()
		seen[base.Kind()] = true
		rows := map[string]bool{}
		for _, row := range append(slices.Clone(podChanges), kc.rows...) {
			rows[row.field] = true
		}
		for _, field := range specFields(reflect.TypeOf(base), "") {
			if !rows[field] {
				t.Errorf("%s: no row says what a change of %T.%s does", base.Kind().Name, base, field)
			}
		}
	}
	for _, k := range Kinds() {
		if !seen[k] {
			t.Errorf("kind %s has no table of what its changes do", k.Name)
		}
	}
}

// countChange is a change of a job's count and what it does.
type countChange struct {
	name   string
	spec   Spec
	field  string
	to     int32
	want   effect
	patch  bool
	reason string
}

// countChanges are the changes of the count of each kind, plain and elastic, queued or not.
func countChanges() []countChange {
	mpi := arenaSSDSpec()
	mpi.Elastic = &MPIElastic{MinWorkers: 1, MaxWorkers: 8}
	mpi.RunPolicy.QueueName = ""
	tf := arenaTFSpec()
	tf.DynamicWorkers, tf.Chief = true, false
	pt := arenaPyTorchSpec()
	pt.Elastic = &PyTorchElastic{MinWorkers: 1, MaxWorkers: 4, RendezvousBackend: "c10d"}
	queued := mpi
	queued.RunPolicy.QueueName = "team"
	return []countChange{
		{"elastic MPI", mpi, "Workers", 4, rescales, true, ""},
		{"plain MPI", arenaSSDSpec(), "Workers", 4, replaces, false, "fixed its world"},
		{"dynamic TF", tf, "Workers", 4, rescales, true, ""},
		{"plain TF", arenaTFSpec(), "Workers", 4, replaces, false, "fixed its world"},
		{"elastic PyTorch", pt, "Workers", 4, rescales, true, ""},
		{"plain PyTorch", arenaPyTorchSpec(), "Workers", 4, replaces, false, "fixed its world"},
		{"torchelastic", seedElasticSpec(), "Workers", 2, rescales, true, ""},
		{"TrainJob", trainSpec(), "Nodes", 4, replaces, false, "API fixes it"},
		{"queued elastic MPI", queued, "Workers", 4, replaces, false, "Kueue admitted"},
	}
}

// A count changes in place only where the kind's program takes it (elastic Horovod, elastic
// PyTorch, dynamic TF workers, torchelastic), with the kind's guarded patch, and never on a job
// Kueue admitted; everywhere else it replaces the job.
func TestWorkerCountRescalesOnlyWhereTheProgramTakesIt(t *testing.T) {
	for _, c := range countChanges() {
		got, change := effectOf(c.spec, withField(t, c.spec, c.field, c.to))
		if got != c.want {
			t.Errorf("%s: %s, want %s (%v)", c.name, got, c.want, change.Replace)
			continue
		}
		if c.patch && (change.Rescale.Patch == nil || change.Rescale.To != c.to || string(change.Rescale.Patch) != string(c.spec.Kind().RescalePatch(change.Rescale.From, c.to))) {
			t.Errorf("%s: rescale %+v, want the kind's guarded patch to %d", c.name, change.Rescale, c.to)
		}
		if c.reason != "" && !strings.Contains(strings.Join(change.Replace, "; "), c.reason) {
			t.Errorf("%s: replaced because %v, want a reason saying %q", c.name, change.Replace, c.reason)
		}
	}
	// A rescale with another in-place change sends both: the count by its patch, the rest merged.
	mpi := countChanges()[0].spec
	both := withField(t, withField(t, mpi, "Workers", int32(4)), "Pod.Labels", map[string]string{"team": "speech"})
	if got, change := effectOf(mpi, both); got != rescales || change.Patch == nil || !strings.Contains(string(change.Patch), "speech") ||
		strings.Contains(string(change.Patch), "replicas") {
		t.Errorf("a rescale with a label: %s, patch %s, want the rescale and a merge patch of the label alone", got, change.Patch)
	}
}

// Each kind says once how its pods stop.
func TestEveryKindSaysHowItsPodsStop(t *testing.T) {
	want := map[string]Stop{"mpi": StopOpenMPI, "tf": StopSignal, "pytorch": StopSignal, "elastic": StopTorchrun, "train": StopRuntime}
	for _, kc := range kindChanges {
		base := kc.base()
		if got := base.Kind().Stops(); got != want[base.Kind().Name] {
			t.Errorf("%s: pods stop by %s, want %s", base.Kind().Name, got, want[base.Kind().Name])
		}
	}
}

// A new version of a job's write-only variables changes only the version the job object records:
// the pods take the Secret whole, or a TrainJob's trainer each of its names, whatever the values,
// so the job changes in place; the values are the provider's to write into the Secret. A
// TrainJob whose names change is replaced: Trainer's API fixes the trainer's variables.
func TestANewVersionOfTheWriteOnlyVariablesChangesTheJobInPlace(t *testing.T) {
	names := []string{"HF_TOKEN"}
	for _, kc := range kindChanges {
		base := kc.base()
		v1 := withField(t, base, "Pod.WriteOnlyEnv", &WriteOnlyEnv{Secret: "job-write-only-env", Version: 1, Names: names})
		v2 := withField(t, base, "Pod.WriteOnlyEnv", &WriteOnlyEnv{Secret: "job-write-only-env", Version: 2, Names: names})
		if got, c := effectOf(v1, v2); got != inPlace || !strings.Contains(string(c.Patch), WriteOnlyEnvAnnotation) {
			t.Errorf("%s: a new version %s (%v, patch %s), want in place, recording the version", base.Kind().Name, got, c.Replace, c.Patch)
		}
		if base.Kind() != Train {
			continue
		}
		renamed := withField(t, base, "Pod.WriteOnlyEnv", &WriteOnlyEnv{Secret: "job-write-only-env", Version: 2, Names: []string{"HF_TOKEN", "WANDB_API_KEY"}})
		if got, c := effectOf(v1, renamed); got != replaces {
			t.Errorf("train: new names of the write-only variables %s (%v), want a replacement", got, c.Replace)
		}
	}
}

// Kueue's webhook lets a job's WorkloadPriorityClass change from one class to another, and Kueue
// then gives its Workload the new priority, pending or admitted; it refuses a class removed, and
// one added to a job that runs (v0.19.2 pkg/controller/jobframework/validation.go,
// ValidateUpdateForWorkloadPriorityClassName). So a change between two classes is in place, and
// one that adds or removes the class replaces the job, saying why.
func TestAWorkloadPriorityClassChangesInPlaceOnlyFromOneToAnother(t *testing.T) {
	mpi := arenaSSDSpec()
	mpi.RunPolicy.QueueName, mpi.RunPolicy.WorkloadPriorityClass = "team", "low"
	train := trainSpec()
	train.QueueName, train.WorkloadPriorityClass = "team", "low"
	for _, spec := range []Spec{mpi, train} {
		field := "RunPolicy.WorkloadPriorityClass"
		if spec.Kind() == Train {
			field = "WorkloadPriorityClass"
		}
		if got, change := effectOf(spec, withField(t, spec, field, "urgent")); got != inPlace || !strings.Contains(string(change.Patch), `"kueue.x-k8s.io/priority-class":"urgent"`) {
			t.Errorf("%s: low to urgent %s (patch %s, replace %v); want in place, patching the label", spec.Kind().Object, got, change.Patch, change.Replace)
		}
		got, change := effectOf(spec, withField(t, spec, field, ""))
		if got != replaces || len(change.Replace) != 1 || !strings.Contains(change.Replace[0], "Kueue refuses") {
			t.Errorf("%s: class removed %s (%v); want a replacement saying Kueue refuses it", spec.Kind().Object, got, change.Replace)
		}
	}
}
