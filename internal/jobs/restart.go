package jobs

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A restart in place stops a job's pods in order and has its operator make them again, keeping
// the job object, its UID and everything Terraform holds of it: the operator suspends the job
// (every pod gets its termination grace, so a checkpoint is saved as on a replacement) and then
// resumes it, as mpi-operator v0.8, training-operator v1.9 and Trainer v2.3 (through JobSet) do
// for runPolicy.suspend and spec.suspend. A FrameworkController Framework has no suspend.

// RestartPatches are the JSON merge patches that suspend and then resume the job obj, whose
// status (an arena phase) is given, or an error that says why it is not restarted so and what
// does it instead.
func (k *Kind) RestartPatches(obj *unstructured.Unstructured, phase string) (suspend, resume []byte, err error) {
	what := fmt.Sprintf("%s %s/%s", k.Object, obj.GetNamespace(), obj.GetName())
	switch {
	case k.suspendField == nil:
		return nil, nil, fmt.Errorf("%s cannot be restarted in place: %s has no suspend. An elastic job's workers restart by themselves "+
			"when one stops; to restart all of them from the checkpoint, replace the job (terraform apply -replace=ADDRESS)", what, k.Operator)
	case Finished(phase):
		return nil, nil, fmt.Errorf("%s has finished (%s): a finished job is not restarted. Run it again with terraform apply -replace=ADDRESS", what, phase)
	case QueueName(obj) != "":
		return nil, nil, fmt.Errorf("%s is queued by Kueue (LocalQueue %s), which owns its suspend: send it back to its queue with the "+
			"action training_requeue_job, which stops its pods in order and has Kueue admit it again", what, QueueName(obj))
	case k.Suspended(obj):
		return nil, nil, fmt.Errorf("%s is suspended: it has no pods to restart. Resume it (suspend = false) instead", what)
	}
	if suspend, err = k.SuspendPatch(true); err == nil {
		resume, err = k.SuspendPatch(false)
	}
	return suspend, resume, err
}

// SuspendPatch is the JSON merge patch that suspends (or resumes) a job of the kind, or an error
// for a kind without a suspend.
func (k *Kind) SuspendPatch(suspend bool) ([]byte, error) {
	if k.suspendField == nil {
		return nil, fmt.Errorf("%s has no suspend", k.Operator)
	}
	var p any = suspend
	for i := len(k.suspendField) - 1; i >= 0; i-- {
		p = map[string]any{k.suspendField[i]: p}
	}
	return json.Marshal(p)
}
