package jobs

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// providerKeyPrefix begins the labels and annotations this provider writes for itself.
const providerKeyPrefix = "training.kubetrain.io/"

// What a change of a job does: Compare is the one place that says it, for a plan and for the
// update that applies it. Each kind says once which fields of its object change on a running
// job (live, besides the user's labels and annotations), whether its program takes a new
// worker count while it runs (rescalesInPlace) and how its pods stop (stop); every other
// difference between the objects two specs build replaces the job.

// Stop is how a job's pods stop, which the time a checkpoint's save needs depends on.
type Stop string

const (
	// StopSignal: the program is sent SIGTERM with its pods.
	StopSignal Stop = "signal"
	// StopTorchrun: torchrun is sent SIGTERM and passes it to the workers it runs.
	StopTorchrun Stop = "torchrun"
	// StopOpenMPI: mpirun's daemons wait Open MPI's sigkill timeout before they signal the ranks,
	// and again before they kill them (CheckpointGrace).
	StopOpenMPI Stop = "openmpi"
	// StopRuntime: the pods are the runtime's, whose framework says how they stop (a TrainJob's).
	StopRuntime Stop = "runtime"
)

// A Change is what changing a running job from one spec to another does.
type Change struct {
	// Replace says why the job must be replaced: each field of the job object, its count or a
	// dependent whose change cannot reach a running job. None when the job changes in place.
	Replace []string
	// Rescale is the in-place change of the worker count, nil when the count does not change or
	// cannot change in place (another field may still replace the job: Replace).
	Rescale *Rescale
	// Patch is the JSON merge patch of what else changes on the job object (the object the old
	// spec builds, at the new count, to the one the new spec builds); nil when nothing does.
	Patch []byte
	// Stop is how the old job's pods stop, when it is replaced or destroyed.
	Stop Stop
}

// Replaces says whether the change replaces the job.
func (c Change) Replaces() bool { return len(c.Replace) > 0 }

// InPlace says whether the change reaches the running job without replacing it.
func (c Change) InPlace() bool { return !c.Replaces() && (c.Rescale != nil || c.Patch != nil) }

// Rescale is an in-place change of the worker count: the kind's guarded JSON patch (RescalePatch).
type Rescale struct {
	From, To int32
	Patch    []byte
}

// Compare says what changing a running job from the old spec to the planned one does. Both
// specs are of the same kind; an error says that a spec does not build.
func Compare(old, planned Spec) (Change, error) {
	k := planned.Kind()
	if old.Kind() != k {
		return Change{}, fmt.Errorf("a %s cannot change into a %s", old.Kind().Object, k.Object)
	}
	before, beforeDeps, err := old.Build()
	if err != nil {
		return Change{}, err
	}
	after, afterDeps, err := planned.Build()
	if err != nil {
		return Change{}, err
	}
	c := Change{Stop: k.Stops()}
	from, err := k.Workers(before)
	if err != nil {
		return Change{}, err
	}
	to, err := k.Workers(after)
	if err != nil {
		return Change{}, err
	}
	if from != to {
		if reason := k.countReplaces(planned, before, from, to); reason != "" {
			c.Replace = append(c.Replace, reason)
		} else {
			c.Rescale = &Rescale{From: from, To: to, Patch: k.RescalePatch(from, to)}
		}
		// The old job at the new count: what differs from the new one is the rest of the change
		// (an elastic launcher's command names its count too, and changes with the rescale).
		if before, beforeDeps, err = old.WithWorkers(to).Build(); err != nil {
			return Change{}, err
		}
	}
	for _, p := range differences(before.Object, after.Object, nil) {
		switch {
		case k.changesInPlace(p, before, after):
		case slices.Equal(p, priorityClassPath):
			// Kueue v0.19.2's webhook refuses a class removed, or added to a job that runs
			// (jobframework.ValidateUpdateForWorkloadPriorityClassName); from one to another, Kueue
			// gives the Workload the new priority (changesInPlace).
			c.Replace = append(c.Replace, "the Kueue WorkloadPriorityClass is added or removed: Kueue refuses to remove a job's class, "+
				"and to add one to a job that runs")
		default:
			c.Replace = append(c.Replace, strings.Join(p, ".")+" changes")
		}
	}
	c.Replace = append(c.Replace, dependentsReplaced(beforeDeps, afterDeps)...)
	if c.Patch, err = MergePatch(before, after); err != nil {
		return Change{}, err
	}
	return c, nil
}

// countReplaces says why a change of the worker count from one to the other replaces the job
// the planned spec builds, before being the old object; "" when the count changes in place.
func (k *Kind) countReplaces(planned Spec, before *unstructured.Unstructured, from, to int32) string {
	switch {
	case !k.Rescalable():
		return fmt.Sprintf("the worker count changes (%d to %d): %s's API fixes it when the job is made", from, to, k.Operator)
	case !k.rescalesInPlace(planned):
		return fmt.Sprintf("the worker count changes (%d to %d): the program fixed its world when it started", from, to)
	case QueueName(before) != "":
		return fmt.Sprintf("the worker count changes (%d to %d): Kueue admitted the job for its old pod counts, and would evict it and "+
			"queue it again at the back", from, to)
	}
	return ""
}

// Stops is how the pods of a job of the kind stop.
func (k *Kind) Stops() Stop {
	if k.stop == "" {
		return StopSignal
	}
	return k.stop
}

