// Package bootenv prepares the process environment before anything else of
// the binary runs. It imports only the standard library, so that its init
// runs before the go-sdk's (packages initialise in import-path order once
// their own imports are done, and "github.com/bulwarkmcp" sorts before
// "github.com/modelcontextprotocol").
//
// It does two jobs:
//
//   - MCPGODEBUG, which the go-sdk parses in its own init and panics on when
//     malformed, is checked first; a malformed value is taken out of the
//     environment so the SDK starts, and Err reports it for the command to
//     refuse with a one-line reason.
//   - Secret variables (Secrets) are taken out of the environment the kernel
//     shows in /proc/<pid>/environ: see Hide.
package bootenv

import (
	"fmt"
	"os"
	"strings"
)

// Secrets names every environment variable that holds a credential (or a
// URL that may hold one). This is the one list: the command line refuses to
// read a secret variable that is not on it.
var Secrets = []string{
	"HETZNER_API_TOKEN",
	"HETZNER_API_BASE_URL",
	"BULWARK_REDIS_URL",
	"BULWARK_REDIS_PASSWORD",
	"VULNETIX_API_KEY",
	"VULNETIX_API_BASE_URL",
	"MCP_AEAD_KEY",
	"BULWARK_VDB_AI_KEY",
	"BULWARK_REQUEST_STATE_KEY",
	"BULWARK_DNS_TSIG_KEY",
}

// IsSecret reports whether name is on the Secrets list.
func IsSecret(name string) bool {
	for _, s := range Secrets {
		if s == name {
			return true
		}
	}
	return false
}

const debugVar = "MCPGODEBUG"

var debugErr error

func init() {
	if v, ok := os.LookupEnv(debugVar); ok {
		if debugErr = CheckDebug(v); debugErr != nil {
			_ = os.Unsetenv(debugVar)
		}
	}
}

// Err reports a malformed MCPGODEBUG found at startup, or nil.
func Err() error { return debugErr }

// CheckDebug checks an MCPGODEBUG value with the go-sdk's own grammar (a
// comma-separated list of key=value pairs; see its internal/mcpgodebug) and
// says what is wrong in one line.
func CheckDebug(v string) error {
	if v == "" {
		return nil
	}
	for _, part := range strings.Split(v, ",") {
		if !strings.Contains(part, "=") {
			return fmt.Errorf("%s: %q is not key=value (the value is a comma-separated list such as name=1,other=0); unset it", debugVar, part)
		}
	}
	return nil
}
