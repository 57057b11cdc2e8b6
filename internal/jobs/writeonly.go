package jobs

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// WriteOnlyEnv is the variables a job's pods are given write-only: their values are in a Secret
// the job owns, which the provider writes at apply and never reads back, so they are in neither
// this spec, the plan nor the state. The pods take every key of the Secret (envFrom); the
// version, whose change has the provider write the Secret again, is recorded on the job object
// (WriteOnlyEnvAnnotation) so that an import reads it back.
type WriteOnlyEnv struct {
	Secret  string
	Version int64
	// Names are the variables' names, for a TrainJob: Trainer's API has no envFrom, so its
	// trainer takes each variable from its key of the Secret (secretKeyRef). The other kinds take
	// the Secret whole and need no names.
	Names []string
}

// refs are the trainer's variables of a TrainJob's write-only Secret, one per name, in order.
func (w *WriteOnlyEnv) refs() []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, name := range slices.Sorted(slices.Values(w.Names)) {
		out = append(out, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: w.Secret}, Key: name}}})
	}
	return out
}

// readWriteOnlyRefs takes a TrainJob's variables of its write-only Secret out of its trainer's
// Secret variables, when the job object records a version of them.
func readWriteOnlyRefs(o *PodOptions, job string, annotations map[string]string) {
	w := recordedWriteOnlyEnv(job, annotations)
	if w == nil {
		return
	}
	for name, ref := range o.SecretEnv {
		if ref.Secret == w.Secret && ref.Key == name {
			w.Names = append(w.Names, name)
			delete(o.SecretEnv, name)
		}
	}
	slices.Sort(w.Names)
	if len(o.SecretEnv) == 0 {
		o.SecretEnv = nil
	}
	o.WriteOnlyEnv = w
}

const (
	// WriteOnlyEnvAnnotation records, on the job object, the version of its write-only variables.
	WriteOnlyEnvAnnotation = "training.kubetrain.io/write-only-env-version"
	// WriteOnlyEnvLabel names, on the Secret that holds a job's write-only variables, the job;
	// the provider writes or deletes only a Secret that carries it.
	WriteOnlyEnvLabel = "training.kubetrain.io/write-only-env-of"
)

// WriteOnlyEnvSecret is the name of the Secret that holds the write-only variables of job.
func WriteOnlyEnvSecret(job string) string { return job + "-write-only-env" }

// readWriteOnlyEnv takes the Secret of the job's write-only variables out of the pods' whole
// Secrets, when the job object records a version of them.
func readWriteOnlyEnv(o *PodOptions, job string, annotations map[string]string) {
	w := recordedWriteOnlyEnv(job, annotations)
	if w == nil || !slices.Contains(o.EnvFromSecrets, w.Secret) {
		return
	}
	secret := w.Secret
	o.WriteOnlyEnv = w
	o.EnvFromSecrets = slices.DeleteFunc(slices.Clone(o.EnvFromSecrets), func(s string) bool { return s == secret })
	if len(o.EnvFromSecrets) == 0 {
		o.EnvFromSecrets = nil
	}
}

// recordedWriteOnlyEnv is the Secret of the job's write-only variables with the version its
// object records; nil when it records none.
func recordedWriteOnlyEnv(job string, annotations map[string]string) *WriteOnlyEnv {
	version, err := strconv.ParseInt(annotations[WriteOnlyEnvAnnotation], 10, 64)
	if err != nil {
		return nil
	}
	return &WriteOnlyEnv{Secret: WriteOnlyEnvSecret(job), Version: version}
}
