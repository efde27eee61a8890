package atomicfile_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/atomicfile"
)

func TestWriteReplacesAndSetsTheMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	for i, data := range []string{"old", "new and longer"} {
		if err := atomicfile.Write(p, []byte(data), 0o640, &atomicfile.Options{NoSync: i == 1}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
}

// TestWriteStampsDistinctTimes: two quick rewrites of the same size get
// different modification times, so a cache keyed by stat(2) sees both.
func TestWriteStampsDistinctTimes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	var last time.Time
	for i := range 20 {
		if err := atomicfile.Write(p, []byte{byte('a' + i)}, 0o600, &atomicfile.Options{NoSync: true}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().After(last) {
			t.Fatalf("rewrite %d has mtime %v, not after %v", i, fi.ModTime(), last)
		}
		last = fi.ModTime()
	}
}

// TestFailedWriteKeepsTheOldFile: a write that cannot complete (here the
// target is a directory, so the rename fails) leaves the old content and no
// temporary file.
func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "d")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "x"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(target, []byte("new"), 0o600, nil); err == nil {
		t.Fatal("writing over a non-empty directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "d" {
		t.Fatalf("left behind: %v", ents)
	}
	if err := atomicfile.Write(filepath.Join(dir, "missing", "f"), nil, 0o600, nil); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
}

func TestRemove(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := atomicfile.Remove(p, nil); err != nil {
		t.Fatalf("removing an absent file: %v", err)
	}
	if err := atomicfile.Write(p, []byte("x"), 0o600, nil); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Remove(p, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("still there: %v", err)
	}
}

// TestLockExcludes: an exclusive holder keeps out both kinds of locker,
// until ctx ends (the waiter gives up with ctx's error) or it releases;
// shared holders share.
func TestLockExcludes(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("flock(2) is not available here; Lock is documented as a no-op")
	}
	p := filepath.Join(t.TempDir(), ".lock")
	ctx := context.Background()
	unlock, err := atomicfile.Lock(ctx, p, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, exclusive := range []bool{true, false} {
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err := atomicfile.Lock(short, p, exclusive)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("exclusive=%v got the lock while it was held: %v", exclusive, err)
		}
	}
	unlock()
	a, err := atomicfile.Lock(ctx, p, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := atomicfile.Lock(ctx, p, false)
	if err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	a()
	b()
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file mode %v, %v", fi.Mode().Perm(), err)
	}
}

func TestDataDir(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_DATA_HOME": "/x", "HOME": "/h"}, "/x/bulwark/zones"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/h"}, "/h/.local/share/bulwark/zones"},
		{map[string]string{"HOME": "/h"}, "/h/.local/share/bulwark/zones"},
		{map[string]string{}, ""},
	} {
		if got := atomicfile.DataDir(func(k string) string { return c.env[k] }, "zones"); got != filepath.FromSlash(c.want) {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}
