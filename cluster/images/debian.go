package images

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/kubetrain/terraform-provider-training/cluster/internal/host"
)

// debianLayers are the layers the images take from Debian's packages: the training image's and
// the Open MPI 5 image's debootstrapped bases and the python-etcd layer.
type debianLayers struct {
	training, openMPI5, pythonEtcd string
}

// buildDebianLayers makes (or finds in the cache) the Debian layers side by side: a debootstrap
// waits on the mirror and the disk far more than on the processor, so three at once take about as
// long as the slowest.
func buildDebianLayers(ctx context.Context, cache string, log io.Writer) (debianLayers, error) {
	var (
		layers debianLayers
		errs   = make([]error, 3)
		wg     sync.WaitGroup
	)
	log = &lockedWriter{w: log}
	for i, build := range []func() error{
		func() (err error) { layers.training, err = baseLayer(ctx, cache, trainingBase, log); return err },
		func() (err error) { layers.openMPI5, err = baseLayer(ctx, cache, openMPI5Base, log); return err },
		func() (err error) { layers.pythonEtcd, err = pythonEtcdLayer(ctx, cache); return err },
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = build()
		}()
	}
	wg.Wait()
	return layers, errors.Join(errs...)
}

// Prepare builds the layers the real node's images take from Debian that are not cached yet,
// without a cluster: `localcluster build -real-node` runs it beside the Go builds, which keep the
// processor busy while the debootstraps wait on the network, so that the first start of the real
// node finds them made.
func Prepare(ctx context.Context, log io.Writer) error {
	cache, err := imageCacheDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	unlock, err := host.LockFile(filepath.Join(cache, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	_, err = buildDebianLayers(ctx, cache, log)
	return err
}

// lockedWriter lets the builds that run side by side write to one log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
