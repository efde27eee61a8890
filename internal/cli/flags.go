package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/cli/bootenv"
)

// flags registers flags whose defaults come from environment variables, and
// collects what was wrong with those variables for the run to report.
type flags struct {
	fs   *flag.FlagSet
	env  Env
	errs []error
}

func newFlags(fs *flag.FlagSet, env Env) *flags { return &flags{fs: fs, env: env} }

// usage appends the variable that sets the flag: "[NAME]", or for a
// neutral name with an established alias "[NAME, or ALIAS]".
func (f *flags) usage(usage, envName string) string {
	if envName == "" {
		return usage
	}
	return fmt.Sprintf("%s [%s]", usage, strings.ReplaceAll(envName, "|", ", or "))
}

// getenv reads a variable. envName may be "NAME|ALIAS": the neutral name
// and the established upstream name it replaces (BULWARK_READ_ONLY and
// HETZNER_READ_ONLY). Either sets the flag; both set to different values is
// an error, reported with the others, rather than a silent choice.
func (f *flags) getenv(envName string) string {
	if envName == "" || f.env.Getenv == nil {
		return ""
	}
	names := strings.Split(envName, "|")
	var name, value string
	for _, n := range names {
		v := f.env.Getenv(n)
		switch {
		case v == "":
		case value == "":
			name, value = n, v
		case v != value:
			f.errs = append(f.errs, fmt.Errorf("%s and %s are both set and disagree: set one", name, n))
		}
	}
	return value
}

// String registers a string flag.
func (f *flags) String(p *string, name, envName, def, usage string) {
	if v := f.getenv(envName); v != "" {
		def = v
	}
	f.fs.StringVar(p, name, def, f.usage(usage, envName))
}

// Bool registers a boolean flag; the variable takes true/1/yes/on and
// false/0/no/off, in any case.
func (f *flags) Bool(p *bool, name, envName string, def bool, usage string) {
	if v := f.getenv(envName); v != "" {
		b, ok := parseBool(v)
		if !ok {
			f.errs = append(f.errs, fmt.Errorf("%s: %q is not a boolean (use true or false)", strings.ReplaceAll(envName, "|", " or "), v))
		} else {
			def = b
		}
	}
	f.fs.BoolVar(p, name, def, f.usage(usage, envName))
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

// Int registers an integer flag.
func (f *flags) Int(p *int, name, envName string, def int, usage string) {
	if v := f.getenv(envName); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s: %q is not a number", strings.ReplaceAll(envName, "|", " or "), v))
		} else {
			def = n
		}
	}
	f.fs.IntVar(p, name, def, f.usage(usage, envName))
}

// autoInt is an integer setting whose default depends on the deployment:
// unset, it prints as "auto" and the caller picks the value.
type autoInt struct {
	n   int
	set bool
}

func (a *autoInt) String() string {
	if a == nil || !a.set {
		return "auto"
	}
	return fmt.Sprint(a.n)
}

func (a *autoInt) Set(v string) error {
	if _, err := fmt.Sscan(strings.TrimSpace(v), &a.n); err != nil {
		return fmt.Errorf("%q is not a number", v)
	}
	a.set = true
	return nil
}

// or returns the value given, else def.
func (a autoInt) or(def int) int {
	if a.set {
		return a.n
	}
	return def
}

// AutoInt registers an integer flag whose default ("auto") the caller
// decides from the deployment; the variable, when set, counts as given.
func (f *flags) AutoInt(p *autoInt, name, envName, usage string) {
	if v := f.getenv(envName); v != "" {
		if err := p.Set(v); err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s: %q is not a number", strings.ReplaceAll(envName, "|", " or "), v))
		}
	}
	f.fs.Var(p, name, f.usage(usage, envName))
}

// Duration registers a duration flag ("30s", "5m").
func (f *flags) Duration(p *time.Duration, name, envName string, def time.Duration, usage string) {
	if v := f.getenv(envName); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s: %q is not a duration (e.g. 30s)", strings.ReplaceAll(envName, "|", " or "), v))
		} else {
			def = d
		}
	}
	f.fs.DurationVar(p, name, def, f.usage(usage, envName))
}

// List registers a comma-separated list flag.
func (f *flags) List(p *[]string, name, envName, usage string) {
	*p = splitList(f.getenv(envName))
	f.fs.Func(name, f.usage(usage+" (comma-separated)", envName), func(s string) error {
		*p = splitList(s)
		return nil
	})
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// Secret reads a credential from envName once and removes the variable
// from the process environment at once, so that nothing started later sees
// it. envName must be on bootenv.Secrets, which cmd/bulwark takes out of the
// kernel's copy of the environment (/proc/<pid>/environ) before this runs. A flag names a file to
// read it from instead; a secret is never a flag value.
func (f *flags) Secret(p *secret, fileFlag, envName, usage string) {
	if envName != "" && !bootenv.IsSecret(envName) {
		panic("cli: secret variable " + envName + " is not on bootenv.Secrets")
	}
	if v := f.getenv(envName); v != "" {
		p.value, p.source = strings.TrimSpace(v), envName
	}
	if envName != "" && f.env.Unsetenv != nil {
		_ = f.env.Unsetenv(envName)
	}
	f.fs.Func(fileFlag, f.usage(usage+" (a file holding it)", envName), func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			// The path and the reason, never the content.
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("cannot read %s: %v", path, err)
		}
		p.value, p.source = strings.TrimSpace(string(b)), "-"+fileFlag
		return nil
	})
}

// secret holds a credential. It prints as [redacted] however it is
// formatted, so that it cannot reach a log by accident.
type secret struct {
	value  string
	source string
}

func (s secret) String() string   { return "[redacted]" }
func (s secret) GoString() string { return "[redacted]" }
func (s secret) set() bool        { return s.value != "" }

// err reports what was wrong with the environment.
func (f *flags) err() error {
	if len(f.errs) == 0 {
		return nil
	}
	msgs := make([]string, len(f.errs))
	for i, e := range f.errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%w: %s", errUsage, strings.Join(msgs, "; "))
}
