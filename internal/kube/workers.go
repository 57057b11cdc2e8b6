package kube

import (
	"context"

	"github.com/kubetrain/terraform-provider-training/internal/kueue"
)

// A MultiKueue manager cluster's Kueue dispatches a queued job to a worker cluster, where a copy
// of it runs with the pods. A client that is given the worker clusters (SetWorkers) reads and
// waits for a dispatched job's pods there.

// SetWorkers gives the client the MultiKueue worker clusters a queued job may be dispatched to,
// by the name of their MultiKueueCluster: a dispatched job's pods, and the wait for it to run,
// are read from its copy there. Set once, before the first call.
func (c *Client) SetWorkers(workers map[string]*Client) { c.workers = workers }

// Worker is the client of the worker cluster that name's MultiKueueCluster connects to, or nil
// when the provider was not given it.
func (c *Client) Worker(name string) *Client { return c.workers[name] }

// WorkerCopy is the target as its copy in a worker cluster (see Client.Worker): same kind,
// namespace and name, but its own UID (Kueue creates it anew there).
func WorkerCopy(t Target) Target {
	t.UID = ""
	return t
}

// DispatchedTo is the worker cluster Kueue dispatched the job object with the target's UID to,
// read from its Workload here (one LIST), or "" when it was not dispatched or the client knows
// no worker cluster (then nothing is read).
func (c *Client) DispatchedTo(ctx context.Context, t Target) (string, error) {
	if len(c.workers) == 0 || t.UID == "" {
		return "", nil
	}
	wl, err := c.workloadOf(ctx, t.Namespace, t.Name, t.UID)
	if err != nil || wl == nil {
		return "", err
	}
	return kueue.ReadWorkload(wl).Cluster, nil
}
