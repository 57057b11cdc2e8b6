package kube

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// metadataStore is a metadata informer's store holding objs, for ownedBy; nothing is listed or
// watched.
func metadataStore(t *testing.T, objs ...*metav1.PartialObjectMetadata) *sharedInformer {
	t.Helper()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{byOwner: indexByOwner})
	for _, o := range objs {
		if err := inf.GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return &sharedInformer{SharedIndexInformer: inf}
}

func owned(name, uid string, owners ...string) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid)}}
	for _, owner := range owners {
		o.OwnerReferences = append(o.OwnerReferences, metav1.OwnerReference{UID: types.UID(owner)})
	}
	return o
}

// What a job owns is found through every level (a TrainJob's JobSet, and the JobSet's Jobs and
// Service), across resources, and nothing of another owner's; a loop of owners ends.
func TestOwnedByFollowsOwnersThroughEveryLevel(t *testing.T) {
	jobSets := metadataStore(t, owned("train", "js", "job"), owned("other", "js2", "another-job"))
	jobs := metadataStore(t, owned("train-node-0", "j0", "js"), owned("other-node-0", "j1", "js2"),
		owned("loop-a", "la", "j0", "lb"), owned("loop-b", "lb", "la"))
	services := metadataStore(t, owned("train", "svc", "js"), owned("unowned", "svc2"))
	got, err := ownedBy([]*sharedInformer{jobSets, jobs, services}, []string{"jobsets", "jobs", "services"}, "job")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"jobs/loop-a", "jobs/loop-b", "jobs/train-node-0", "jobsets/train", "services/train"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("owned by the job: %v, want %v", got, want)
	}
	if got, _ := ownedBy([]*sharedInformer{jobSets, jobs, services}, []string{"jobsets", "jobs", "services"}, "gone"); len(got) != 0 {
		t.Fatalf("an owner that owns nothing: %v", got)
	}
}

// The wait on an object a job owns beside its pods (an elastic job's Services, a TensorBoard's
// Deployment) watches the pods of its job's kind, as the job's own wait does, not an informer
// of one job's pods: with one such informer per job, a destroy of 100 elastic jobs opened 38
// watches where 10 jobs opened 15.
func TestTheWaitOnAJobsDependentWatchesThePodsOfItsJobsKind(t *testing.T) {
	job := Target{Name: "resnet", PodSelector: "FC_FRAMEWORK_NAME=resnet"}
	dependent := Target{Name: "resnet-etcd", JobName: job.Name, PodSelector: job.PodSelector}
	ofJob, err := kindPods(job)
	if err != nil {
		t.Fatal(err)
	}
	ofDependent, err := kindPods(dependent)
	if err != nil {
		t.Fatal(err)
	}
	if ofDependent != ofJob || ofJob != "FC_FRAMEWORK_NAME" {
		t.Fatalf("the dependent's wait watches pods by %q, the job's by %q; want both FC_FRAMEWORK_NAME", ofDependent, ofJob)
	}
}

// The pods an informer of a kind holds are every job's of that kind: the job's own selector
// with its name as any value, its operator's label kept.
func TestKindPodsSelectsEveryJobOfTheKindAndNoOtherPod(t *testing.T) {
	target := Target{Name: "resnet", PodSelector: "training.kubeflow.org/job-name=resnet,training.kubeflow.org/operator-name=tfjob-controller"}
	got, err := kindPods(target)
	if err != nil {
		t.Fatal(err)
	}
	selector, err := labels.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	for set, want := range map[string]bool{
		"training.kubeflow.org/job-name=bert,training.kubeflow.org/operator-name=tfjob-controller":        true,
		"training.kubeflow.org/job-name=resnet,training.kubeflow.org/operator-name=tfjob-controller":      true,
		"training.kubeflow.org/job-name=resnet,training.kubeflow.org/operator-name=pytorchjob-controller": false,
		"app=notebook": false,
	} {
		l, _ := labels.ConvertSelectorToLabelsMap(set)
		if selector.Matches(l) != want {
			t.Errorf("%s selects %s: %v, want %v", got, set, !want, want)
		}
	}
}

// What a job owns is found alike in the metadata as listed and as a metadata informer keeps it
// (slimMetadata), which keeps no labels, annotations, finalizers or managed fields.
func TestOwnedByFindsInSlimMetadataWhatItFindsInTheWhole(t *testing.T) {
	whole := []*metav1.PartialObjectMetadata{owned("train", "js", "job"), owned("train-node-0", "j0", "js"), owned("other", "x", "another-job")}
	deleted := metav1.Now()
	for _, o := range whole {
		o.Labels = map[string]string{"jobset.sigs.k8s.io/jobset-name": "train"}
		o.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
		o.Finalizers = []string{"example.com/hold"}
		o.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}
		o.DeletionTimestamp = &deleted
	}
	slim := make([]*metav1.PartialObjectMetadata, len(whole))
	for i, o := range whole {
		s, err := slimMetadata(o)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := s.(*metav1.PartialObjectMetadata)
		if !ok {
			t.Fatalf("%s: slimMetadata made a %T", o.Name, s)
		}
		slim[i] = p
		if s := slim[i]; s.Labels != nil || s.Annotations != nil || s.Finalizers != nil || s.ManagedFields != nil {
			t.Errorf("%s kept more than its name, UID, owners and deletion: %+v", o.Name, s.ObjectMeta)
		}
		if s := slim[i]; s.DeletionTimestamp == nil || s.UID != o.UID || len(s.OwnerReferences) != len(o.OwnerReferences) {
			t.Errorf("%s lost its UID, owners or deletion: %+v", o.Name, s.ObjectMeta)
		}
	}
	for what, objs := range map[string][]*metav1.PartialObjectMetadata{"whole": whole, "slim": slim} {
		got, err := ownedBy([]*sharedInformer{metadataStore(t, objs...)}, []string{"objects"}, "job")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if want := []string{"objects/train", "objects/train-node-0"}; !slices.Equal(got, want) {
			t.Errorf("%s: owned by the job: %v, want %v", what, got, want)
		}
	}
}
