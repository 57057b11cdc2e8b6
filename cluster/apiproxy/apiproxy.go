// Package apiproxy is a reverse proxy in front of a cluster's API server, for tests and
// benchmarks: it counts the requests a client makes, can fault a share of them the ways an API
// server or the network between fails, and can hold a chosen request while a test acts (kills
// the client, changes an object) before letting it through.
//
// The proxy serves plain HTTP on loopback and reaches the API server with the credentials of
// the kubeconfig it is given, so a client of the proxy needs none and acts with that identity.
package apiproxy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Fault is one way a request can fail.
type Fault string

// The faults the proxy injects. A watch is faulted by any of them, or has its stream dropped
// after a moment; the others never get DropWatch.
const (
	TooManyRequests Fault = "429 with Retry-After"
	InternalError   Fault = "500"
	Unavailable     Fault = "503"
	ResetBefore     Fault = "connection reset before the API server saw the request"
	ResetAfter      Fault = "connection reset after the API server carried the request out"
	Delay           Fault = "delayed answer"
	DropWatch       Fault = "watch stream dropped"
)

var requestFaults = []Fault{TooManyRequests, InternalError, Unavailable, ResetBefore, ResetAfter, Delay}

// Options set what the proxy does besides forwarding.
type Options struct {
	// FaultRate is the share of requests, 0 to 1, that get a fault.
	FaultRate float64
	// Seed makes the sequence of random faults repeatable (for one order of requests).
	Seed uint64
	// Cover injects every kind of fault and faults every verb for certain, not by chance: the
	// first request of each verb, and every request after it while a kind of fault that the
	// request can take has not been injected yet, gets the next such kind (in the order of
	// coverOrder); then faults come at FaultRate.
	Cover bool
	// Hide are group versions ("kubeflow.org/v2beta1") the proxy answers as a cluster that does
	// not serve them: 404 for them and what is under them, and their group listed without them.
	Hide []string
}

// coverOrder is the order Cover injects the kinds of fault in: a write whose answer is lost
// after it landed first, the hardest case for a client.
var coverOrder = []Fault{ResetAfter, ResetBefore, TooManyRequests, InternalError, Unavailable, Delay, DropWatch}

// Proxy is a running proxy.
type Proxy struct {
	// URL is where the proxy listens, http://127.0.0.1:PORT.
	URL string

	opts    Options
	server  *http.Server
	forward *httputil.ReverseProxy

	mu     sync.Mutex
	random *rand.Rand
	counts map[string]int64 // by verb: GET, LIST, WATCH, POST, PUT, PATCH, DELETE
	faults map[Fault]int64
	// faultedVerbs counts the faulted requests by verb.
	faultedVerbs map[string]int64
	hook         func(*http.Request) bool
	// coveredVerbs are the verbs Cover has faulted.
	coveredVerbs map[string]bool

	requests atomic.Int64
	// watchPaths counts WATCH requests by path (resource and namespace, without the query).
	watchPaths map[string]int64
	// reads are the LIST and WATCH requests received, with their selectors.
	reads []Read
	// openWatches is how many of the watches opened since the counts were reset (in epoch) are
	// open now, peakWatches the most of them open at once.
	epoch                    int64
	openWatches, peakWatches int64
}

// Start starts a proxy to the API server of kubeconfig, acting with its credentials.
func Start(kubeconfig string, opts Options) (*Proxy, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		URL:          "http://" + l.Addr().String(),
		opts:         opts,
		random:       rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		counts:       map[string]int64{},
		faults:       map[Fault]int64{},
		faultedVerbs: map[string]int64{},
		coveredVerbs: map[string]bool{},
		watchPaths:   map[string]int64{},
		forward:      httputil.NewSingleHostReverseProxy(target),
	}
	p.forward.Transport = transport
	p.forward.FlushInterval = -1 // watches stream
	p.forward.ErrorLog = nil
	p.server = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(p.serve)}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// Close stops the proxy, cutting open watches.
func (p *Proxy) Close() error { return p.server.Close() }

