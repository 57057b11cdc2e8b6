package jobs

import (
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Checkpoint is where a job's program saves its training and how long a save takes at most. It is
// declared, not taken: the program saves on its own (periodically, or when it is sent SIGTERM);
// the provider gives the pods the time to save whenever they are stopped (a replacement, a
// destroy, a Kueue preemption: the pods' termination grace), makes the stop signal reach the
// program where the launcher would not pass it on in time (Open MPI's daemons), records the
// declaration on the job object, and tells in the plan of a replacement whether the new job
// finds the old one's checkpoint.
type Checkpoint struct {
	// Path is where the program saves: a path in its containers, on a volume that outlives the
	// pods (CheckpointStoreOf), or a URI of object storage (CheckpointURI).
	Path string `json:"path"`
	// SaveSeconds is the most a save takes, from the stop signal to the program's exit.
	SaveSeconds int64 `json:"saveSeconds"`
}

// CheckpointAnnotation records a job's Checkpoint on its object (JSON), for a refresh and an
// import.
const CheckpointAnnotation = "training.kubetrain.io/checkpoint"

// stopMargin is what a stop takes beside the save: the signal passing from the kubelet through a
// launcher to the program, and the program's exit after it saved.
const stopMargin = 10

// OpenMPISigkillTimeout is Open MPI's (ORTE's) odls_base_sigkill_timeout as an environment
// variable: how long each daemon waits, when mpirun is told to stop, before it sends its ranks
// SIGTERM, and again before it sends them SIGKILL (default 1 s). An MPIJob with a Checkpoint sets
// it on the launcher, whose mpirun passes it to the daemons it starts.
const OpenMPISigkillTimeout = "OMPI_MCA_odls_base_sigkill_timeout"

// CheckpointGrace is the termination grace a job's pods need to stop with a save of that many
// seconds. Under Open MPI (openMPI), mpirun's daemons wait the sigkill timeout twice (before the
// ranks' SIGTERM and before their SIGKILL), so the pods need twice the save; otherwise the program
// is sent SIGTERM at once and needs the save. Both get stopMargin beside.
func CheckpointGrace(saveSeconds int64, openMPI bool) int64 {
	if openMPI {
		return 2*saveSeconds + stopMargin
	}
	return saveSeconds + stopMargin
}

// ParseCheckpointPath checks the path a checkpoint is saved to: absolute and clean, or a URI of
// object storage.
func ParseCheckpointPath(p string) error {
	if CheckpointURI(p) {
		return nil
	}
	if !path.IsAbs(p) || path.Clean(p) != p {
		return fmt.Errorf("checkpoint path %q must be an absolute, clean path in the containers, or a URI of object storage (s3://BUCKET/PATH)", p)
	}
	return nil
}

// The variables a job with a Checkpoint gives every container of the roles that train (and
// mpirun passes on to its ranks), so that the program reads where to save and how long it has
// rather than a flag kept in step with the configuration by hand.
const (
	// CheckpointPathEnv is the checkpoint's path or URI.
	CheckpointPathEnv = "TRAINING_CHECKPOINT_PATH"
	// CheckpointSaveSecondsEnv is the most a save takes, in seconds.
	CheckpointSaveSecondsEnv = "TRAINING_CHECKPOINT_SAVE_SECONDS"
)

// CheckpointEnv are the variables of c, in that order; none for nil.
func CheckpointEnv(c *Checkpoint) []corev1.EnvVar {
	if c == nil {
		return nil
	}
	return []corev1.EnvVar{{Name: CheckpointPathEnv, Value: c.Path}, {Name: CheckpointSaveSecondsEnv, Value: strconv.FormatInt(c.SaveSeconds, 10)}}
}

// withoutCheckpointEnv drops from a read job's environment the variables its checkpoint set
// (CheckpointEnv): they are the checkpoint's, not the job's env.
func withoutCheckpointEnv(o *PodOptions) {
	for _, e := range CheckpointEnv(o.Checkpoint) {
		if v, ok := o.Env[e.Name]; ok && v == e.Value {
			delete(o.Env, e.Name)
		}
	}
	if len(o.Env) == 0 {
		o.Env = nil
	}
}

// CheckpointVolume is the data volume the path is saved on: the one whose mount path holds it
// (the deepest, where mounts nest); ok is false when none does, and the checkpoint would be
// lost with the pods.
func CheckpointVolume(p string, volumes []DataVolume) (v DataVolume, ok bool) {
	for _, d := range volumes {
		if under(p, d.MountPath) && len(d.MountPath) >= len(v.MountPath) {
			v, ok = d, true
		}
	}
	return v, ok
}

// SameCheckpoint says whether a job with the checkpoint next, saved on will, finds what one with
// prev saved on was: the same path, on the same volume mounted at the same place (or the same
// URI). When it does not, why says what differs.
func SameCheckpoint(prev Checkpoint, was CheckpointStore, next *Checkpoint, will CheckpointStore) (why string, same bool) {
	switch {
	case next == nil:
		return "the new job declares no checkpoint", false
	case next.Path != prev.Path:
		return fmt.Sprintf("the new job saves to %s instead of %s", next.Path, prev.Path), false
	case was.Keeping == Lost:
		return fmt.Sprintf("%s was on %s", prev.Path, was.Volume), false
	case was.Volume != will.Volume || was.MountPath != will.MountPath:
		if will.Keeping == Lost {
			return fmt.Sprintf("the new job would save it on %s", will.Volume), false
		}
		return fmt.Sprintf("the new job does not mount %s", was), false
	}
	return "", true
}

// CheckpointSignalProblem says why a launcher command would not pass a stop signal on to the
// program that saves, or "": a shell that runs it (`sh -c "..."`) is the container's first
// process and does not forward SIGTERM unless it replaces itself with the program (`exec`).
func CheckpointSignalProblem(command []string) string {
	if len(command) < 2 {
		return ""
	}
	switch filepath.Base(command[0]) {
	case "sh", "bash", "dash", "ash", "zsh":
	default:
		return ""
	}
	script := command[len(command)-1]
	if strings.Contains(script, "exec ") {
		return ""
	}
	return fmt.Sprintf("%s runs the program under a shell, which does not pass SIGTERM on: start the script's last command with `exec` (exec mpirun ...), "+
		"or the program is killed at the end of its grace without a save", command[0])
}

// checkpointAnnotation is the annotation recording c; "" for none.
func checkpointAnnotation(c *Checkpoint) string {
	if c == nil {
		return ""
	}
	raw, _ := json.Marshal(c) // a struct of a string and an int always marshals
	return string(raw)
}

// checkpointOf reads back the Checkpoint an object's annotations record; nil when none does (or
// one that cannot be read, which is not this provider's).
func checkpointOf(annotations map[string]string) *Checkpoint {
	v, ok := annotations[CheckpointAnnotation]
	if !ok {
		return nil
	}
	var c Checkpoint
	if err := json.Unmarshal([]byte(v), &c); err != nil || c.Path == "" || c.SaveSeconds <= 0 {
		return nil
	}
	return &c
}

// stopRanks is the preStop hook of an MPI launcher's and workers' containers with a checkpoint.
// Open MPI's ranks run under a daemon on each node (orted under Open MPI 4's ORTE, prted under
// Open MPI 5's PRRTE; the launcher's own ranks, where it runs some, under mpirun or prterun) that
// a worker's sshd started for the launcher's mpirun. When the job stops, every pod is sent
// SIGTERM at once: the workers' sshd would end their daemons and ranks, and mpirun would have
// the daemons kill the ranks, ORTE after its sigkill timeout, PRRTE after a quarter of a second,
// before any rank saved. The kubelet runs this hook before it signals the container, within the
// pods' grace: it sends SIGTERM to every process a daemon or mpirun started (not their ssh
// clients, which carry the launcher's link to the workers' daemons, nor a daemon itself: prted
// runs as the child of the prted that sshd started), so that each rank saves at
// once, and holds the container until no daemon or mpirun is left, which is when every rank
// has ended. The daemon is found by name at run time, so one hook serves both versions. MPICH
// and Intel MPI (Hydra's hydra_pmi_proxy) are not among the names: their ranks end with the pod.
var stopRanks = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
	Command: []string{"/bin/sh", "-c", stopRanksScript},
}}}

