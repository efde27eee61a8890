// Package gateway puts the kernel's controls in front of other MCP servers:
// it spawns local ones over stdio (or reaches remote ones over Streamable
// HTTP), lists their tools and re-exposes each as a kernel tool named
// "<prefix>.<tool>", so that argument validation, read-only mode, rate
// limits, authorization, the confirmation gate, the untrusted-data envelope
// with redaction, and the audit apply to every relayed call.
//
// An upstream is untrusted unless its configuration says trust_annotations:
// its own readOnlyHint and destructiveHint are then ignored, the tools the
// configuration lists as read-only are the only read-only ones, and every
// other tool is treated as destructive and gated.
package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Defaults of the zero Config.
const (
	DefaultCallTimeout    = 60 * time.Second
	DefaultMaxResultBytes = 4 << 20
	maxConfigBytes        = 1 << 20
)

// ErrConfig wraps every configuration error.
var ErrConfig = errors.New("gateway: invalid configuration")

// Config is the gateway's configuration: data only.
type Config struct {
	// CallTimeout bounds one relayed call, unless an upstream sets its own.
	CallTimeout Duration `toml:"call_timeout"`
	// Upstreams are the servers fronted, in [[upstream]] tables.
	Upstreams []Upstream `toml:"upstream"`
}

// Upstream is one fronted MCP server: a Command to spawn, or a URL.
type Upstream struct {
	// Name names the upstream in logs, errors and the audit.
	Name string `toml:"name"`
	// Prefix starts its tools' names ("<prefix>.<tool>"); Name when empty.
	Prefix string `toml:"prefix"`

	// Command and Args spawn a local server that speaks MCP on stdio.
	Command string   `toml:"command"`
	Args    []string `toml:"args"`
	// Env names the gateway's environment variables the child receives;
	// nothing else of the gateway's environment reaches it. Every value
	// passed is a secret the egress gate keeps from clients (secret.go),
	// except those of PublicEnv and of the names publicEnv lists.
	Env []string `toml:"env"`
	// PublicEnv names variables of Env that hold no secret.
	PublicEnv []string `toml:"public_env"`

	// URL is a remote Streamable HTTP endpoint (https, or http to loopback).
	URL string `toml:"url"`
	// CredentialFile holds the credential sent to URL in CredentialHeader
	// ("Authorization" by default, as "Bearer <credential>" unless the file
	// names a scheme). The client's own credentials are never relayed.
	CredentialFile   string `toml:"credential_file"`
	CredentialHeader string `toml:"credential_header"`

	// TrustAnnotations takes read-only and destructive from the upstream's
	// own tool annotations. Off by default: the lists below decide.
	TrustAnnotations bool `toml:"trust_annotations"`
	// AllowTools (when set) are the only tools exposed; DenyTools are never
	// exposed. Exact upstream tool names.
	AllowTools []string `toml:"allow_tools"`
	DenyTools  []string `toml:"deny_tools"`
	// DenyPrompts are prompts never relayed (prompts.go).
	DenyPrompts []string `toml:"deny_prompts"`
	// AllowResources (when set) are the URI prefixes of the only
	// resources relayed; DenyResources those never relayed. Upstream URIs
	// in canonical form (resread.go).
	AllowResources []string `toml:"allow_resources"`
	DenyResources  []string `toml:"deny_resources"`
	// ReadOnlyTools change nothing: never gated, kept in read-only mode.
	ReadOnlyTools []string `toml:"read_only_tools"`
	// WriteTools write but destroy nothing: gated only when in ConfirmTools.
	// Every tool on no list is destructive and gated.
	WriteTools []string `toml:"write_tools"`
	// ConfirmTools need a confirmation token even when not destructive.
	ConfirmTools []string `toml:"confirm_tools"`
	// TargetArg names the argument that says what a tool acts on (bound
	// into the confirmation token, shown in the refusal, the authorization
	// resource), for every tool whose schema declares it; TargetArgs sets
	// one or several per tool, in place of TargetArg (target.go).
	TargetArg  string              `toml:"target_arg"`
	TargetArgs map[string]ArgNames `toml:"target_args"`
	// TargetKinds sets the kind of a target argument, by the argument's
	// name: path, url or string (target.go). An argument it does not name
	// has DefaultKind.
	TargetKinds map[string]TargetKind `toml:"target_kinds"`
	// Roots, when set, are the directories every path target must be, or
	// be below, in canonical form; a call whose path lies outside them is
	// refused before anything is sent. Lexical only: a symbolic link below
	// a root is the upstream's to refuse (its own roots).
	Roots []string `toml:"roots"`

	// RelayElicitation lets the upstream ask the client's person a form
	// question (elicitation/create) during a call, and RelaySampling lets it
	// ask the client's model (sampling/createMessage); both off by default:
	// the upstream is offered neither capability (relay.go).
	RelayElicitation bool `toml:"relay_elicitation"`
	RelaySampling    bool `toml:"relay_sampling"`

	// MaxResultBytes caps one result as the upstream encoded it; a larger
	// one is refused (and over stdio ends the child, which is restarted).
	MaxResultBytes int `toml:"max_result_bytes"`
	// CallTimeout bounds one call to this upstream.
	CallTimeout Duration `toml:"call_timeout"`
}

// Duration is a time.Duration written as "30s" in the configuration.
type Duration time.Duration

// UnmarshalText parses "30s", "2m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil || v <= 0 {
		return fmt.Errorf("%q is not a positive duration (e.g. 30s)", b)
	}
	*d = Duration(v)
	return nil
}

