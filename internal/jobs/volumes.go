package jobs

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// DataVolume mounts a PersistentVolumeClaim into every container, as Arena's --data PVC:PATH.
type DataVolume struct {
	Claim     string
	MountPath string
}

func (v DataVolume) String() string { return v.Claim + ":" + v.MountPath }

// ParseDataVolume reads Arena's "pvc-name:/mount/path".
func ParseDataVolume(s string) (DataVolume, error) {
	claim, mountPath, ok := strings.Cut(s, ":")
	if !ok {
		return DataVolume{}, fmt.Errorf("data volume %q is not of the form PVC_NAME:/MOUNT/PATH", s)
	}
	if errs := validation.IsDNS1123Subdomain(claim); len(errs) > 0 {
		return DataVolume{}, fmt.Errorf("data volume %q: claim name %q is invalid: %s", s, claim, strings.Join(errs, "; "))
	}
	if !path.IsAbs(mountPath) || path.Clean(mountPath) != mountPath {
		return DataVolume{}, fmt.Errorf("data volume %q: mount path %q must be an absolute, clean path", s, mountPath)
	}
	if mountPath == ShmMountPath {
		return DataVolume{}, fmt.Errorf("data volume %q: %s is reserved for shm_size", s, ShmMountPath)
	}
	return DataVolume{Claim: claim, MountPath: mountPath}, nil
}
