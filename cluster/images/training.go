package images

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// The training image: Debian's PyTorch, NumPy, Open MPI, mpi4py and OpenSSH, made with
// debootstrap (cached as one layer keyed by this recipe), and the repository's training
// programs (images/training/, a small layer of their own, so that editing one does not make
// the base again). It stands for the upstream PyTorch and MPI images and is shaped like them.

// torchSetup runs in the new root of the training image. Debian's torch 1.13 on Python 3.11
// cannot parse torchrun's default --redirects and --tee (it iterates the Std enum, which 3.11 no
// longer makes yield its flag combinations): the loop is patched to iterate the members, so that
// the commands the operators generate run unchanged, as they do in the upstream images.
const torchSetup = `set -eu
api=/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py
grep -q 'for s in Std:' "$api" || { echo "torch's elastic api.py has no 'for s in Std:' to patch" >&2; exit 1; }
sed -i 's/for s in Std:/for s in Std.__members__.values():/' "$api"
`

// sshSetup runs in the new root of every image that runs mpirun, after a script's `set -eu`
// (torchSetup's: the training image's recipe, and so its cached base, is what it was before the
// two were apart). sshd and ssh are set up as
// mpi-operator's base image (v0.8.2) sets them up: port 2222, no host key checks, no strict
// modes, and a user mpiuser (uid 1000) whose own SSH server reads its configuration from its
// home, which Trainer's MPI runtimes run as.
const sshSetup = `sed -i -e 's/^#\?StrictModes .*/StrictModes no/' -e 's/^#\?Port .*/Port 2222/' /etc/ssh/sshd_config
printf 'Host *\n    StrictHostKeyChecking no\n    UserKnownHostsFile /dev/null\n    Port 2222\n' >> /etc/ssh/ssh_config
mkdir -p /run/sshd
useradd -m -u 1000 mpiuser
printf 'PidFile /home/mpiuser/sshd.pid\nHostKey /home/mpiuser/.ssh/id_rsa\nStrictModes no\nPort 2222\n' > /home/mpiuser/.sshd_config
chown mpiuser: /home/mpiuser/.sshd_config
rm -f /var/cache/apt/archives/*.deb
rm -rf /var/lib/apt/lists/*
`

// A base is the Debian system an image is debootstrapped from: its release, its packages and
// what runs in the new root after them.
type base struct {
	name     string
	suite    string
	packages []string
	setup    string
}

// trainingBase is the training image's system: PyTorch 1.13, Open MPI 4.1 (ORTE).
var trainingBase = base{name: "training", suite: trainingSuite, packages: trainingPackages, setup: torchSetup + sshSetup}

// openMPI5Base is the system of the image that stands for an MPI image with Open MPI 5 (PRRTE):
// Debian 13's Open MPI 5.0.7 and mpi4py, without PyTorch.
var openMPI5Base = base{name: "openmpi5", suite: "trixie", setup: "set -eu\n" + sshSetup, packages: []string{
	"python3", "openmpi-bin", "python3-mpi4py", "openssh-server", "openssh-client", "netbase", "procps",
}}

// openMPIAsRoot is how the upstream MPI images run Open MPI: as root in a container.
var openMPIAsRoot = []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}

// ProgramsDir is where the training programs are in the training image.
const ProgramsDir = "/opt/kubetrain"

// trainingImage is the training system (base, its debootstrapped layer) with the programs.
func (b Build) trainingImage(cache, base string) (image, error) {
	programs, err := programsLayer(cache, filepath.Join(b.SourceDir, "images", "training"))
	if err != nil {
		return image{}, err
	}
	return image{role: Training, layers: []string{base, programs}, config: imageConfig{
		Env: append(append([]string{imagePath, "PYTHONUNBUFFERED=1"}, openMPIAsRoot...), "OMPI_MCA_btl_vader_single_copy_mechanism=none"),
		Cmd: []string{"python3"}, WorkingDir: "/",
	}}, nil
}

// openMPI5Image is the Open MPI 5 system (base, its debootstrapped layer) with the same programs
// layer as the training image. Open MPI 5 renamed its shared-memory transport (vader is sm), and
// its PRRTE reads its own run-as-root consent.
func openMPI5Image(base, programs string) image {
	return image{role: TrainingOpenMPI5, layers: []string{base, programs}, config: imageConfig{
		Env: append([]string{imagePath, "PYTHONUNBUFFERED=1", "OMPI_MCA_btl_sm_single_copy_mechanism=none",
			"PRTE_ALLOW_RUN_AS_ROOT=1", "PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1"}, openMPIAsRoot...),
		Cmd: []string{"python3"}, WorkingDir: "/",
	}}
}

// baseLayer debootstraps a base system and tars it, once per recipe.
func baseLayer(ctx context.Context, cache string, b base, log interface{ Write([]byte) (int, error) }) (string, error) {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "%s\n%s\n%s\n", b.suite, strings.Join(b.packages, ","), b.setup)
	key := hex.EncodeToString(h.Sum(nil))[:12]
	out := filepath.Join(cache, "layer-"+b.name+"-base-"+key+".tar")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	mirror, err := debianMirror()
	if err != nil {
		return "", err
	}
	root := filepath.Join(cache, "rootfs-"+key)
	// debootstrap mounts /proc and /sys in the new root: never remove through a mount.
	removeRoot := func() error {
		if err := host.UnmountUnder(root); err != nil {
			return err
		}
		return os.RemoveAll(root)
	}
	if err := removeRoot(); err != nil {
		return "", err
	}
	defer func() { _ = removeRoot() }()
	started := time.Now()
	_, _ = fmt.Fprintf(log, "building the %s image's base (debootstrap %s: %s)...\n", b.name, b.suite, strings.Join(b.packages, " "))
	steps := [][]string{
		{"debootstrap", "--variant=minbase", "--include=" + strings.Join(b.packages, ","), b.suite, root, mirror},
		{"chroot", root, "/bin/sh", "-c", b.setup},
		{"tar", "--numeric-owner", "-C", root, "-cf", out + ".tmp",
			"--exclude=./dev/*", "--exclude=./proc/*", "--exclude=./sys/*", "--exclude=./tmp/*", "."},
	}
	for _, step := range steps {
		cmd := exec.CommandContext(ctx, step[0], step[1:]...)
		if output, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s: %w\n%s", strings.Join(step, " "), err, LastLines(string(output), 30))
		}
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return "", err
	}
	_, _ = fmt.Fprintf(log, "built the %s image's base in %s\n", b.name, time.Since(started).Round(time.Second))
	return out, nil
}