// ParseConfig decodes a TOML configuration strictly: an unknown key is an
// error (a misspelt deny_tools must not silently expose a tool).
func ParseConfig(data []byte) (Config, error) {
	var c Config
	if len(data) > maxConfigBytes {
		return c, fmt.Errorf("%w: the file is larger than %d bytes", ErrConfig, maxConfigBytes)
	}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&c)
	if err != nil {
		return c, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return c, fmt.Errorf("%w: unknown key(s) %s", ErrConfig, strings.Join(keys, ", "))
	}
	if err := exactKeys(md); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// exactKeys refuses a key spelled otherwise than the configuration spells
// it. The decoder matches keys to fields without regard to case, so a
// `Deny_Tools = []` after `deny_tools = ["rm"]` would silently empty the
// deny list (FuzzParseConfig found it).
func exactKeys(md toml.MetaData) error {
	top, up := tomlNames(reflect.TypeFor[Config]()), tomlNames(reflect.TypeFor[Upstream]())
	for _, k := range md.Keys() {
		// below a map-typed key (target_args, target_kinds) the names are
		// the operator's own: tool and argument names
		known := len(k) == 1 && top[k[0]] != nil ||
			len(k) >= 2 && k[0] == "upstream" && up[k[1]] != nil && (len(k) == 2 || up[k[1]].Kind() == reflect.Map)
		if !known {
			return fmt.Errorf("%w: unknown key %s (keys are written as documented, in lower case)", ErrConfig, k)
		}
	}
	return nil
}

// tomlNames are the toml names of the fields of struct type t, with the
// fields' types.
func tomlNames(t reflect.Type) map[string]reflect.Type {
	names := map[string]reflect.Type{}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); name != "" {
			names[name] = t.Field(i).Type
		}
	}
	return names
}

var (
	nameRE   = lazyRE(`^[a-z0-9][a-z0-9_-]{0,31}$`)
	prefixRE = lazyRE(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
	envRE    = lazyRE(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerRE = lazyRE(`^[A-Za-z0-9-]{1,64}$`)
)

// lazyRE compiles pattern on first use, not at start: every bulwark
// command links this package, and a counted repetition ({1,64}) compiles
// to that many copies — the package's regular expressions were its whole
// start-up cost, about 1.5 ms and 2,600 allocations (GODEBUG=inittrace=1).
func lazyRE(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// Validate checks the configuration: every contradiction fails here, at
// startup, never on a call.
func (c *Config) Validate() error {
	if len(c.Upstreams) == 0 {
		return fmt.Errorf("%w: no upstream", ErrConfig)
	}
	names, prefixes := map[string]bool{}, map[string]bool{}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		if err := u.validate(); err != nil {
			return fmt.Errorf("%w: upstream %q: %v", ErrConfig, u.Name, err)
		}
		p := strings.ToLower(u.prefix())
		if names[u.Name] || prefixes[p] {
			return fmt.Errorf("%w: upstream %q: its name or prefix is used twice", ErrConfig, u.Name)
		}
		names[u.Name], prefixes[p] = true, true
	}
	return nil
}

func (u *Upstream) prefix() string {
	if u.Prefix != "" {
		return u.Prefix
	}
	return u.Name
}

func (u *Upstream) validate() error {
	switch {
	case !nameRE().MatchString(u.Name):
		return errors.New("name must be 1-32 of [a-z0-9_-]")
	case u.Prefix != "" && !prefixRE().MatchString(u.Prefix):
		return errors.New("prefix must be 1-32 of [A-Za-z0-9_-]")
	case (u.Command == "") == (u.URL == ""):
		return errors.New("set exactly one of command and url")
	case u.Command == "" && (len(u.Args) > 0 || len(u.Env) > 0):
		return errors.New("args and env need a command")
	case u.URL == "" && (u.CredentialFile != "" || u.CredentialHeader != ""):
		return errors.New("credential_file and credential_header need a url")
	case u.CredentialHeader != "" && !headerRE().MatchString(u.CredentialHeader):
		return errors.New("credential_header is not a header name")
	case u.MaxResultBytes < 0:
		return errors.New("max_result_bytes must not be negative")
	}
	if u.URL != "" {
		if _, _, err := upstream.ValidateBaseURL(u.URL, ""); err != nil {
			return fmt.Errorf("url: %w (credentials go in credential_file)", err)
		}
	}
	for _, e := range u.Env {
		if !envRE().MatchString(e) {
			return fmt.Errorf("env %q is not a variable name", e)
		}
	}
	for _, e := range u.PublicEnv {
		if !slices.Contains(u.Env, e) {
			return fmt.Errorf("public_env %q is not passed to the server (it is not in env)", e)
		}
	}
	for _, p := range slices.Concat(u.AllowResources, u.DenyResources) {
		if c, err := canonicalResourceURI(p); err != nil || c != p {
			return fmt.Errorf("resource prefix %q is not a URI in canonical form", p)
		}
	}
	return u.validateLists()
}

// validateLists refuses a tool on two lists that contradict each other.
func (u *Upstream) validateLists() error {
	for _, pair := range [][2][]string{{u.ReadOnlyTools, u.WriteTools}, {u.ReadOnlyTools, u.ConfirmTools}, {u.AllowTools, u.DenyTools}} {
		for _, t := range pair[0] {
			if slices.Contains(pair[1], t) {
				return fmt.Errorf("tool %q is on two lists that contradict each other", t)
			}
		}
	}
	return u.validateTargets()
}

func (u *Upstream) maxResult() int {
	if u.MaxResultBytes > 0 {
		return u.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

func (u *Upstream) callTimeout(def Duration) time.Duration {
	switch {
	case u.CallTimeout > 0:
		return time.Duration(u.CallTimeout)
	case def > 0:
		return time.Duration(def)
	}
	return DefaultCallTimeout
}
