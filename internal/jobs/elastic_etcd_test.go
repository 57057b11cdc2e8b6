package jobs

import "testing"

func TestCheckEtcdImage(t *testing.T) {
	for image, ok := range map[string]bool{
		"quay.io/coreos/etcd:v3.4.9":             true,
		"registry.k8s.io/etcd:3.5.21-0":          true,
		"quay.io/coreos/etcd:v3.6.8":             false,
		"gcr.io/etcd-development/etcd:v4.0.0":    false,
		"localhost:5000/etcd":                    true, // no tag: nothing to check
		"etcd:latest":                            true,
		"quay.io/coreos/etcd:v3.6.0@sha256:0123": false,
		" ":                                      false,
	} {
		if err := CheckEtcdImage(image); (err == nil) != ok {
			t.Errorf("CheckEtcdImage(%q) = %v, want ok=%v", image, err, ok)
		}
	}
	spec := seedElasticSpec()
	spec.Pod.Roles = map[string]RoleOptions{EtcdRole: {Image: "quay.io/coreos/etcd:v3.6.8"}}
	if _, _, err := spec.Build(); err == nil {
		t.Error("an etcd 3.6 image must be refused: it exits on --enable-v2")
	}
}
