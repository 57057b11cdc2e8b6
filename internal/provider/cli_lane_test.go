package provider

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The CLI lanes (make testacc-terraform-path, make testacc-opentofu) run under another CLI the
// acceptance tests that ask it something: GNUmakefile's CLI_LANE names them. What the other
// tests add, the controllers' behaviour and the provider's own logic, the CLI asks the provider
// in the same calls as these, and the newest Terraform runs them (make testacc).
//
// So that a CLI lane never stops asking a question as its list changes, the provider served to
// the tests records the questions asked of it, and a run with cliLaneEnv set fails unless its
// tests asked each question of every resource type, data source and function (cliQuestions).

// cliLaneEnv set makes the test binary check, at its end, that its tests asked every question.
const cliLaneEnv = "TRAINING_CLI_LANE"

// A question is one kind of call, as the CLI asks it of one resource type, data source or
// function: "training_mpi_job create".
type question struct{ subject, call string }

func (q question) String() string { return q.subject + " " + q.call }

var askedQuestions = struct {
	sync.Mutex
	asked map[question]bool
}{asked: map[question]bool{}}

func ask(subject, call string) {
	askedQuestions.Lock()
	defer askedQuestions.Unlock()
	askedQuestions.asked[question{subject, call}] = true
}

// recording is the tests' provider server, recording each question asked of it.
type recording struct{ tfprotov6.ProviderServer }

func isNull(v *tfprotov6.DynamicValue) bool {
	if v == nil {
		return true
	}
	null, err := v.IsNull()
	return err == nil && null
}

func (s recording) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	switch {
	case isNull(req.PlannedState):
		ask(req.TypeName, "delete")
	case isNull(req.PriorState):
		ask(req.TypeName, "create")
	default:
		ask(req.TypeName, "update")
	}
	return s.ProviderServer.ApplyResourceChange(ctx, req)
}

func (s recording) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if err == nil && resp != nil && len(resp.RequiresReplace) > 0 && !isNull(req.PriorState) {
		ask(req.TypeName, "plan a replacement")
	}
	return resp, err
}

func (s recording) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	ask(req.TypeName, "read")
	return s.ProviderServer.ReadResource(ctx, req)
}

func (s recording) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	ask(req.TypeName, "import")
	return s.ProviderServer.ImportResourceState(ctx, req)
}

func (s recording) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	ask(req.TypeName, "read")
	return s.ProviderServer.ReadDataSource(ctx, req)
}

func (s recording) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	ask(req.TargetTypeName, "move")
	return s.ProviderServer.MoveResourceState(ctx, req)
}

func (s recording) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	ask(req.Name, "call")
	return s.ProviderServer.CallFunction(ctx, req)
}

// cliQuestions are the questions a CLI lane asks: every resource type created, updated in place,
// planned for replacement, read, imported and deleted, every data source read, every function
// called; but an update of the resource types whose every change replaces them; and the move of
// a state into each resource type that takes one from another type (a moved block).
func cliQuestions(schema *tfprotov6.GetProviderSchemaResponse) []question {
	replacedByEveryChange := []string{"training_node_taint", "training_topology"}
	qs := []question{{"training_train_job", "move"}}
	for name := range schema.ResourceSchemas {
		for _, call := range []string{"create", "update", "plan a replacement", "read", "import", "delete"} {
			if call != "update" || !slices.Contains(replacedByEveryChange, name) {
				qs = append(qs, question{name, call})
			}
		}
	}
	for name := range schema.DataSourceSchemas {
		qs = append(qs, question{name, "read"})
	}
	for name := range schema.Functions {
		qs = append(qs, question{name, "call"})
	}
	return qs
}

// unaskedCLIQuestions are the questions of cliQuestions that the run's tests did not ask.
func unaskedCLIQuestions() ([]string, error) {
	schema, err := testServer().GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, err
	}
	askedQuestions.Lock()
	defer askedQuestions.Unlock()
	var missing []string
	for _, q := range cliQuestions(schema) {
		if !askedQuestions.asked[q] {
			missing = append(missing, q.String())
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// failOnUnaskedCLIQuestions is the test binary's exit code once a CLI lane's unasked questions
// are reported: 1 if there were any. Outside a CLI lane it changes nothing.
func failOnUnaskedCLIQuestions(code int) int {
	if os.Getenv(cliLaneEnv) == "" || os.Getenv("TF_ACC") == "" {
		return code
	}
	missing, err := unaskedCLIQuestions()
	if err != nil {
		fmt.Fprintln(os.Stderr, "the CLI lane's questions:", err)
		return 1
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: this CLI lane's tests (GNUmakefile's CLI_LANE) asked the CLI nothing of:\n  %s\n"+
			"add to CLI_LANE a test that does, or a test of its own\n", strings.Join(missing, "\n  "))
		return 1
	}
	return code
}
