package images

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

func writeTarAtomically(out string, write func(*tar.Writer) error) error {
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	if err := write(tw); err != nil {
		_ = f.Close()
		return err
	}
	if err := tw.Close(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// writeDockerArchive writes images as one docker-archive: manifest.json, a configuration per
// image (its diff_ids its layers' digests) and each layer once.
func writeDockerArchive(out string, images []image) error {
	type file struct {
		name string
		data []byte
	}
	var files []file
	var manifest []map[string]any
	layerFiles := map[string]string{} // archive name -> path
	for i, img := range images {
		var diffIDs, names []string
		for _, l := range img.layers {
			digest, err := fileDigest(l)
			if err != nil {
				return err
			}
			diffIDs = append(diffIDs, "sha256:"+digest)
			names = append(names, digest+".tar")
			layerFiles[digest+".tar"] = l
		}
		config, err := json.Marshal(map[string]any{
			"architecture": runtime.GOARCH, "os": "linux", "config": img.config,
			"rootfs":  map[string]any{"type": "layers", "diff_ids": diffIDs},
			"created": time.Unix(0, 0).UTC().Format(time.RFC3339),
		})
		if err != nil {
			return err
		}
		configName := fmt.Sprintf("config-%d.json", i)
		files = append(files, file{configName, config})
		manifest = append(manifest, map[string]any{"Config": configName, "RepoTags": []string{img.name}, "Layers": names})
	}
	manifestJSON, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	files = append([]file{{"manifest.json", manifestJSON}}, files...)
	var layerNames []string
	for name := range layerFiles {
		layerNames = append(layerNames, name)
	}
	sort.Strings(layerNames)
	return writeTarAtomically(out, func(tw *tar.Writer) error {
		for _, f := range files {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}); err != nil {
				return err
			}
			if _, err := tw.Write(f.data); err != nil {
				return err
			}
		}
		for _, name := range layerNames {
			if err := copyIntoTar(tw, layerFiles[name], name); err != nil {
				return err
			}
		}
		return nil
	})
}

func copyIntoTar(tw *tar.Writer, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: st.Size(), ModTime: time.Unix(0, 0)}); err != nil {
		return err
	}
	_, err = io.Copy(tw, bufio.NewReaderSize(f, 1<<20))
	return err
}

// fileDigest is the hex sha256 of a file, cached beside it (the training layer is 1.4 GB).
func fileDigest(path string) (string, error) {
	sidecar := path + ".sha256"
	if data, err := os.ReadFile(sidecar); err == nil {
		return strings.TrimSpace(string(data)), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return sum, os.WriteFile(sidecar, []byte(sum+"\n"), 0o644)
}

// importedImages maps the names of the images containerd holds to their key label.
func importedImages(ctx context.Context, ctr Ctr) (map[string]string, error) {
	out, err := ctr(ctx, "images", "ls")
	if err != nil {
		return nil, err
	}
	held := map[string]string{}
	for _, line := range strings.Split(out, "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		held[fields[0]] = ""
		for _, label := range strings.Split(fields[len(fields)-1], ",") {
			if v, ok := strings.CutPrefix(label, imageKeyLabel+"="); ok {
				held[fields[0]] = v
			}
		}
	}
	return held, nil
}

// walkFiles lists the regular files under dir, relative to it, in order.
func walkFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}
