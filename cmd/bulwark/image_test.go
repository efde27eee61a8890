package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// scripts/image builds the container image with buildah; this checks its
// configuration (non-root user, entrypoint, the data volume) and its
// contents (the binary, CA certificates, passwd; no shell, nothing else),
// and runs the binary it holds. Without buildah it skips, unless CI=true.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a container image; skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the image is linux-only")
	}
	if _, err := exec.LookPath("buildah"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and buildah is not installed (Debian: apt-get install buildah)")
		}
		t.Skip("buildah is not installed (Debian: apt-get install buildah): the image is not checked")
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	tag := "localhost/bulwark-test:" + hex.EncodeToString(rnd[:])
	buildah := func(args ...string) ([]byte, error) {
		return exec.Command("buildah", append([]string{"--storage-driver", "vfs"}, args...)...).CombinedOutput()
	}
	if b, err := exec.Command("bash", "../../scripts/image", "-tag", tag, "-version", "v9.8.7-test").CombinedOutput(); err != nil {
		t.Fatalf("scripts/image: %v\n%s", err, b)
	}
	t.Cleanup(func() { buildah("rmi", "-f", tag) })

	b, err := buildah("inspect", "--type", "image", tag)
	if err != nil {
		t.Fatalf("buildah inspect: %v\n%s", err, b)
	}
	var img struct {
		OCIv1 struct {
			Config struct {
				User       string
				Entrypoint []string
				Cmd        []string
				Volumes    map[string]struct{}
				Env        []string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal(b, &img); err != nil {
		t.Fatal(err)
	}
	cfg := img.OCIv1.Config
	if cfg.User != "65532:65532" || !slices.Equal(cfg.Entrypoint, []string{"/bulwark"}) {
		t.Errorf("user %q, entrypoint %v", cfg.User, cfg.Entrypoint)
	}
	if _, ok := cfg.Volumes["/data"]; !ok || !slices.Contains(cfg.Env, "BULWARK_DNS_DATA_DIR=/data/zones") {
		t.Errorf("volumes %v, env %v", cfg.Volumes, cfg.Env)
	}

	dir := t.TempDir()
	if b, err := buildah("push", tag, "dir:"+filepath.Join(dir, "image")); err != nil {
		t.Fatalf("buildah push: %v\n%s", err, b)
	}
	files, bin := imageFiles(t, filepath.Join(dir, "image"))
	want := []string{"bulwark", "data/", "data/zones/", "etc/group", "etc/passwd", "etc/ssl/certs/ca-certificates.crt"}
	var got []string
	for name := range files {
		// Parent directories the copies created.
		if name == "etc/" || name == "etc/ssl/" || name == "etc/ssl/certs/" {
			continue
		}
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the image holds %v, want %v (no shell, nothing else)", got, want)
	}
	if h := files["data/zones/"]; h == nil || h.Uid != 65532 {
		t.Errorf("data/zones is not owned by the image's user: %+v", h)
	}
	exe := filepath.Join(dir, "bulwark")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "bulwark v9.8.7-test (commit ") {
		t.Fatalf("the image's bulwark version: %v %q", err, out)
	}
}

// imageFiles reads every layer of an image pushed to a dir: transport and
// returns its entries and the bytes of /bulwark.
func imageFiles(t *testing.T, dir string) (map[string]*tar.Header, []byte) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*tar.Header{}
	var bin []byte
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(f)
		var src io.Reader = r
		if magic, _ := r.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
			if src, err = gzip.NewReader(r); err != nil {
				t.Fatal(err)
			}
		}
		tr := tar.NewReader(src)
		for {
			h, err := tr.Next()
			if err != nil {
				break // the end of a layer, or not a layer (the manifest, the config)
			}
			name := strings.TrimPrefix(h.Name, "./")
			if name == "" {
				continue
			}
			files[name] = h
			if name == "bulwark" {
				if bin, err = io.ReadAll(tr); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.Close()
	}
	return files, bin
}
