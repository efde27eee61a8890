package bootenv

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Vars holds the secret variables taken out of the environment, and reads
// every other variable from the process environment.
type Vars struct {
	mu sync.Mutex
	m  map[string]string
	// Warning, when set, says that on Linux the secrets could not be taken
	// out of the kernel's copy of the environment (they are out of Go's).
	Warning string
}

// Getenv returns a secret handed over at startup, or else the process's
// variable.
func (v *Vars) Getenv(name string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.m[name]; ok {
		return s
	}
	return os.Getenv(name)
}

// Unsetenv forgets a secret (secrets are read once) and removes the
// variable from the process environment.
func (v *Vars) Unsetenv(name string) error {
	v.mu.Lock()
	delete(v.m, name)
	v.mu.Unlock()
	return os.Unsetenv(name)
}

// maxHandover bounds the secrets handed over a pipe: a pipe holds at least
// 64 KiB on Linux, and the handover writes everything before the re-exec
// reads it.
const maxHandover = 60 << 10

// Hide takes the Secrets out of the process environment and returns them.
//
// On Linux the kernel keeps the environment a process was started with (it
// is what /proc/<pid>/environ shows, to the same user and to root, for the
// life of the process); unsetting a variable changes only Go's copy. So
// when a secret is present, Hide writes the secrets into a pipe and
// re-executes the same binary (/proc/self/exe, same pid, same arguments,
// same stdin/stdout/stderr) with an environment that lacks them and names
// the pipe's descriptor in BULWARK_SECRETS_FD; the new image reads the pipe
// once and closes it. Hide does not return in the first image.
//
// Elsewhere, or when the re-exec fails, the secrets are removed from Go's
// copy of the environment only, and Warning says so.
func Hide() (*Vars, error) {
	v := &Vars{m: map[string]string{}}
	if fd, ok := os.LookupEnv(fdVar); ok {
		_ = os.Unsetenv(fdVar)
		if err := receive(fd, v.m); err != nil {
			return nil, err
		}
	}
	found := false
	for _, name := range Secrets {
		if val, ok := os.LookupEnv(name); ok {
			v.m[name] = val
			found = true
		}
	}
	if !found {
		return v, nil
	}
	payload := encode(v.m)
	if len(payload) > maxHandover {
		return nil, fmt.Errorf("the secret variables hold %d bytes, more than %d: use the -…-file flags", len(payload), maxHandover)
	}
	err := reexec(payload) // returns only when it failed
	for _, name := range Secrets {
		_ = os.Unsetenv(name)
	}
	if !errors.Is(err, errUnsupported) {
		v.Warning = "re-executing without the secret variables failed (" + err.Error() + "): the operating system still shows them in this process's start-up environment to the same user and root; prefer the -…-file flags"
	}
	return v, nil
}

const fdVar = "BULWARK_SECRETS_FD"

var errUnsupported = errors.New("not supported on this platform")

// encode writes NAME=value pairs separated by NUL bytes (which no
// environment value can hold).
func encode(m map[string]string) []byte {
	var b strings.Builder
	for k, val := range m {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(val)
		b.WriteByte(0)
	}
	return []byte(b.String())
}

// decode reads what encode wrote, keeping only names on the Secrets list.
func decode(p []byte, m map[string]string) error {
	for _, pair := range strings.Split(string(p), "\x00") {
		if pair == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		if !ok || !IsSecret(k) {
			return errors.New("malformed secrets hand-over")
		}
		m[k] = val
	}
	return nil
}

// withoutSecrets is env without the Secrets and the hand-over variable.
func withoutSecrets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if IsSecret(k) || k == fdVar {
			continue
		}
		out = append(out, kv)
	}
	return out
}
