package gateway

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

// publicEnv are the variables no one keeps a secret in: their values are
// not registered as secrets (a PATH in every result would be redacted).
var publicEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "TMP", "TEMP", "PWD"}

// secretEnv reports whether the value of variable n, passed to u's child,
// is a secret: every passed variable is, but those of publicEnv, LC_*
// (the locale) and u.PublicEnv. Guessing from names misses secrets
// ("DB_PASS"); an operator says which are public instead.
func (u *Upstream) secretEnv(n string) bool {
	return !slices.Contains(publicEnv, n) && !strings.HasPrefix(n, "LC_") && !slices.Contains(u.PublicEnv, n)
}

// envSecrets returns the values of u's secret variables, set in the
// gateway's environment. A value too short to be removed safely from what
// clients receive is refused: the operator lists the variable in
// public_env, or gives a longer secret.
func (u *Upstream) envSecrets(getenv func(string) string) ([]string, error) {
	var out []string
	for _, n := range u.Env {
		v := getenv(n)
		if v == "" || !u.secretEnv(n) {
			continue
		}
		if err := egress.CheckSecret(v); err != nil {
			return nil, fmt.Errorf("env %s is passed as a secret (every variable in env is, but %s, LC_* and those in public_env), and %v: list it in public_env if it holds no secret", n, strings.Join(publicEnv, ", "), err)
		}
		out = append(out, v)
	}
	return out, nil
}

// Secrets are the values the gateway passes to its upstreams that no
// client may receive: every secret variable of every upstream's env (the
// credential files are Credentials). The kernel's egress gate removes them
// from every message (kernel.Options.Secrets).
func (g *Gateway) Secrets() []string { return slices.Clone(g.secrets) }

// readCredential reads an upstream's credential file.
func readCredential(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("cannot read credential_file %s: %v", path, err)
	}
	return strings.TrimSpace(string(b)), nil
}
