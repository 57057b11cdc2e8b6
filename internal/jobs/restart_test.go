package jobs

import (
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every kind with a suspend restarts a running job by suspending and resuming it: the patches
// change exactly that field of its own object; a job that is finished, queued by Kueue or
// suspended by its owner, and an elastic job, are refused with what to do instead.
func TestAJobRestartsBySuspendingAndResumingIt(t *testing.T) {
	for _, k := range Kinds() {
		ex := kindExamples[k]
		obj, _, err := ex.spec(false).Build()
		if err != nil {
			t.Fatal(err)
		}
		suspend, resume, err := k.RestartPatches(obj, Running)
		if k == Elastic {
			if err == nil || !strings.Contains(err.Error(), "-replace") {
				t.Errorf("an elastic job restarts in place, or is refused without saying what to do: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		apply := func(o *unstructured.Unstructured, patch []byte) *unstructured.Unstructured {
			raw, _ := o.MarshalJSON()
			patched, err := jsonpatch.MergePatch(raw, patch)
			if err != nil {
				t.Fatal(err)
			}
			out := &unstructured.Unstructured{}
			if err := out.UnmarshalJSON(patched); err != nil {
				t.Fatal(err)
			}
			return out
		}
		suspended := apply(obj, suspend)
		if !k.Suspended(suspended) {
			t.Errorf("kind %s: the suspend patch %s does not suspend the job", k.Name, suspend)
		}
		if resumed := apply(suspended, resume); k.Suspended(resumed) {
			t.Errorf("kind %s: the resume patch %s does not resume it", k.Name, resume)
		}
		for phase, why := range map[string]string{Succeeded: "finished", Failed: "finished"} {
			if _, _, err := k.RestartPatches(obj, phase); err == nil || !strings.Contains(err.Error(), why) {
				t.Errorf("kind %s: a %s job is restarted (%v)", k.Name, phase, err)
			}
		}
		if _, _, err := k.RestartPatches(suspended, Suspended); err == nil || !strings.Contains(err.Error(), "suspend = false") {
			t.Errorf("kind %s: a suspended job is restarted (%v)", k.Name, err)
		}
		queued := obj.DeepCopy()
		labels := queued.GetLabels()
		labels[QueueLabel] = "team"
		queued.SetLabels(labels)
		if _, _, err := k.RestartPatches(queued, Running); err == nil || !strings.Contains(err.Error(), "training_requeue_job") {
			t.Errorf("kind %s: a queued job is restarted by its suspend, which is Kueue's (%v)", k.Name, err)
		}
	}
}
