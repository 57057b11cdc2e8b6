package provider

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubetrain/terraform-provider-training/internal/jobs"
	"github.com/kubetrain/terraform-provider-training/internal/kube"
)

// What a ClusterQueue's admission checks add to a queued job's prediction: MultiKueue's dispatch
// to worker clusters, and the capacity Kueue's provisioning controller asks for.

// predictDispatch says which of the fleet's worker clusters would admit the job's copy now, each
// by its own Kueue's queues, workloads and nodes: the summary's ending, and each worker's answer.
// A worker the provider block does not give cannot be read, and says so.
func (r *jobResource) predictDispatch(ctx context.Context, fleet []string, obj *unstructured.Unstructured, roles []jobs.RolePods) (summary, said string) {
	var would, answers []string
	for _, name := range fleet {
		w := r.client.Worker(name)
		if w == nil {
			answers = append(answers, "worker cluster "+name+" was not checked: the provider block does not give it (worker_cluster)")
			continue
		}
		there, why, err := predictIn(ctx, w, nil, r.kind, obj, roles)
		switch {
		case err != nil:
			answers = append(answers, "worker cluster "+name+" was not checked: "+err.Error())
		case why != "":
			answers = append(answers, "worker cluster "+name+" would not admit it: "+why+" there")
		case there.p.Admitted:
			would = append(would, name)
			answer := fmt.Sprintf("worker cluster %s would admit it in ClusterQueue %s, on flavors: %s", name, there.queue, flavorList(there.p.Flavors))
			if len(there.p.Targets) > 0 {
				answer += fmt.Sprintf(", by preempting %d workload(s)", len(there.p.Targets))
			}
			answers = append(answers, answer)
		case there.p.Never:
			answers = append(answers, fmt.Sprintf("worker cluster %s would never admit it as its ClusterQueue %s is now: %s", name, there.queue, there.p.Message))
		default:
			answers = append(answers, fmt.Sprintf("worker cluster %s would hold it in ClusterQueue %s: %s", name, there.queue, there.p.Message))
		}
	}
	if len(would) == 0 {
		return ", but no worker cluster would admit it now", strings.Join(answers, "; ")
	}
	return ", dispatched to worker cluster " + strings.Join(would, " or "), strings.Join(answers, "; ")
}

// provisioningSaid adds to a prediction what its ClusterQueue's checks of Kueue's provisioning
// controller do: the job is given its quota, then admitted once the cluster's autoscaler has
// provisioned its capacity, each check's ProvisioningRequestConfig saying how it is asked for; a
// check whose config is missing admits nothing (Kueue keeps it inactive, BadParametersRef).
func provisioningSaid(summary, detail, queue string, admitted bool, checks []kube.ProvisioningCheck) (string, string) {
	var names, missing []string
	for _, c := range checks {
		names = append(names, fmt.Sprintf("%s (ProvisioningRequestConfig %s)", c.Check, c.Config))
		if c.Missing {
			missing = append(missing, fmt.Sprintf("admission check %s names ProvisioningRequestConfig %s, which does not exist", c.Check, c.Config))
		}
	}
	if len(missing) > 0 {
		return summary + ", but would never admit it while its admission check's config is missing",
			detail + " ClusterQueue " + queue + "'s " + strings.Join(missing, "; ") + ": Kueue keeps such a check inactive (BadParametersRef) and " +
				"admits no job of the queue. Make the config (training_provisioning_request_config), or name one that exists."
	}
	if !admitted {
		return summary, detail + " Once it has its quota, ClusterQueue " + queue + "'s admission checks " + strings.Join(names, ", ") +
			" ask the cluster's autoscaler for its capacity, and Kueue admits it once the capacity is provisioned."
	}
	return summary + ", once its capacity is provisioned", detail + " ClusterQueue " + queue + " gives it its quota, then its admission checks " +
		strings.Join(names, ", ") + " ask the cluster's autoscaler for the job's capacity: Kueue admits it, and its pods are made, once the " +
		"capacity is provisioned; a request that fails is made again as the config's retries say, and when they are spent Kueue deactivates " +
		"the job's workload, which then waits, never admitted, until it is activated again."
}
