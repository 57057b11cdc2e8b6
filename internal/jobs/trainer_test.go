package jobs

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTrainJobStatus(t *testing.T) {
	obj, err := NewTrainJob(trainSpec())
	if err != nil {
		t.Fatal(err)
	}
	start := metav1.NewTime(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	pod := func(name, phase string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ReplicatedJobLabel: "node", jobCompletionIndexLabel: name[len(name)-1:]}},
			Spec: corev1.PodSpec{NodeName: "n-" + name}, Status: corev1.PodStatus{Phase: corev1.PodPhase(phase), StartTime: &start}}
	}
	for _, c := range []struct {
		name   string
		status map[string]any
		pods   []corev1.Pod
		want   string
	}{
		{"no status yet", nil, nil, Pending},
		{"pods not ready", map[string]any{"jobsStatus": []any{map[string]any{"name": "node", "active": int64(1), "ready": int64(0)}}}, []corev1.Pod{pod("p0", "Pending")}, Pending},
		{"ready", map[string]any{"jobsStatus": []any{map[string]any{"name": "node", "active": int64(1), "ready": int64(1)}}}, []corev1.Pod{pod("p1", "Running"), pod("p0", "Running")}, Running},
		{"launcher waits for the nodes", map[string]any{"jobsStatus": []any{
			map[string]any{"name": "node", "active": int64(1), "ready": int64(1)}, map[string]any{"name": "launcher", "active": int64(0), "ready": int64(0)}}}, nil, Pending},
		{"complete", map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True", "lastTransitionTime": "2026-01-01T11:00:00Z", "reason": "x", "message": "done"}}}, nil, Succeeded},
		{"failed", map[string]any{"conditions": []any{map[string]any{"type": "Failed", "status": "True", "lastTransitionTime": "2026-01-01T11:00:00Z", "reason": "DeadlineExceeded", "message": "too long"}}}, nil, Failed},
		{"suspended", map[string]any{"conditions": []any{map[string]any{"type": "Suspended", "status": "True", "lastTransitionTime": "2026-01-01T11:00:00Z", "reason": "Suspended", "message": "x"}}}, nil, Suspended},
	} {
		o := obj.DeepCopy()
		if c.status != nil {
			o.Object["status"] = c.status
		}
		s, err := Train.Status(Observed{Object: o, Pods: c.pods}, start.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase != c.want {
			t.Errorf("%s: %s, want %s", c.name, s.Phase, c.want)
		}
		if len(c.pods) == 2 && (s.Instances[0].Name != "p0" || s.Instances[0].Node != "n-p0" || s.Instances[1].Index != 1 || s.Duration != time.Hour) {
			t.Errorf("%s: instances %+v, duration %s", c.name, s.Instances, s.Duration)
		}
		if c.want == Failed && !strings.Contains(Train.Failure(Observed{Object: o}), "DeadlineExceeded: too long") {
			t.Errorf("failure %q", Train.Failure(Observed{Object: o}))
		}
	}
	if got := (TrainJobSpec{Nodes: 3, RuntimeJobs: []RuntimeJob{{Name: "node"}}}).Expect(); !reflect.DeepEqual(got, map[string]int{"node": 3}) {
		t.Errorf("expect %v", got)
	}
	if got := (TrainJobSpec{Nodes: 3, RuntimeJobs: []RuntimeJob{{Name: "node"}, {Name: "launcher"}}}).Expect(); got != nil {
		t.Errorf("expect with a launcher %v", got)
	}
}
