package shortcuts

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The plugin framework's server (proto6server.Server.registerContext, v1.19.0) wraps each
// request's context in a cancelable one and keeps its cancel function until Terraform stops the
// provider, so that StopProvider can cancel what runs. A cancel function holds its context, and
// that context its parent, the request's, with the loggers terraform-plugin-go put in it (some
// kilobytes each): a provider process held every request it ever served. A plan of 1,000 jobs
// to create ended holding 16 MB more than it began with, an apply of 1,000 jobs twice that, and
// the garbage collector lets the heap grow to twice what is held.
//
// forward hands the framework a detachable in place of the request's context: the request's
// values, deadline and cancellation while the framework answers, and none of its values once it
// has. What the framework keeps is then a few hundred bytes a request.

// forward answers req with the framework's call, on a context that lets go of ctx once answered.
func forward[Req, Resp any](ctx context.Context, req Req, call func(context.Context, Req) (Resp, error)) (Resp, error) {
	d := detach(ctx)
	defer d.release()
	return call(d, req)
}

// detachable is a context that is its parent's until released, and then keeps only its parent's
// cancellation channel (cancellation is still seen, by what the framework keeps) and deadline.
type detachable struct {
	parent   atomic.Pointer[context.Context]
	done     <-chan struct{}
	deadline time.Time
	bounded  bool
	// err is the parent's error when it was released, if it was done by then.
	err atomic.Pointer[error]
}

func detach(parent context.Context) *detachable {
	d := &detachable{done: parent.Done()}
	d.deadline, d.bounded = parent.Deadline()
	d.parent.Store(&parent)
	return d
}

// release lets go of the parent.
func (d *detachable) release() {
	if p := d.parent.Swap(nil); p != nil {
		if err := (*p).Err(); err != nil {
			d.err.Store(&err)
		}
	}
}

func (d *detachable) Deadline() (time.Time, bool) { return d.deadline, d.bounded }

func (d *detachable) Done() <-chan struct{} { return d.done }

func (d *detachable) Err() error {
	if p := d.parent.Load(); p != nil {
		return (*p).Err()
	}
	if err := d.err.Load(); err != nil {
		return *err
	}
	select {
	case <-d.done:
		return context.Canceled // done after the request was answered: the request's end
	default:
		return nil
	}
}

func (d *detachable) Value(key any) any {
	if p := d.parent.Load(); p != nil {
		return (*p).Value(key)
	}
	return nil
}

// The requests Terraform makes for each resource and data source of a configuration, that no
// shortcut answers, go to the framework through forward (the four of unchanged_plan.go too);
// those made once per provider process go to the framework directly.

func (s *server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return forward(ctx, req, s.frameworkServer.ApplyResourceChange)
}

func (s *server) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return forward(ctx, req, s.frameworkServer.ImportResourceState)
}

func (s *server) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return forward(ctx, req, s.frameworkServer.MoveResourceState)
}

func (s *server) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return forward(ctx, req, s.frameworkServer.UpgradeResourceIdentity)
}

func (s *server) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return forward(ctx, req, s.frameworkServer.ValidateDataResourceConfig)
}

func (s *server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return forward(ctx, req, s.frameworkServer.ReadDataSource)
}

func (s *server) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return forward(ctx, req, s.frameworkServer.CallFunction)
}