// programsLayer puts the files of dir under ProgramsDir, cached by their content.
func programsLayer(cache, dir string) (string, error) {
	files, err := walkFiles(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	contents := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		contents[f] = data
		_, _ = fmt.Fprintf(h, "%s %d\n", f, len(data))
		_, _ = h.Write(data)
	}
	out := filepath.Join(cache, "layer-programs-"+hex.EncodeToString(h.Sum(nil))[:12]+".tar")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	base := strings.TrimPrefix(ProgramsDir, "/")
	return out, writeTarAtomically(out, func(tw *tar.Writer) error {
		dirs := append(parents(base+"/x"), base)
		for _, f := range files {
			for _, d := range parents(f) {
				if d := base + "/" + d; !slices.Contains(dirs, d) {
					dirs = append(dirs, d)
				}
			}
		}
		for _, d := range dirs {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return err
			}
		}
		for _, f := range files {
			data := contents[f]
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: base + "/" + f, Mode: 0o755, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
				return err
			}
			if _, err := tw.Write(data); err != nil {
				return err
			}
		}
		return nil
	})
}

// debianMirror is the Debian mirror this machine's apt uses (TRAINING_DEBIAN_MIRROR overrides it):
// the first source that serves the training image's suite.
func debianMirror() (string, error) {
	if m := os.Getenv("TRAINING_DEBIAN_MIRROR"); m != "" {
		return m, nil
	}
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// deb822 stanzas: URIs and Suites.
		for _, stanza := range strings.Split(string(data), "\n\n") {
			var uris, suites []string
			for _, line := range strings.Split(stanza, "\n") {
				if v, ok := strings.CutPrefix(line, "URIs:"); ok {
					uris = strings.Fields(v)
				}
				if v, ok := strings.CutPrefix(line, "Suites:"); ok {
					suites = strings.Fields(v)
				}
			}
			if len(uris) > 0 && slices.Contains(suites, trainingSuite) {
				return uris[0], nil
			}
		}
	}
	if f, err := os.Open("/etc/apt/sources.list"); err == nil {
		defer func() { _ = f.Close() }()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 3 && fields[0] == "deb" && !strings.HasPrefix(fields[1], "[") && fields[2] == trainingSuite {
				return fields[1], nil
			}
		}
	}
	return "", fmt.Errorf("no apt source serves Debian %s on this machine (set TRAINING_DEBIAN_MIRROR)", trainingSuite)
}

// LastLines is the last n lines of s (a build's or a pod's output, for an error message).
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// pythonEtcdPackages are what the training-etcd image adds: python-etcd and the one dependency
// the base does not hold (python3-urllib3 is there).
var pythonEtcdPackages = []string{"python3-etcd", "python3-dnspython"}

// pythonEtcdLayer unpacks the packages of python-etcd into a layer.
func pythonEtcdLayer(ctx context.Context, cache string) (string, error) {
	return packagesLayer(ctx, cache, "python-etcd", pythonEtcdPackages)
}

// packagesLayer unpacks Debian packages, downloaded by this machine's apt (of the same Debian
// release as the images), into a layer named after what.
func packagesLayer(ctx context.Context, cache, what string, packages []string) (string, error) {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "%s\n%s\n", trainingSuite, strings.Join(packages, ","))
	out := filepath.Join(cache, "layer-"+what+"-"+hex.EncodeToString(h.Sum(nil))[:12]+".tar")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if codename := osReleaseCodename(); codename != trainingSuite {
		return "", fmt.Errorf("the %s layer takes packages from this machine's apt, which must be Debian %s (it is %q)", what, trainingSuite, codename)
	}
	tmp, err := os.MkdirTemp(cache, what+"-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	download := exec.CommandContext(ctx, "apt-get", append([]string{"download"}, packages...)...)
	download.Dir = tmp
	if output, err := download.CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get download %s (run apt-get update first if apt has no package lists): %w\n%s",
			strings.Join(packages, " "), err, LastLines(string(output), 10))
	}
	debs, err := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if err != nil || len(debs) != len(packages) {
		return "", fmt.Errorf("apt-get download gave %v for %v", debs, packages)
	}
	root := filepath.Join(tmp, "root")
	for _, deb := range debs {
		if output, err := exec.CommandContext(ctx, "dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
			return "", fmt.Errorf("dpkg-deb -x %s: %w: %s", deb, err, output)
		}
	}
	if output, err := exec.CommandContext(ctx, "tar", "--numeric-owner", "-C", root, "-cf", out+".tmp", ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("tar: %w: %s", err, output)
	}
	return out, os.Rename(out+".tmp", out)
}

func osReleaseCodename() string {
	data, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VERSION_CODENAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}
