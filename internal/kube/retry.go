package kube

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// retryBackoff spaces the attempts of a request that failed transiently: 8 attempts over about
// 20 s, so that a burst of faults on the way to the API server (an overloaded server, a proxy
// or load balancer that resets connections) is ridden out, while a dead server is reported
// within the timeouts of a create or delete.
var retryBackoff = wait.Backoff{Duration: 250 * time.Millisecond, Factor: 2, Jitter: 0.25, Steps: 8, Cap: 4 * time.Second}

// Transient says whether err means the API server, or the way to it, briefly could not answer,
// so that the same request may succeed if sent again. Everything else the server answers (403,
// 404, 409, 422, ...) is its decision about the request and is returned at once.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code == 429 || code >= 500 || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
	}
	if utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) || utilnet.IsConnectionRefused(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// retry runs call until it succeeds, fails for a reason that is not transient, ctx ends or the
// attempts run out. client-go already resends a request whose 429 or 5xx answer carries
// Retry-After, after that delay; retry covers what it leaves alone: 5xx without Retry-After,
// reset connections and cut responses on writes, and Retry-After once client-go's own attempts
// are spent (the delay the server asks for is honoured when it is longer than the backoff's).
//
// A write whose answer was lost may have been carried out, so the callers make a resent write
// harmless: a create that finds its own object adopts it (see Create), a guarded patch that
// fails its test is checked against what it wanted (see the rescale in the provider), and a
// delete that finds nothing succeeds.
func retry(ctx context.Context, what string, call func() error) error {
	backoff := retryBackoff
	for attempt := 1; ; attempt++ {
		err := call()
		if !Transient(err) || backoff.Steps <= 1 || ctx.Err() != nil {
			return err
		}
		delay := backoff.Step()
		if seconds, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(seconds)*time.Second > delay {
			delay = time.Duration(seconds) * time.Second
		}
		tflog.Debug(ctx, "retrying "+what+" after a transient error", map[string]any{"attempt": attempt, "delay": delay.String(), "error": err.Error()})
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return err
		case <-timer.C:
		}
	}
}
