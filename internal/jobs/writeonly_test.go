package jobs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every kind but the TrainJob gives every container that takes the job's variables its write-only
// Secret whole; a TrainJob's trainer (Trainer's API has no envFrom) takes each variable by name
// from its key of the Secret. Each records the version on the job object and reads both back;
// the Secret is not read back as one of the user's whole Secrets, nor a TrainJob's references as
// its Secret variables.
func TestTheWriteOnlyVariablesReadBackAsTheirVersion(t *testing.T) {
	for _, k := range Kinds() {
		ex := kindExamples[k]
		base := ex.spec(false)
		plain, _, err := base.Build()
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		w := &WriteOnlyEnv{Secret: WriteOnlyEnvSecret(plain.GetName()), Version: 7}
		if k == Train {
			w.Names = []string{"HF_TOKEN", "WANDB_API_KEY"}
		}
		spec := withField(t, base, "Pod.WriteOnlyEnv", w)
		obj, _, err := spec.Build()
		if err != nil {
			t.Fatalf("kind %s: %v", k.Name, err)
		}
		if got := obj.GetAnnotations()[WriteOnlyEnvAnnotation]; got != "7" {
			t.Errorf("kind %s: the job object records version %q, want 7", k.Name, got)
		}
		raw, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		// Every container that takes the job's variables takes the Secret (a companion, the
		// elastic job's etcd, takes neither).
		n, want := strings.Count(string(raw), `"secretRef":{"name":"`+w.Secret+`"}`), strings.Count(string(raw), `"name":"`+sensitiveName+`"`)
		if k == Train {
			// One reference to the Secret per name, each its own key.
			n, want = strings.Count(string(raw), `"name":"`+w.Secret+`"`), len(w.Names)
			for _, name := range w.Names {
				if !strings.Contains(string(raw), `"secretKeyRef":{"key":"`+name+`","name":"`+w.Secret+`"}`) {
					t.Errorf("train: no variable takes key %s of the Secret:\n%s", name, raw)
				}
			}
		}
		if n == 0 || n != want {
			t.Errorf("kind %s: %d containers take the Secret, want the %d that take the job's variables:\n%s", k.Name, n, want, raw)
		}
		read, err := ex.read(obj)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w, read.Pods().WriteOnlyEnv); diff != "" || len(read.Pods().EnvFromSecrets) != len(base.Pods().EnvFromSecrets) ||
			len(read.Pods().SecretEnv) != len(base.Pods().SecretEnv) {
			t.Errorf("kind %s: read back otherwise (-built +read):\n%s\nwhole Secrets %v, Secret variables %v", k.Name, diff,
				read.Pods().EnvFromSecrets, read.Pods().SecretEnv)
		}
	}
}
