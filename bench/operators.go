package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// operatorTimes is, per kind, how long its operator took from each job's creation to reporting it
// running, by the API's own timestamps (whole seconds): the Running condition of the Kubeflow
// kinds, status.runTime of a Framework. Read after a tool's apply, it shows what of the apply is
// the operators' own time, the same whichever tool made the jobs.
type operatorTimes map[string][]float64

func readOperatorTimes(ctx context.Context, kubeconfig, namespace string) (operatorTimes, error) {
	dyn, err := dynamicClient(kubeconfig)
	if err != nil {
		return nil, err
	}
	times := operatorTimes{}
	for _, d := range dumped {
		list, err := dyn.Resource(d.gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, item := range list.Items {
			running, ok := runningSince(item)
			if !ok {
				return nil, fmt.Errorf("%s %s/%s: no time it was reported running", item.GetKind(), namespace, item.GetName())
			}
			times[item.GetKind()] = append(times[item.GetKind()], running.Sub(item.GetCreationTimestamp().Time).Seconds())
		}
	}
	return times, nil
}

// runningSince is when the operator reported the job running.
func runningSince(job unstructured.Unstructured) (time.Time, bool) {
	if runTime, ok, _ := unstructured.NestedString(job.Object, "status", "runTime"); ok {
		t, err := time.Parse(time.RFC3339, runTime)
		return t, err == nil
	}
	conditions, _, _ := unstructured.NestedSlice(job.Object, "status", "conditions")
	for _, c := range conditions {
		condition, _ := c.(map[string]any)
		if condition["type"] == "Running" && condition["status"] == "True" {
			t, err := time.Parse(time.RFC3339, fmt.Sprint(condition["lastTransitionTime"]))
			return t, err == nil
		}
	}
	return time.Time{}, false
}

// summary is each kind's median and slowest time, in seconds.
func (o operatorTimes) summary() string {
	kinds := make([]string, 0, len(o))
	for kind := range o {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	var parts []string
	for _, kind := range kinds {
		s := append([]float64(nil), o[kind]...)
		sort.Float64s(s)
		parts = append(parts, fmt.Sprintf("%s %.0f / %.0f s", kind, s[len(s)/2], s[len(s)-1]))
	}
	return strings.Join(parts, ", ")
}
