package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var testTarget = Target{GVR: schema.GroupVersionResource{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"},
	Kind: "MPIJob", Namespace: "default", Name: "job"}

const testJob = `{"apiVersion":"kubeflow.org/v2beta1","kind":"MPIJob","metadata":{"name":"job","namespace":"default"}}`

// answers serves one scripted answer per request, the last one for every request after.
type answers struct {
	requests atomic.Int32
	script   []func(w http.ResponseWriter)
}

func (a *answers) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := int(a.requests.Add(1))
	a.script[min(n, len(a.script))-1](w)
}

func status(code int, reason metav1.StatusReason, message string, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: message})
	}
}

func ok(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, testJob)
}

// reset closes the connection without an answer, as a load balancer or a dying server can.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

func serve(t *testing.T, script ...func(w http.ResponseWriter)) (*Client, *answers) {
	t.Helper()
	a := &answers{script: script}
	server := httptest.NewServer(a)
	t.Cleanup(server.Close)
	return NewClient(Settings{Host: server.URL}), a
}

func TestTransientErrorsAreRetried(t *testing.T) {
	for name, script := range map[string][]func(http.ResponseWriter){
		"500":              {status(500, metav1.StatusReasonInternalError, "etcdserver: leader changed"), ok},
		"503":              {status(503, metav1.StatusReasonServiceUnavailable, "unavailable"), ok},
		"connection reset": {reset, reset, ok},
	} {
		t.Run(name, func(t *testing.T) {
			client, a := serve(t, script...)
			obj, err := client.Get(context.Background(), testTarget)
			if err != nil || obj == nil {
				t.Fatalf("Get = %v, %v; want the job after a retry", obj, err)
			}
			if got, want := a.requests.Load(), int32(len(script)); got != want {
				t.Errorf("%d requests, want %d", got, want)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	client, a := serve(t, status(429, metav1.StatusReasonTooManyRequests, "slow down", "Retry-After", "1"), ok)
	started := time.Now()
	if _, err := client.Get(context.Background(), testTarget); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(started); elapsed < time.Second {
		t.Errorf("retried after %s, before the Retry-After of 1 s", elapsed)
	}
	if a.requests.Load() != 2 {
		t.Errorf("%d requests, want 2", a.requests.Load())
	}
}

func TestPermanentErrorsAreReportedAtOnce(t *testing.T) {
	for _, c := range []struct {
		code    int
		reason  metav1.StatusReason
		message string
	}{
		{403, metav1.StatusReasonForbidden, `mpijobs.kubeflow.org "job" is forbidden: User "system:serviceaccount:ci:terraform" cannot patch resource "mpijobs" in API group "kubeflow.org" in the namespace "default"`},
		{422, metav1.StatusReasonInvalid, `MPIJob.kubeflow.org "job" is invalid: spec.mpiReplicaSpecs[Worker].replicas: Invalid value: -1`},
	} {
		t.Run(fmt.Sprint(c.code), func(t *testing.T) {
			client, a := serve(t, status(c.code, c.reason, c.message), ok)
			started := time.Now()
			_, err := client.Patch(context.Background(), testTarget, "application/json-patch+json", []byte(`[]`))
			if err == nil || !strings.Contains(err.Error(), c.message) {
				t.Fatalf("Patch error = %v, want the server's message %q", err, c.message)
			}
			if a.requests.Load() != 1 || time.Since(started) > time.Second {
				t.Errorf("%d requests in %s; a permanent error must be reported at once", a.requests.Load(), time.Since(started))
			}
		})
	}
}

// A strict write that the schema refuses for an unknown field is explained: an operator whose
// schema lacks a field the provider writes in every supported release is older than those or
// newer than those tested, not simply older.
func TestAnUnknownFieldRefusalSaysOlderOrNewer(t *testing.T) {
	client, _ := serve(t, status(400, metav1.StatusReasonBadRequest, `MPIJob in version "v2beta1" cannot be handled as a MPIJob: strict decoding error: unknown field "spec.runPolicy.managedBy"`))
	var obj unstructured.Unstructured
	if err := json.Unmarshal([]byte(testJob), &obj.Object); err != nil {
		t.Fatal(err)
	}
	_, err := client.Create(context.Background(), testTarget, &obj, func(*unstructured.Unstructured) error { return nil })
	var unknown *UnknownFieldError
	if !errors.As(err, &unknown) {
		t.Fatalf("got %v; want an UnknownFieldError", err)
	}
	for _, want := range []string{`unknown field "spec.runPolicy.managedBy"`, "mpi-operator on the cluster is either older than v0.4.0", "or newer than the releases it is tested with"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}
