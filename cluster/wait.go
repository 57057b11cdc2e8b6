package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// waitEstablished waits until the named CRDs are established, so that controllers started after
// it find their kinds at once instead of retrying.
func (s *starter) waitEstablished(ctx context.Context, c *clients, names ...string) error {
	return s.waitFor(ctx, "CRDs to be established", 60*time.Second, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			crd, err := c.dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conditions, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			established := false
			for _, cond := range conditions {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					established = true
				}
			}
			if !established {
				return false, fmt.Errorf("%s not established", name)
			}
		}
		return true, nil
	})
}

// waitNodesHealthy waits until every node of the layout is Ready and carries none of the taints
// the node lifecycle controller puts on nodes that are not (node.kubernetes.io/not-ready is on a
// new node until the controller has seen it Ready): a test must never see those.
func (s *starter) waitNodesHealthy(ctx context.Context, c *clients) error {
	nodes, err := Nodes(s.nodesFile())
	if err != nil {
		return err
	}
	return s.waitFor(ctx, "nodes to be Ready and untainted by Kubernetes", 60*time.Second, func(ctx context.Context) (bool, error) {
		list, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		healthy := 0
		var problems []string
		for i := range list.Items {
			if p := NodeProblems(&list.Items[i]); len(p) > 0 {
				problems = append(problems, list.Items[i].Name+": "+strings.Join(p, ", "))
				continue
			}
			healthy++
		}
		return healthy >= len(nodes) && len(problems) == 0, fmt.Errorf("%d of %d nodes healthy; %s", healthy, len(nodes), strings.Join(problems, "; "))
	})
}

func (s *starter) waitControllers(ctx context.Context, c *clients) error {
	if err := s.waitNodesHealthy(ctx, c); err != nil {
		return err
	}
	if s.opts.SkipOperators {
		return nil
	}
	// frameworkcontroller creates its own CRD at start-up.
	if err := s.waitEstablished(ctx, c, "frameworks.frameworkcontroller.microsoft.com"); err != nil {
		return err
	}
	// The service-account controller creating "default" shows the controller-manager works.
	if err := s.waitFor(ctx, "kube-controller-manager", 60*time.Second, func(ctx context.Context) (bool, error) {
		_, err := c.kube.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		return err
	}
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a health probe on loopback
	}}
	if err := s.waitFor(ctx, "kube-scheduler", 60*time.Second, func(ctx context.Context) (bool, error) {
		return httpGetOK(ctx, insecure, "https://127.0.0.1:"+strconv.Itoa(s.c.Ports["kube-scheduler"])+"/healthz")
	}); err != nil {
		return err
	}
	webhookURL := "https://127.0.0.1:" + strconv.Itoa(s.c.Ports["training-operator-webhook"])
	if err := s.waitServing(ctx, "training-operator's webhook server", insecure, webhookURL, 60*time.Second); err != nil {
		return err
	}
	if err := s.registerWebhooks(ctx, c, webhookURL); err != nil {
		return err
	}
	if err := s.registerKueueWebhooks(ctx, c); err != nil {
		return err
	}
	if err := s.publishKueueConfig(ctx, c); err != nil {
		return err
	}
	if err := s.registerTrainerWebhooks(ctx, c); err != nil {
		return err
	}
	if err := s.installDefaultRuntimes(ctx, c); err != nil {
		return err
	}
	// mpi-operator and frameworkcontroller open no port: give them a moment to fail on start-up
	// (a missing CRD, a bad kubeconfig) before calling the cluster ready.
	if err := s.waitFor(ctx, "the operators to settle", 10*time.Second, func(ctx context.Context) (bool, error) {
		select {
		case <-time.After(1500 * time.Millisecond):
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}); err != nil {
		return err
	}
	// Once more, now that the controller-manager has surely seen every node.
	return s.waitNodesHealthy(ctx, c)
}

// waitServing waits until a server answers at baseURL, whatever it answers: a webhook server
// that is listening.
func (s *starter) waitServing(ctx context.Context, what string, client *http.Client, baseURL string, limit time.Duration) error {
	return s.waitFor(ctx, what, limit, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/", nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		return true, nil
	})
}

func httpOK(ctx context.Context, url string) (bool, error) {
	return httpGetOK(ctx, http.DefaultClient, url)
}

func httpGetOK(ctx context.Context, client *http.Client, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return true, nil
}
