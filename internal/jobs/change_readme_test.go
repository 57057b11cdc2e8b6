package jobs

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// readmeChange is a row of README.md's table "What a change does": its first cell, the effect
// its second says, and the rows of the tables above it stands for (by kind and field, or by the
// name of a count change); outside says why a row has none (what it changes is not the job object).
type readmeChange struct {
	cell    string
	effect  effect
	fields  map[string][]string
	counts  []string
	outside string
}

var kubeflowLive = []string{"RunPolicy.CleanPodPolicy"}

var readmeChanges = []readmeChange{
	{cell: "`worker_count` of an elastic job (`training_elastic_job`, `elastic` on an MPI or PyTorch job, `dynamic_workers` on a TF job)",
		effect: rescales, counts: []string{"elastic MPI", "dynamic TF", "elastic PyTorch", "torchelastic"}},
	{cell: "`worker_count` of a plain MPI, PyTorch or TF job, `num_nodes` of a TrainJob",
		effect: replaces, counts: []string{"plain MPI", "plain TF", "plain PyTorch", "TrainJob"}},
	{cell: "`worker_count` of any job with `queue_name`", effect: replaces, counts: []string{"queued elastic MPI"}},
	{cell: "`labels`, `annotations`, the run policy the operator reads while the job runs (`clean_pod_policy`; on a TF or PyTorch job also " +
		"`ttl_seconds_after_finished`, `backoff_limit`, `active_deadline_seconds`)", effect: inPlace, fields: map[string][]string{
		"mpi":     append([]string{"Pod.Labels", "Pod.Annotations"}, kubeflowLive...),
		"tf":      {"Pod.Labels", "Pod.Annotations", "RunPolicy.CleanPodPolicy", "RunPolicy.TTLSecondsAfterFinished", "RunPolicy.BackoffLimit", "RunPolicy.ActiveDeadlineSeconds"},
		"pytorch": {"Pod.Labels", "Pod.Annotations", "RunPolicy.CleanPodPolicy", "RunPolicy.TTLSecondsAfterFinished", "RunPolicy.BackoffLimit", "RunPolicy.ActiveDeadlineSeconds"},
		"elastic": {"Pod.Labels", "Pod.Annotations"},
		"train":   {"Labels", "Annotations"},
	}},
	{cell: "`suspend`", effect: inPlace, fields: map[string][]string{"mpi": {"RunPolicy.Suspend"}, "tf": {"RunPolicy.Suspend"},
		"pytorch": {"RunPolicy.Suspend"}, "train": {"Suspend"}}},
	{cell: "`etcd_network_policy` of an elastic job", effect: inPlace, fields: map[string][]string{"elastic": {"EtcdNetworkPolicy"}}},
	{cell: "a variable moved between `env` and `sensitive_env` with its value *(0.2.0)*", effect: inPlace, fields: map[string][]string{
		"mpi": {"Pod.SensitiveEnv"}, "tf": {"Pod.SensitiveEnv"}, "pytorch": {"Pod.SensitiveEnv"}, "elastic": {"Pod.SensitiveEnv"}, "train": {"Pod.SensitiveEnv"}}},
	{cell: "`sensitive_env_wo_version` *(0.2.0)*", effect: inPlace,
		outside: "a new version changes only the job object's record of it (TestANewVersionOfTheWriteOnlyVariablesChangesTheJobInPlace)"},
	{cell: "`tensorboard`", outside: "the TensorBoard is a companion of its own objects, beside the job"},
	{cell: "`wait_for`, `timeouts`, `fail_fast`, `min_running_seconds`, `recreate_if_missing`, `protect_running` *(0.2.0)*",
		outside: "only Terraform holds them: no spec has them"},
	{cell: "anything else baked into the pods (image, command, resources, placement)", effect: replaces},
}

