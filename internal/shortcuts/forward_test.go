package shortcuts

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	training "github.com/kubetrain/terraform-provider-training/internal/provider"
	"github.com/kubetrain/terraform-provider-training/internal/shortcuts/shortcutstest"
)

// The plugin framework keeps the cancel function of every request's context until Terraform
// stops the provider, and with it the context and every value in it (the request's loggers,
// some kilobytes each): a plan of 1,000 jobs to create held 16 MB more at its end than at its
// start, and an apply of 1,000 jobs twice that, which the garbage collector's target doubles.
// The provider's server hands the framework a context that lets go of the request's once it is
// answered (see detachable). Each request below is one Terraform makes for every resource or
// data source of a configuration, and goes to the framework (none is one a shortcut answers).
func TestNoRequestHandedToTheFrameworkIsHeldOnceAnswered(t *testing.T) {
	s := newServer(training.New("test")())
	shortcutstest.ConfigureProvider(t, s, map[string]tftypes.Value{"host": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)})
	ctx := context.Background()
	s.init(ctx)
	const job = "training_mpi_job"
	shape := s.reads[job]
	state := stored(shortcutstest.Sample(shape.state, 0), shape.writeOnly)
	prior, err := tfprotov6.NewDynamicValue(shape.state, state)
	if err != nil {
		t.Fatal(err)
	}
	null, err := tfprotov6.NewDynamicValue(shape.state, tftypes.NewValue(shape.state, nil))
	if err != nil {
		t.Fatal(err)
	}
	withPrivate := shortcutstest.ReadRequest(t, job, typesOf(shape), state, nil)
	withPrivate.Private = []byte(`{"a":"b"}`) // a read after an import: the framework's

	requests := map[string]func(context.Context) error{
		"PlanResourceChange (a destroy)": func(ctx context.Context) error {
			_, err := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: job, PriorState: &prior, ProposedNewState: &null, Config: &null})
			return err
		},
		"ApplyResourceChange (a destroy)": func(ctx context.Context) error {
			_, err := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: job, PriorState: &prior, PlannedState: &null, Config: &null})
			return err
		},
		"ReadResource (with private state)": func(ctx context.Context) error {
			_, err := s.ReadResource(ctx, withPrivate)
			return err
		},
		"ValidateResourceConfig (a resource without a shortcut)": func(ctx context.Context) error {
			_, err := s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "training_node_taint"})
			return err
		},
		"UpgradeResourceState (an older version)": func(ctx context.Context) error {
			_, err := s.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: job, Version: shape.schema.Version - 1,
				RawState: &tfprotov6.RawState{JSON: []byte("{}")}})
			return err
		},
		"ImportResourceState": func(ctx context.Context) error {
			_, err := s.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: job, ID: "default/a"})
			return err
		},
		"ValidateDataResourceConfig": func(ctx context.Context) error {
			_, err := s.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: "training_job"})
			return err
		},
		"ReadDataSource": func(ctx context.Context) error {
			_, err := s.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: "training_nodes"})
			return err
		},
	}
	for name, request := range requests {
		if heldAfter(t, request) {
			t.Errorf("%s: the request's context is still held once the request is answered", name)
		}
	}
}

// markerKey holds a value in a request's context whose collection says the context was let go.
type markerKey struct{}

// heldAfter says whether anything still holds the context of the request once it is answered.
func heldAfter(t *testing.T, request func(context.Context) error) bool {
	t.Helper()
	held := answered(t, request)
	runtime.GC()
	return held.Value() != nil
}

// answered makes the request on a context that holds a marker, and returns a weak pointer to the
// marker once the request is answered.
func answered(t *testing.T, request func(context.Context) error) weak.Pointer[[64]byte] {
	t.Helper()
	marker := new([64]byte)
	if err := request(context.WithValue(context.Background(), markerKey{}, marker)); err != nil {
		t.Fatal(err)
	}
	return weak.Make(marker)
}