// mpiProcesses are the processes under which Open MPI's ranks run: its daemons and its launchers.
var mpiProcesses = []string{"orted", "prted", "mpirun", "mpiexec", "orterun", "prterun"}

// stopRanksScript is stopRanks' script, in POSIX sh with grep beside its builtins.
var stopRanksScript = `launchers="` + strings.Join(mpiProcesses, " ") + `"
launcher() { for n in $launchers; do [ "$1" = "$n" ] && return 0; done; return 1; }
for d in /proc/[0-9]*; do
  read -r c 2>/dev/null <"$d/comm" || continue
  { [ "$c" = ssh ] || launcher "$c"; } && continue
  pp=
  while read -r k v; do [ "$k" = PPid: ] && { pp=$v; break; }; done 2>/dev/null <"$d/status"
  read -r pc 2>/dev/null <"/proc/$pp/comm" && launcher "$pc" && kill -TERM "${d#/proc/}" 2>/dev/null
done
while grep -qsxE '` + strings.Join(mpiProcesses, "|") + `' /proc/[0-9]*/comm; do sleep 1; done`

// withOpenMPIStop makes an MPI launcher's and workers' pods stop so that the ranks can save c:
// both stop their ranks first (stopRanks), and the launcher's mpirun gets ORTE's sigkill timeout
// (unless the job sets it), which covers a launcher stopped before the workers' hooks ran.
func withOpenMPIStop(c *Checkpoint, env map[string]string, launcher, worker *corev1.PodTemplateSpec) {
	if c == nil {
		return
	}
	if _, own := env[OpenMPISigkillTimeout]; !own {
		l := &launcher.Spec.Containers[0]
		l.Env = append(l.Env, corev1.EnvVar{Name: OpenMPISigkillTimeout, Value: strconv.FormatInt(c.SaveSeconds, 10)})
	}
	launcher.Spec.Containers[0].Lifecycle = stopRanks
	worker.Spec.Containers[0].Lifecycle = stopRanks
}

// TrainJobGrace is the least termination grace the pods of a TrainJob with checkpoint c (nil:
// none) may have on runtime r. The TrainJob's runtime patch replaces the grace of every pod the
// runtime makes, so it is what c's save needs under the runtime's launcher (twice the save under
// mpirun: CheckpointGrace), and never less than the grace the runtime gives its pods or its own
// checkpoint's save needs; zero when nothing needs one.
func TrainJobGrace(c *Checkpoint, r RuntimeSpec) int64 {
	mpirun := r.Framework == FrameworkMPI
	var need int64
	if c != nil {
		need = CheckpointGrace(c.SaveSeconds, mpirun)
	}
	if rc := r.Pod.Checkpoint; rc != nil {
		need = max(need, CheckpointGrace(rc.SaveSeconds, mpirun))
	}
	if g := r.Pod.TerminationGracePeriod; need > 0 && g != nil {
		need = max(need, *g)
	}
	return need
}
