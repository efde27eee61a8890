package vdb_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// TestFileKeysMode0600: over stdio a sign-in stores the key in a file of
// mode 0600 in a 0700 directory; a file others can read is refused.
func TestFileKeysMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cfg", "bulwark", "vulnetix-key")
	keys := vdb.NewFileKeys(path)
	f := newFixture(t, setup{noKey: true, keys: keys})
	grant, code := f.start(t)
	if err := f.fake.ApproveDevice(code, f.fake.AddKey(vdbapi.OrgA, "secret-a")); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(5 * time.Second)
	if st := f.poll(t, grant); st["status"] != "signed_in" {
		t.Fatalf("%v", st)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", st.Mode().Perm())
	}
	if d, _ := os.Stat(filepath.Dir(path)); d.Mode().Perm() != 0o700 {
		t.Fatalf("key dir mode %v", d.Mode().Perm())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := keys.Get("local"); err == nil {
		t.Fatal("a world-readable key file was used")
	}
}

// TestMemoryKeysSealedPerPrincipal: the HTTP store keeps keys sealed and
// bound to their principal.
func TestMemoryKeysSealedPerPrincipal(t *testing.T) {
	f := newFixture(t, setup{noKey: true})
	m := vdb.NewMemoryKeys(f.sealer)
	if err := m.Put("alice", "org:abc"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.Get("bob"); ok {
		t.Fatal("bob read alice's key")
	}
	if k, ok, _ := m.Get("alice"); !ok || k != "org:abc" {
		t.Fatalf("alice: %q %v", k, ok)
	}
}
