package jobs

import "k8s.io/apimachinery/pkg/runtime/schema"

// The APIs of the objects this provider makes, reads or waits for; a job kind's own is also its
// Kind's GVR.

// NetworkPolicyGVR is networking.k8s.io/v1 NetworkPolicy.
var NetworkPolicyGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}

// The resources of what operators make for a job, besides pods (Kind.Owns).
var (
	ConfigMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	BatchJobGVR  = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	JobSetGVR    = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
)

// ServiceGVR is the core Service.
var ServiceGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// DeploymentGVR is the apps/v1 Deployment.
var DeploymentGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// TrainJobGVR is trainer.kubeflow.org/v1alpha1 TrainJob.
var TrainJobGVR = schema.GroupVersionResource{Group: TrainerGroup, Version: "v1alpha1", Resource: "trainjobs"}

// The APIs of Kubeflow Trainer's training runtimes: a TrainingRuntime serves its namespace's
// TrainJobs, a ClusterTrainingRuntime every namespace's.
var (
	TrainingRuntimeGVR        = schema.GroupVersionResource{Group: TrainerGroup, Version: "v1alpha1", Resource: "trainingruntimes"}
	ClusterTrainingRuntimeGVR = schema.GroupVersionResource{Group: TrainerGroup, Version: "v1alpha1", Resource: "clustertrainingruntimes"}
)
