// Package images builds the local cluster's real node's images (the pause program, etcd, the
// training image debootstrapped from Debian's packages with the programs of images/training) and
// loads them into the node's containerd.
package images

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// The real node's images are built here, without a registry, and loaded into its containerd: a
// docker-archive (manifest.json, config.json, layer tars) is all `ctr images import` needs. Each
// is content-addressed (a key hashing what it is made of), cached under the user's cache folder,
// where a fresh clone on the same machine finds it as it finds the Go build cache, and imported
// only when containerd does not hold that key yet.

// The roles of the real node's images, the keys of realnode.Info.Images.
const (
	Pause    = "pause"
	Etcd     = "etcd"
	Training = "training"
	// TrainingEtcd is the training image with python-etcd added, on purpose: torchrun's
	// etcd rendezvous backends import it, and the upstream PyTorch images do not ship it.
	TrainingEtcd = "training-etcd"
	// PyTorchInit stands for the image of the init container training-operator gives a
	// PyTorchJob's workers (they wait for the master's name to resolve with sh, seq, nslookup and
	// sleep): the training image's Debian base and an nslookup that resolves as alpine 3.10's
	// (components/nslookup), loaded under training-operator v1.9.0's default name.
	PyTorchInit = "pytorch-init"
	// TrainingOpenMPI5 stands for an MPI image with Open MPI 5 (PRRTE's daemons, prted): Debian
	// 13's Open MPI 5.0.7 and mpi4py, and the training programs.
	TrainingOpenMPI5 = "training-openmpi5"
)

// PyTorchInitName is training-operator v1.9.0's config.PyTorchInitContainerImageDefault
// ("alpine:3.10"), as containerd names it; TestPyTorchInitImageIsTrainingOperatorsDefault binds
// the two.
const PyTorchInitName = "docker.io/library/alpine:3.10"

// PauseName is the name containerd's sandbox_image names: the pause program built here is
// loaded under it, so nothing is ever pulled.
const PauseName = "registry.k8s.io/pause:3.10.1"

// etcdImageRepository is the upstream repository of the elastic job's default etcd image; the
// tag is the etcd-image component's release of etcd.
const etcdImageRepository = "quay.io/coreos/etcd"

// trainingImageRepository names the training images (kubetrain.local/ROLE); each one's tag is
// its key.
const trainingImageRepository = "kubetrain.local"

// imageKeyLabel records on an imported image the key of what it was built from.
const imageKeyLabel = "training.kubetrain.io/image-key"

// trainingPackages are the training image's Debian packages: what the upstream PyTorch and MPI
// images it stands for hold (python-etcd is not among them, and not here either).
var trainingPackages = []string{
	"python3", "python3-torch", "python3-numpy", "openmpi-bin", "python3-mpi4py",
	"openssh-server", "openssh-client", "netbase", "procps",
}

// trainingSuite is the Debian release the training image is made of (python3-torch 1.13.1).
const trainingSuite = "bookworm"

// EtcdName is the name the etcd image is loaded under: the upstream image of the release
// the etcd-image component builds.
func EtcdName(ctx context.Context, sourceDir string) (string, error) {
	v, err := host.ModuleVersion(ctx, filepath.Join(sourceDir, "components", "etcd-image"), "go.etcd.io/etcd/server/v3")
	if err != nil {
		return "", err
	}
	return etcdImageRepository + ":" + v, nil
}

// imageCacheDir is where built images are kept between runs and clones.
func imageCacheDir() (string, error) {
	if dir := os.Getenv("TRAINING_IMAGE_CACHE"); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "terraform-provider-training", "images"), nil
}

// imagePath is the PATH of every image here, the one the upstream images set.
const imagePath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// imageConfig is the part of an image configuration the images here set.
type imageConfig struct {
	Env        []string `json:"Env,omitempty"`
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
}

// image is one image to build: its name, its configuration and its layers (tar files), and the
// key of all that.
type image struct {
	role, name string
	config     imageConfig
	layers     []string
	key        string
}

// Build is what building and loading the images needs: the repository's cluster folder (the
// components' modules, the training programs), the built programs by name (pause, etcd-image,
// nslookup), where to say what happens, and the node's containerd client.
type Build struct {
	SourceDir string
	Binaries  map[string]string
	Log       io.Writer
	Ctr       Ctr
}

// Ctr runs containerd's client (ctr) against the real node's containerd and returns what it
// printed.
type Ctr func(ctx context.Context, args ...string) (string, error)

