package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/kubetrain/terraform-provider-training/internal/shortcuts"
	"github.com/kubetrain/terraform-provider-training/internal/shortcuts/shortcutstest"
)

// The refresh of a job of every kind, richly configured and made on the cluster, is answered
// by the shortcut exactly as the framework answers it (new state, identity, warnings, private
// state): as applied, with an attribute changed in state (the read gives the cluster's back),
// replaced outside Terraform (another UID: dropped, with a warning), gone after it ran (kept,
// with a warning) and gone before it ever started (dropped). Each of these is answered by the
// shortcut, not left to the framework.
func TestAccDirectRead_answersEveryJobsRefreshAsTheFrameworkDoes(t *testing.T) {
	newAPI(t)
	t.Parallel()
	ctx := context.Background()
	suffix := acctest.RandString(5)
	name := func(kind string) string { return "tf-acc-read-" + kind + "-" + suffix }
	var config strings.Builder
	config.WriteString(providerConfig())
	for kind, c := range map[string]string{
		"mpi":     mpiJobConfig(name("mpi"), 2, richAttributes),
		"tf":      tfJobConfig(name("tf"), 2, richAttributes),
		"pytorch": pytorchJobConfig(name("pt"), 2, richAttributes),
		"elastic": elasticJobConfig("tfaccreadel"+suffix, 2, richAttributes),
		"train":   trainJobConfig(name("train"), 1, `  wait_for = "created"`+"\n"),
	} {
		// Each kind's configuration has a data source of the same name; one workspace holds all.
		c = strings.ReplaceAll(c, `data "training_job" "test"`, `data "training_job" "`+kind+`"`)
		config.WriteString(strings.TrimPrefix(c, providerConfig()))
	}
	w := newWorkspace(t)
	w.write(config.String())
	w.run("apply", "-auto-approve", "-input=false")
	t.Cleanup(func() { _, _ = w.try(nil, "destroy", "-auto-approve", "-input=false") })

	raw, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Mode, Type string
			Instances  []struct {
				Attributes json.RawMessage `json:"attributes"`
				Identity   json.RawMessage `json:"identity"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}

	framework := providerserver.NewProtocol6(New("test")())()
	p := New("test")()
	// The shortcuts' server whatever shortcuts.Env says: this test is theirs.
	short := shortcuts.Checked(p, func(_ context.Context, difference string) { mismatch(difference) })
	for _, s := range []tfprotov6.ProviderServer{framework, short} {
		shortcutstest.ConfigureProvider(t, s, map[string]tftypes.Value{"config_path": tftypes.NewValue(tftypes.String, providerKubeconfig())})
	}
	reads := shortcuts.ReadTypes(ctx, p)
	kinds := 0
	for _, r := range state.Resources {
		types, answered := reads[r.Type]
		shape := shortcutstest.Types(types)
		if r.Mode != "managed" || !answered {
			continue
		}
		kinds++
		stored := unmarshalStored(t, shape.State, r.Instances[0].Attributes)
		identity := storedIdentity(t, shape.Identity, r.Instances[0].Identity, stored)
		gone := shortcutstest.WithAttribute(stored, "name", tftypes.NewValue(tftypes.String, "tf-acc-read-gone-"+suffix))
		goneID := shortcutstest.WithAttribute(identity, "name", tftypes.NewValue(tftypes.String, "tf-acc-read-gone-"+suffix))
		null := tftypes.NewValue(tftypes.String, nil)
		variants := []struct {
			what            string
			state, identity tftypes.Value
		}{
			{"as applied", stored, identity},
			{"replaced outside Terraform", shortcutstest.WithAttribute(stored, "uid", tftypes.NewValue(tftypes.String, "00000000-0000-0000-0000-000000000000")), identity},
			{"gone after it ran", shortcutstest.WithAttribute(gone, "status", tftypes.NewValue(tftypes.String, "RUNNING")), goneID},
			{"gone before it started", shortcutstest.WithAttribute(shortcutstest.WithAttribute(shortcutstest.WithAttribute(gone, "status", tftypes.NewValue(tftypes.String, "QUEUED")),
				"uid", null), "start_time", null), goneID},
		}
		if _, ok := shortcutstest.Attributes(stored)["image"]; ok {
			variants = append(variants, struct {
				what            string
				state, identity tftypes.Value
			}{"its image changed in state", shortcutstest.WithAttribute(stored, "image", tftypes.NewValue(tftypes.String, "other/image:1")), identity})
		}
		for _, v := range variants {
			what := r.Type + ", " + v.what
			req := shortcutstest.ReadRequest(t, r.Type, shape, v.state, &v.identity)
			// The two reads are a moment apart, and a job that is still starting may move between
			// them (a pod's phase, the job's status); each server's reads also share a list of the
			// kind for up to 10 s (kube's listLife), taken at its own moment. They are read again,
			// a second apart, until they agree or 25 pairs have not, past the life of both lists (a
			// TrainJob moving from PENDING to RUNNING differed for ten pairs); a difference of the
			// shortcut's own stays in every pair. A live job's duration, counted from the clock, is
			// left out.
			var want, got *tfprotov6.ReadResourceResponse
			for attempt := 0; attempt < 25; attempt++ {
				if attempt > 0 {
					time.Sleep(time.Second)
				}
				w, err := framework.ReadResource(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				g, err := short.ReadResource(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				want, got = withoutDuration(t, shape, w), withoutDuration(t, shape, g)
				if len(shortcutstest.ReadDifferences(t, shape, want, got)) == 0 {
					break
				}
			}
			shortcutstest.CompareReads(t, what, shape, want, got)
			if !shortcuts.AnswersRead(ctx, short, req) {
				t.Errorf("%s: left to the framework", what)
			}
			for _, d := range want.Diagnostics {
				if d.Severity == tfprotov6.DiagnosticSeverityError {
					t.Errorf("%s: %s: %s", what, d.Summary, d.Detail)
				}
			}
		}
	}
	if kinds != 5 {
		t.Fatalf("%d job resources in the state, want 5", kinds)
	}
}

// unmarshalStored is the value of typ that a state file stores as raw.
// withoutDuration is the read with its new state's duration and accelerator-hours null: both
// grow with the time between the reads.
func withoutDuration(t *testing.T, shape shortcutstest.Types, resp *tfprotov6.ReadResourceResponse) *tfprotov6.ReadResourceResponse {
	t.Helper()
	if resp.NewState == nil {
		return resp
	}
	v, err := resp.NewState.Unmarshal(shape.State)
	if err != nil {
		t.Fatal(err)
	}
	if v.IsNull() || !v.IsKnown() {
		return resp
	}
	if _, ok := shortcutstest.Attributes(v)["duration"]; !ok {
		return resp
	}
	v = shortcutstest.WithAttribute(v, "duration", tftypes.NewValue(tftypes.String, nil))
	v = shortcutstest.WithAttribute(v, "accelerator_hours", tftypes.NewValue(tftypes.Number, nil))
	state, err := tfprotov6.NewDynamicValue(shape.State, v)
	if err != nil {
		t.Fatal(err)
	}
	out := *resp
	out.NewState = &state
	return &out
}

// storedIdentity is the identity a state stores, or (Terraform before 1.12, which stores none)
// the one the stored attributes of the same names give, as such a Terraform's refresh is sent.
func storedIdentity(t *testing.T, typ tftypes.Type, raw json.RawMessage, stored tftypes.Value) tftypes.Value {
	t.Helper()
	if len(raw) > 0 && string(raw) != "null" {
		return unmarshalStored(t, typ, raw)
	}
	object := shortcutstest.As[tftypes.Object](t, typ)
	from := shortcutstest.Attributes(stored)
	vals := map[string]tftypes.Value{}
	for name, at := range object.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
		if v, ok := from[name]; ok {
			vals[name] = v
		}
	}
	return tftypes.NewValue(typ, vals)
}

func unmarshalStored(t *testing.T, typ tftypes.Type, raw json.RawMessage) tftypes.Value {
	t.Helper()
	v, err := (&tfprotov6.RawState{JSON: raw}).UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
