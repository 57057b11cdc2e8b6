package kube

import (
	"encoding/json"
	"strings"
	"testing"
)

// A list is read as each of its objects without its managedFields, by name; an object of a
// built-in kind, listed without apiVersion and kind, is given the list's.
func TestAListIsReadAsEachObjectWithoutItsManagedFields(t *testing.T) {
	for _, tc := range []struct{ what, list, wantAPIVersion, wantKind string }{
		{"custom resources", `{"apiVersion":"kubeflow.org/v1","items":[
			{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"a","managedFields":[{"manager":"x"}],"labels":{"l":"1"}},"spec":{"x":1}},
			{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"b"},"status":{"y":[1,2]}}],
			"kind":"TFJobList","metadata":{"resourceVersion":"7"}}`, "kubeflow.org/v1", "TFJob"},
		{"services", `{"kind":"ServiceList","apiVersion":"v1","metadata":{},"items":[
			{"metadata":{"name":"a","managedFields":[{"manager":"x"}],"labels":{"l":"1"}},"spec":{"x":1}},
			{"metadata":{"name":"b"},"status":{"y":[1,2]}}]}`, "v1", "Service"},
		{"services, the list's kind after its items", `{"apiVersion":"v1","items":[
			{"metadata":{"name":"a","managedFields":[{"manager":"x"}],"labels":{"l":"1"}},"spec":{"x":1}},
			{"metadata":{"name":"b"},"status":{"y":[1,2]}}],"kind":"ServiceList","metadata":{}}`, "v1", "Service"},
	} {
		objects, _, err := readList(strings.NewReader(tc.list), byName)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		if len(objects) != 2 {
			t.Fatalf("%s: %d objects", tc.what, len(objects))
		}
		for name, data := range objects {
			var obj struct {
				APIVersion, Kind string
				Metadata         map[string]any
			}
			if err := json.Unmarshal(data, &obj); err != nil {
				t.Fatalf("%s, %s: %v", tc.what, name, err)
			}
			if obj.Metadata["name"] != name || obj.Metadata["managedFields"] != nil || obj.APIVersion != tc.wantAPIVersion || obj.Kind != tc.wantKind {
				t.Errorf("%s, %s: read as %s", tc.what, name, data)
			}
		}
		if !strings.Contains(string(objects["a"]), `"labels":{"l":"1"}`) || !strings.Contains(string(objects["b"]), `"status":{"y":[1,2]}`) {
			t.Errorf("%s: the objects lost what they hold: %s %s", tc.what, objects["a"], objects["b"])
		}
	}
	if _, _, err := readList(strings.NewReader(`{"items":[{"metadata":{"name":"a"}}`), byName); err == nil {
		t.Error("a list cut short is read without an error")
	}
}

// A list of every namespace (Kueue's Workloads, which a queued plan reads) keeps objects of the
// same name in two namespaces apart, each by "namespace/name".
func TestAListOfEveryNamespaceKeepsObjectsOfOneNameApart(t *testing.T) {
	objects, _, err := readList(strings.NewReader(`{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"WorkloadList","items":[
		{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","metadata":{"name":"mpijob-train-1a2b3","namespace":"team-a"},"spec":{"queueName":"a"}},
		{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","metadata":{"name":"mpijob-train-1a2b3","namespace":"team-b"},"spec":{"queueName":"b"}}]}`), byNamespacedName)
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 2 || !strings.Contains(string(objects["team-a/mpijob-train-1a2b3"]), `"queueName":"a"`) ||
		!strings.Contains(string(objects["team-b/mpijob-train-1a2b3"]), `"queueName":"b"`) {
		t.Fatalf("read as %q", objects)
	}
}

// A page of a list says where the next one starts (metadata.continue), so a list of thousands of
// Workloads is read page by page; the last page says none.
func TestReadListGivesTheNextPagesToken(t *testing.T) {
	for list, want := range map[string]string{
		`{"kind":"WorkloadList","metadata":{"resourceVersion":"9","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"},"items":[{"metadata":{"name":"a"}}]}`: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ",
		`{"kind":"WorkloadList","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"b"}}]}`:                                             "",
	} {
		objects, next, err := readList(strings.NewReader(list), byName)
		if err != nil || len(objects) != 1 || next != want {
			t.Errorf("%s: %d objects, next %q, %v; want one, next %q", list, len(objects), next, err, want)
		}
	}
}