// Kubeconfig is a kubeconfig for clients of the proxy.
func (p *Proxy) Kubeconfig() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: %q}}]
users: [{name: proxy, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: proxy}}]
current-context: proxy
`, p.URL)
}

// WriteKubeconfig writes Kubeconfig to path.
func (p *Proxy) WriteKubeconfig(path string) error {
	return os.WriteFile(path, []byte(p.Kubeconfig()), 0o600)
}

// SetFaultRate changes the share of faulted requests from now on.
func (p *Proxy) SetFaultRate(rate float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opts.FaultRate = rate
}

// SetHide changes the group versions the proxy hides (Options.Hide) from now on: a cluster on
// which an operator is installed, or removed, while a client works.
func (p *Proxy) SetHide(groupVersions ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opts.Hide = groupVersions
}

// SetHook has hook called with every request before it is forwarded (nil: none). The request
// waits while hook runs; it is forwarded only if hook returns true and its client is still there,
// else its connection is reset.
func (p *Proxy) SetHook(hook func(*http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hook = hook
}

// Verb names a request as the API server's audit log does.
func Verb(r *http.Request) string {
	if r.Method != http.MethodGet {
		return r.Method
	}
	if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
		return "WATCH"
	}
	// A collection path has an even number of segments after the group version: /api/v1/pods,
	// /apis/g/v/namespaces/ns/kind; a named object an odd one.
	segments := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	prefix := 2 // api, v1
	if segments[0] == "apis" {
		prefix = 3
	}
	if (len(segments)-prefix)%2 == 1 {
		return "LIST"
	}
	return "GET"
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	verb := Verb(r)
	p.mu.Lock()
	p.counts[verb]++
	if verb == "WATCH" {
		p.watchPaths[r.URL.Path]++
	}
	if verb == "WATCH" || verb == "LIST" {
		q := r.URL.Query()
		p.reads = append(p.reads, Read{Verb: verb, Path: r.URL.Path, LabelSelector: q.Get("labelSelector"), FieldSelector: q.Get("fieldSelector")})
	}
	hook, hide := p.hook, p.opts.Hide
	kinds := requestFaults
	if verb == "WATCH" {
		kinds = append([]Fault{DropWatch}, requestFaults[:len(requestFaults)-2]...)
	}
	var fault Fault
	if p.opts.Cover {
		fault = p.coverFault(verb, kinds)
	}
	if fault == "" && p.opts.FaultRate > 0 && p.random.Float64() < p.opts.FaultRate {
		fault = kinds[p.random.IntN(len(kinds))]
	}
	if fault != "" {
		p.faults[fault]++
		p.faultedVerbs[verb]++
	}
	delay := time.Duration(200+p.random.IntN(1300)) * time.Millisecond
	p.mu.Unlock()

	if hook != nil && (!hook(r) || r.Context().Err() != nil) {
		resetConnection(w)
		return
	}
	if hidden(hide, r.URL.Path) {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource", "")
		return
	}
	if hidingIn(hide, r.URL.Path) {
		p.serveGroupWithoutHidden(w, r, hide)
		return
	}
	if verb == "WATCH" {
		defer p.watching()()
	}
	switch fault {
	case TooManyRequests:
		writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "injected fault: too many requests", "1")
	case InternalError:
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "injected fault: etcdserver: request timed out", "")
	case Unavailable:
		writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "injected fault: the server is unavailable", "")
	case ResetBefore:
		resetConnection(w)
	case ResetAfter:
		// The API server carries the request out; its answer is thrown away.
		p.forward.ServeHTTP(httptest.NewRecorder(), r)
		resetConnection(w)
	case Delay:
		time.Sleep(delay)
		p.forward.ServeHTTP(w, r)
	case DropWatch:
		ctx, cancel := context.WithTimeout(r.Context(), delay)
		defer cancel()
		defer func() {
			// The reverse proxy aborts the response when its upstream stream ends early; that
			// abort is the fault, not an error of the proxy.
			if v := recover(); v != nil && !errors.Is(asError(v), http.ErrAbortHandler) {
				panic(v)
			}
			resetConnection(w)
		}()
		p.forward.ServeHTTP(w, r.WithContext(ctx))
	default:
		p.forward.ServeHTTP(w, r)
	}
}

// coverFault is the fault Cover gives a request of verb that can take kinds, or "". Called
// with p.mu held.
func (p *Proxy) coverFault(verb string, kinds []Fault) Fault {
	for _, f := range coverOrder {
		if p.faults[f] == 0 && slices.Contains(kinds, f) {
			p.coveredVerbs[verb] = true
			return f
		}
	}
	if !p.coveredVerbs[verb] {
		p.coveredVerbs[verb] = true
		return kinds[p.random.IntN(len(kinds))]
	}
	return ""
}

func asError(v any) error {
	if err, ok := v.(error); ok {
		return err
	}
	return fmt.Errorf("%v", v)
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":%q,"code":%d}`,
		message, reason, code)
}

// resetConnection closes the client's connection with a TCP reset, without an answer.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return // already answered in part: returning ends the response
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}
