package jobs

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Keeping says whether what a checkpoint is saved on outlives the job's pods, as far as the
// provider can see from the pods it makes.
type Keeping int

const (
	// Outlives: a PersistentVolumeClaim or a network volume (NFS, iSCSI, a cloud disk), which the
	// pods only mount: a job made in their place finds what they saved.
	Outlives Keeping = iota
	// Trusted: the provider cannot tell (object storage, a hostPath folder of whichever node the
	// pod runs on, a CSI or flex driver's inline volume, a volume the plan does not read): the
	// program and the team's storage keep it, or not.
	Trusted
	// Lost: it dies with the pod (an emptyDir, a generic ephemeral volume, the container's own
	// filesystem) or cannot be written (a read-only mount, a ConfigMap or Secret).
	Lost
)

// CheckpointStore is where a job's checkpoint is saved: the volume (or object storage) that holds
// its path, and whether it outlives the pods.
type CheckpointStore struct {
	Keeping Keeping
	// Volume says what holds the checkpoint, for a plan's messages: "claim ckpt", "NFS share
	// nfs.example:/exports", "object storage", "an emptyDir", ...
	Volume string
	// MountPath is where Volume is mounted; "" for object storage.
	MountPath string
	// Why says, where it is not kept or not seen to be, why: "deleted with its pod".
	Why string
}

// String says where the checkpoint is: its volume and the mount path, and why it is not kept.
func (s CheckpointStore) String() string {
	out := s.Volume
	if s.MountPath != "" {
		out += " at " + s.MountPath
	}
	if s.Why != "" {
		out += " (" + s.Why + ")"
	}
	return out
}

// uriScheme is a URI's scheme (RFC 3986, section 3.1).
var uriScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// CheckpointURI says whether a checkpoint's path is a URI of object storage (s3://bucket/run,
// gs://..., az://..., hdfs://...) rather than a path in the containers: a scheme and a host or
// bucket.
func CheckpointURI(p string) bool {
	scheme, rest, ok := strings.Cut(p, "://")
	if !ok || !uriScheme.MatchString(scheme) || rest == "" || strings.HasPrefix(rest, "/") {
		return false
	}
	u, err := url.Parse(p)
	return err == nil && u.Host != ""
}

// DataVolumesStore is where a checkpoint at p is saved when the only volumes the provider knows
// of are the job's data volumes (claims): the claim mounted deepest at p, or Trusted when none is
// (the pods may mount a volume there that only their runtime says).
func DataVolumesStore(p string, volumes []DataVolume) CheckpointStore {
	if CheckpointURI(p) {
		return CheckpointStore{Keeping: Trusted, Volume: "object storage"}
	}
	if v, ok := CheckpointVolume(p, volumes); ok {
		return CheckpointStore{Keeping: Outlives, Volume: "claim " + v.Claim, MountPath: v.MountPath}
	}
	return CheckpointStore{Keeping: Trusted, Volume: "a volume the plan does not read", Why: "its runtime's, perhaps"}
}

// CheckpointStoreOf is where the pods of roles (Kind.Roles) save a checkpoint at p: the volume
// mounted deepest at p in each role's containers, judged by its source. Roles that mount nothing
// at p do not save there (an MPI launcher, an elastic job's etcd); when no role does, p is on the
// containers' own filesystems and Lost. Of several roles, the least kept store is the answer.
func CheckpointStoreOf(p string, roles []RolePods) CheckpointStore {
	if CheckpointURI(p) {
		return CheckpointStore{Keeping: Trusted, Volume: "object storage"}
	}
	var found *CheckpointStore
	for _, r := range roles {
		s, ok := roleStore(p, r.Template.Spec)
		if ok && (found == nil || s.Keeping > found.Keeping) {
			found = &s
		}
	}
	if found == nil {
		return CheckpointStore{Keeping: Lost, Volume: "the containers' own filesystem", Why: "deleted with each pod"}
	}
	return *found
}

// roleStore is the store of p in one pod spec: the volume of its deepest mount holding p in any
// container; ok is false when none mounts one there.
func roleStore(p string, spec corev1.PodSpec) (s CheckpointStore, ok bool) {
	var mount corev1.VolumeMount
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if under(p, m.MountPath) && (!ok || len(m.MountPath) > len(mount.MountPath)) {
				mount, ok = m, true
			}
		}
	}
	if !ok {
		return CheckpointStore{}, false
	}
	s = CheckpointStore{Keeping: Trusted, Volume: "volume " + mount.Name, Why: "not in the pods' spec the plan reads"}
	for _, v := range spec.Volumes {
		if v.Name == mount.Name {
			s = volumeKeeping(v.VolumeSource)
		}
	}
	s.MountPath = mount.MountPath
	if mount.ReadOnly && s.Keeping != Lost {
		s.Keeping, s.Why = Lost, "mounted read-only"
	}
	return s, true
}

// under says whether p is the mount path m or below it.
func under(p, m string) bool {
	return p == m || strings.HasPrefix(p, strings.TrimSuffix(m, "/")+"/")
}

// volumeKeeping judges a volume by its source: whether what is written on it outlives the pod,
// and how a plan names it.
func volumeKeeping(v corev1.VolumeSource) CheckpointStore {
	switch {
	case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly:
		return CheckpointStore{Keeping: Lost, Volume: "claim " + v.PersistentVolumeClaim.ClaimName, Why: "read-only"}
	case v.PersistentVolumeClaim != nil:
		return CheckpointStore{Keeping: Outlives, Volume: "claim " + v.PersistentVolumeClaim.ClaimName}
	case v.NFS != nil:
		return CheckpointStore{Keeping: Outlives, Volume: fmt.Sprintf("NFS share %s:%s", v.NFS.Server, v.NFS.Path)}
	case v.ISCSI != nil, v.RBD != nil, v.CephFS != nil, v.Glusterfs != nil, v.FC != nil, v.AzureFile != nil, v.AzureDisk != nil,
		v.GCEPersistentDisk != nil, v.AWSElasticBlockStore != nil, v.Cinder != nil, v.PortworxVolume != nil, v.VsphereVolume != nil:
		return CheckpointStore{Keeping: Outlives, Volume: "a network volume"}
	case v.HostPath != nil:
		return CheckpointStore{Keeping: Trusted, Volume: "hostPath " + v.HostPath.Path, Why: "a folder of whichever node each pod runs on"}
	case v.CSI != nil:
		return CheckpointStore{Keeping: Trusted, Volume: "an inline volume of CSI driver " + v.CSI.Driver}
	case v.FlexVolume != nil:
		return CheckpointStore{Keeping: Trusted, Volume: "a volume of flex driver " + v.FlexVolume.Driver}
	case v.EmptyDir != nil:
		return CheckpointStore{Keeping: Lost, Volume: "an emptyDir", Why: "deleted with its pod"}
	case v.Ephemeral != nil:
		return CheckpointStore{Keeping: Lost, Volume: "a generic ephemeral volume", Why: "its claim is deleted with its pod"}
	default:
		// ConfigMap, Secret, DownwardAPI, Projected, GitRepo, Image: read-only or made for the pod.
		return CheckpointStore{Keeping: Lost, Volume: "a volume of the pod's own", Why: "a ConfigMap, Secret, projected, image or git volume, which cannot be saved to"}
	}
}
