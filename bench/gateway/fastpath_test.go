package gateway_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStdioFastPath decides whether the kernel's stdio fast path earns
// its place (issue 34, point 3): in one run, in rotating blocks of 100
// calls, a go-sdk client calls the fake upstream's echo tool (1 KB) directly,
// through the C relay that only copies bytes, and through `bulwark gateway`
// with the stdio fast path on and off (--disable-fast-path); and
// `bulwark dns` (the local store, empty) list_zones over stdio with it on
// and off. gateway-nofast/c-relay is the rule: the fast path stays
// only if turning it off makes the relayed call more than 1.15× the copy.
// -benchtime 20x is 2,000 calls each arm.
func BenchmarkStdioFastPath(b *testing.B) {
	bin, err := gatewayBinary()
	if err != nil {
		b.Skip(err)
	}
	arms := []*floorArm{sessionArm(b, "direct", direct(b), "echo", kilobyteArgs)}
	if cs := throughCRelay(b); cs != nil {
		arms = append(arms, sessionArm(b, "c-relay", cs, "echo", kilobyteArgs))
	}
	on, off := gatewayCommand(b), gatewayCommand(b)
	off.Env = append(off.Env, "BULWARK_DISABLE_FAST_PATH=1")
	arms = append(arms, sessionArm(b, "gateway", connect(b, on), "fake.echo", kilobyteArgs),
		sessionArm(b, "gateway-nofast", connect(b, off), "fake.echo", kilobyteArgs))
	dns := func(extra ...string) *exec.Cmd {
		home := b.TempDir()
		cmd := exec.Command(bin, append([]string{"dns", "--data-dir", filepath.Join(home, "zones"), "--dns-listen", "off", "--log-level", "warn"}, extra...)...)
		cmd.Env = []string{"HOME=" + home, "GOGC=100", "PATH=" + os.Getenv("PATH")}
		return cmd
	}
	arms = append(arms, sessionArm(b, "dns", connect(b, dns()), "list_zones", map[string]any{}),
		sessionArm(b, "dns-nofast", connect(b, dns("--disable-fast-path")), "list_zones", map[string]any{}))
	floor(b, arms)
}