// changesInPlace says whether a change of the job object's field at p (from before to after)
// reaches the running job: a label or annotation of the user's, or a field the kind says is
// live.
func (k *Kind) changesInPlace(p []string, before, after *unstructured.Unstructured) bool {
	// The object's labels and annotations, and, where the job object holds its pod templates,
	// theirs: pods made from then on carry them, running ones keep theirs. (A TrainJob's pods'
	// are in its runtime patches, which Trainer's API fixes while the job runs.) On the object,
	// this provider's own annotations are records for a read (the checkpoint, the inputs an
	// elastic job's command holds) that no operator reads; what they record changes the pods too.
	if slices.Equal(p, priorityClassPath) {
		return before.GetLabels()[PriorityClassLabel] != "" && after.GetLabels()[PriorityClassLabel] != ""
	}
	keyLive := userKey
	if p[0] == "metadata" {
		keyLive = objectKey
	}
	n := len(p)
	if p[0] != "metadata" && k.templates == nil {
		n = 0
	}
	if n >= 3 && p[n-3] == "metadata" && (p[n-2] == "labels" || p[n-2] == "annotations") {
		return keyLive(p[n-1])
	}
	if n >= 2 && p[n-2] == "metadata" && (p[n-1] == "labels" || p[n-1] == "annotations") {
		// The whole map comes or goes: in place when only those keys do.
		return sameKeysBut(keyLive, p, before, after)
	}
	field := strings.Join(p, ".")
	for _, live := range k.live {
		if field == live || strings.HasPrefix(field, live+".") {
			return true
		}
	}
	return false
}

// priorityClassPath is the job object's Kueue WorkloadPriorityClass label.
var priorityClassPath = []string{"metadata", "labels", PriorityClassLabel}

// objectKey says whether a label or annotation of the job object changes in place: any but the
// label of this provider's jobs and those a tool or controller reads (the queue's: SystemKey).
func objectKey(key string) bool { return key != ManagedByLabel && !SystemKey(key) }

// userKey says whether a label or annotation key is the user's: not one this provider writes
// for what another attribute says (the queue, the checkpoint, the sensitive variables' names,
// a topology), nor one a tool or controller reads (SystemKey).
func userKey(key string) bool {
	return key != ManagedByLabel && !strings.HasPrefix(key, providerKeyPrefix) && !SystemKey(key)
}

// sameKeysBut says whether before and after hold the same labels or annotations at p, but for
// the keys that change in place (live).
func sameKeysBut(live func(string) bool, p []string, before, after *unstructured.Unstructured) bool {
	own := func(o *unstructured.Unstructured) map[string]any {
		all, _ := valueAtPath(o.Object, p).(map[string]any)
		out := map[string]any{}
		for key, v := range all {
			if !live(key) {
				out[key] = v
			}
		}
		return out
	}
	return reflect.DeepEqual(own(before), own(after))
}

// valueAtPath is the value at a path of maps and lists (an index), or nil.
func valueAtPath(v any, p []string) any {
	for _, key := range p {
		switch o := v.(type) {
		case map[string]any:
			v = o[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(o) {
				return nil
			}
			v = o[i]
		default:
			return nil
		}
	}
	return v
}

// differences are the paths of the fields that differ between a and b: where both are maps,
// those of their keys; where both are lists of one length, those of their items (by index);
// otherwise the path itself.
func differences(a, b any, at []string) [][]string {
	ma, aMap := a.(map[string]any)
	mb, bMap := b.(map[string]any)
	la, aList := a.([]any)
	lb, bList := b.([]any)
	switch {
	case aMap && bMap, aMap && b == nil, bMap && a == nil:
		keys := map[string]bool{}
		for key := range ma {
			keys[key] = true
		}
		for key := range mb {
			keys[key] = true
		}
		sorted := slices.Sorted(maps.Keys(keys))
		var out [][]string
		for _, key := range sorted {
			out = append(out, differences(ma[key], mb[key], append(slices.Clone(at), key))...)
		}
		return out
	case aList && bList && len(la) == len(lb):
		var out [][]string
		for i := range la {
			out = append(out, differences(la[i], lb[i], append(slices.Clone(at), strconv.Itoa(i)))...)
		}
		return out
	case reflect.DeepEqual(normalJSON(a), normalJSON(b)):
		return nil
	}
	return [][]string{at}
}

// dependentsReplaced says which of a job's dependents the change alters: a dependent is made once
// and never changed, so the job is replaced. One that comes or goes (the etcd's NetworkPolicy) is
// made or deleted beside the running job.
func dependentsReplaced(before, after []*unstructured.Unstructured) []string {
	name := func(o *unstructured.Unstructured) string { return o.GetKind() + "/" + o.GetName() }
	was := map[string]*unstructured.Unstructured{}
	for _, o := range before {
		was[name(o)] = o
	}
	var out []string
	for _, o := range after {
		if w, ok := was[name(o)]; ok && !reflect.DeepEqual(normalJSON(w.Object), normalJSON(o.Object)) {
			out = append(out, "its "+name(o)+" changes")
		}
	}
	slices.Sort(out)
	return out
}

// MergePatch is the JSON merge patch from before to after, nil when they are the same: only what
// differs is sent, so what others set on the object stays.
func MergePatch(before, after *unstructured.Unstructured) ([]byte, error) {
	b, err := json.Marshal(before.Object)
	if err != nil {
		return nil, err
	}
	a, err := json.Marshal(after.Object)
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.CreateMergePatch(b, a)
	if err != nil || string(patch) == "{}" {
		return nil, err
	}
	return patch, nil
}