// README's table of what a change does says what the kinds' tables above say: each row stands for
// the changes it names, which do what it says on every kind, and every other change of a field
// replaces the job (or changes nothing, or is refused, on a kind where the field says nothing).
func TestTheReadmesChangeTableIsWhatTheKindsCompareSay(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(raw)
	start := strings.Index(section, "## What a change does")
	if start < 0 {
		t.Fatal(`README.md has no section "What a change does"`)
	}
	section = section[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var cells []string
	says := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| A change of") {
			parts := strings.SplitN(strings.TrimPrefix(line, "| "), " | ", 2)
			cell := strings.TrimSpace(parts[0])
			cells = append(cells, cell)
			if len(parts) == 2 {
				says[cell] = parts[1]
			}
		}
	}
	var want []string
	for _, r := range readmeChanges {
		want = append(want, r.cell)
	}
	if !slices.Equal(cells, want) {
		t.Fatalf("README.md's change table has the rows\n%s\nwant\n%s\n(change both together)", strings.Join(cells, "\n"), strings.Join(want, "\n"))
	}

	counts := map[string]effect{}
	for _, c := range countChanges() {
		counts[c.name] = c.want
	}
	named := map[string]bool{}
	for _, r := range readmeChanges {
		for _, c := range r.counts {
			if got, ok := counts[c]; !ok || got != r.effect {
				t.Errorf("%q says %s; the count change %q does %s", r.cell, r.effect, c, got)
			}
		}
		for kind, fields := range r.fields {
			for _, f := range fields {
				named[kind+" "+f] = true
				if got := tableEffect(t, kind, f); got != r.effect {
					t.Errorf("%q says %s; on %s, a change of %s does %s", r.cell, r.effect, kind, f, got)
				}
			}
		}
		if words := map[effect]string{rescales: "rescales in place", inPlace: "in place", replaces: "replaces the job"}[r.effect]; words != "" &&
			!strings.HasPrefix(says[r.cell], words) {
			t.Errorf("%q: README.md says %q, want it to say %q", r.cell, says[r.cell], words)
		}
		if r.effect == "" && r.outside == "" {
			t.Errorf("%q stands for nothing in the tables and says not why", r.cell)
		}
	}
	for _, kc := range kindChanges {
		kind := kc.base().Kind().Name
		for _, row := range append(slices.Clone(podChanges), kc.rows...) {
			if named[kind+" "+row.field] || row.field == "Workers" || row.field == "Nodes" {
				continue
			}
			if got := tableEffect(t, kind, row.field); got == inPlace || got == rescales {
				t.Errorf("on %s, a change of %s does %s, which README.md's change table does not name", kind, row.field, got)
			}
		}
	}
}

// tableEffect is what the tables above say a change of the field does on the kind.
func tableEffect(t *testing.T, kind, field string) effect {
	t.Helper()
	for _, kc := range kindChanges {
		if kc.base().Kind().Name != kind {
			continue
		}
		for _, row := range append(slices.Clone(podChanges), kc.rows...) {
			if row.field != field {
				continue
			}
			if e, ok := row.except[kind]; ok {
				return e
			}
			return row.want
		}
	}
	t.Fatalf("no row for %s on %s", field, kind)
	return ""
}

// liveAttributes are the attributes of the fields a kind may change on a running job besides
// labels and annotations, by the field of each kind's spec (a TrainJob's own first).
var liveAttributes = map[string][]string{
	"suspend":                    {"Suspend", "RunPolicy.Suspend"},
	"queue_name":                 {"QueueName", "RunPolicy.QueueName"},
	"clean_pod_policy":           {"RunPolicy.CleanPodPolicy"},
	"ttl_seconds_after_finished": {"RunPolicy.TTLSecondsAfterFinished"},
	"backoff_limit":              {"RunPolicy.BackoffLimit"},
	"active_deadline_seconds":    {"ActiveDeadlineSeconds", "RunPolicy.ActiveDeadlineSeconds"},
	"etcd_network_policy":        {"EtcdNetworkPolicy"},
}

// Each job resource's page says which of those change the running job in place, as its kind's
// table does: one the page names in place is in place there, and one in place there is named.
func TestEachResourcePageSaysWhatChangesInPlaceAsItsKindDoes(t *testing.T) {
	for _, kc := range kindChanges {
		kind := kc.base().Kind().Name
		raw, err := os.ReadFile("../../templates/resources/" + kind + "_job.md.tmpl")
		if err != nil {
			t.Fatal(err)
		}
		var said []string
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "- **In place.**") {
				said = append(said, line)
				continue
			}
			for _, sentence := range strings.SplitAfter(line, ". ") {
				if strings.Contains(sentence, "changes in place") {
					said = append(said, sentence)
				}
			}
		}
		text := strings.Join(said, "\n")
		fields := map[string]bool{}
		for _, row := range append(slices.Clone(podChanges), kc.rows...) {
			fields[row.field] = true
		}
		for attribute, candidates := range liveAttributes {
			i := slices.IndexFunc(candidates, func(f string) bool { return fields[f] })
			if i < 0 {
				continue
			}
			named := strings.Contains(text, "`"+attribute+"`") && !strings.Contains(text, "but `"+attribute+"`")
			switch live := tableEffect(t, kind, candidates[i]) == inPlace; {
			case live && !named:
				t.Errorf("training_%s_job: %s changes the running job in place, which its page does not say", kind, attribute)
			case !live && named:
				t.Errorf("training_%s_job: its page says %s changes in place; it replaces the job", kind, attribute)
			}
		}
	}
}