// Load builds what is missing and imports into containerd each image it does not hold yet; it
// returns the images' names by role.
func Load(ctx context.Context, b Build) (map[string]string, error) {
	cache, err := imageCacheDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, err
	}
	unlock, err := host.LockFile(filepath.Join(cache, ".lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	images, err := b.images(ctx, cache)
	if err != nil {
		return nil, err
	}
	held, err := importedImages(ctx, b.Ctr)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	var missing []image
	for _, img := range images {
		names[img.role] = img.name
		if held[img.name] != img.key {
			missing = append(missing, img)
		}
	}
	if len(missing) == 0 {
		return names, nil
	}
	started := time.Now()
	// One archive for all: the images share their layers, which are written once.
	archive := filepath.Join(cache, "import.docker.tar")
	if err := writeDockerArchive(archive, missing); err != nil {
		return nil, fmt.Errorf("writing the images: %w", err)
	}
	defer func() { _ = os.Remove(archive) }() // the layers stay cached; the archive only wraps them
	if _, err := b.Ctr(ctx, "images", "import", archive); err != nil {
		return nil, fmt.Errorf("importing the images: %w", err)
	}
	for _, img := range missing {
		if _, err := b.Ctr(ctx, "images", "label", img.name, imageKeyLabel+"="+img.key); err != nil {
			return nil, err
		}
		_, _ = fmt.Fprintf(b.Log, "loaded image %s\n", img.name)
	}
	_, _ = fmt.Fprintf(b.Log, "loaded %d images in %s\n", len(missing), time.Since(started).Round(100*time.Millisecond))
	return names, nil
}

// images makes (or finds in the cache) the layers of the real node's images.
func (b Build) images(ctx context.Context, cache string) ([]image, error) {
	pause := image{role: Pause, name: PauseName, config: imageConfig{Entrypoint: []string{"/pause"}}}
	layer, err := binaryLayer(cache, b.Binaries["pause"], "pause", nil)
	if err != nil {
		return nil, err
	}
	pause.layers = []string{layer}

	etcdName, err := EtcdName(ctx, b.SourceDir)
	if err != nil {
		return nil, err
	}
	// As the upstream image: the etcd binary on a base without a shell, its folders, its CMD.
	etcd := image{role: Etcd, name: etcdName, config: imageConfig{
		Env: []string{imagePath},
		Cmd: []string{"/usr/local/bin/etcd"}, WorkingDir: "/var/lib/etcd/",
	}}
	if layer, err = binaryLayer(cache, b.Binaries["etcd-image"], "usr/local/bin/etcd", []string{"tmp", "var/etcd", "var/lib/etcd"}); err != nil {
		return nil, err
	}
	etcd.layers = []string{layer}

	debian, err := buildDebianLayers(ctx, cache, b.Log)
	if err != nil {
		return nil, err
	}
	training, err := b.trainingImage(cache, debian.training)
	if err != nil {
		return nil, err
	}
	trainingEtcd := training
	trainingEtcd.role = TrainingEtcd
	trainingEtcd.layers = append(append([]string{}, training.layers...), debian.pythonEtcd)
	nslookup, err := binaryLayer(cache, b.Binaries["nslookup"], "usr/local/bin/nslookup", nil)
	if err != nil {
		return nil, err
	}
	// The training image's base (its layer is shared, so this costs no room): sh, seq and sleep.
	pytorchInit := image{role: PyTorchInit, name: PyTorchInitName, layers: []string{training.layers[0], nslookup}, config: imageConfig{
		Env: []string{imagePath}, Cmd: []string{"/bin/sh"},
	}}
	openMPI5 := openMPI5Image(debian.openMPI5, training.layers[1])
	all := []image{pause, etcd, training, trainingEtcd, pytorchInit, openMPI5}
	for i := range all {
		all[i].key = imageKey(all[i])
		if all[i].name == "" {
			all[i].name = trainingImageRepository + "/" + all[i].role + ":" + all[i].key
		}
	}
	return all, nil
}

// imageKey hashes an image's name, configuration and layer files (their names are their keys).
func imageKey(img image) string {
	h := sha256.New()
	cfg, _ := json.Marshal(img.config)
	_, _ = fmt.Fprintf(h, "%s\n%s\n%s\n", img.role, img.name, cfg)
	for _, l := range img.layers {
		_, _ = fmt.Fprintln(h, filepath.Base(l))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// binaryLayer is a layer holding one program at path and empty folders dirs, cached by the
// program's content.
func binaryLayer(cache, program, path string, dirs []string) (string, error) {
	data, err := os.ReadFile(program)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(path+"\n"+strings.Join(dirs, ",")+"\n"), data...))
	out := filepath.Join(cache, "layer-"+filepath.Base(path)+"-"+hex.EncodeToString(sum[:])[:12]+".tar")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	return out, writeTarAtomically(out, func(tw *tar.Writer) error {
		seen := map[string]bool{}
		for _, d := range append(dirs, parents(path)...) {
			if seen[d] {
				continue
			}
			seen[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path, Mode: 0o755, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	})
}

// parents are the folders above a relative path, outermost first.
func parents(path string) []string {
	var ps []string
	for d := filepath.Dir(path); d != "." && d != "/"; d = filepath.Dir(d) {
		ps = append([]string{d}, ps...)
	}
	return ps
}
