package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/cli/bootenv"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// server.json is the MCP Registry entry
// (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json).
// It is generated from the binary's table of servers and their flags, so it
// cannot drift: one OCI package per server (the image's entrypoint is
// bulwark, the server's name its first argument), every environment
// variable a flag reads, secrets marked from bootenv.Secrets.
// UPDATE_GOLDEN=1 rewrites it.

const registrySchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

type registryEntry struct {
	Schema      string            `json:"$schema"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Version     string            `json:"version"`
	Repository  map[string]string `json:"repository"`
	WebsiteURL  string            `json:"websiteUrl,omitempty"`
	Packages    []registryPackage `json:"packages"`
}

type registryPackage struct {
	RegistryType     string          `json:"registryType"`
	RegistryBaseURL  string          `json:"registryBaseUrl,omitempty"`
	Identifier       string          `json:"identifier"`
	Version          string          `json:"version"`
	Transport        map[string]any  `json:"transport"`
	PackageArguments []registryInput `json:"packageArguments"`
	Environment      []registryInput `json:"environmentVariables"`
}

type registryInput struct {
	Type        string `json:"type,omitempty"`
	Name        string `json:"name,omitempty"`
	Value       string `json:"value,omitempty"`
	Description string `json:"description,omitempty"`
	Format      string `json:"format,omitempty"`
	Default     string `json:"default,omitempty"`
	IsRequired  bool   `json:"isRequired,omitempty"`
	IsSecret    bool   `json:"isSecret,omitempty"`
}

// registryVersion is the version server.json describes; scripts/release
// stamps the binary with the same tag.
const registryVersion = "0.1.0"

var envSuffix = regexp.MustCompile(` \[([A-Z][A-Z0-9_]*)(?:, or ([A-Z][A-Z0-9_]*))?\]$`)

// serverEnv lists the environment variables a command's flags read, in
// flag order, from the "[VAR]" its usage ends with.
func serverEnv(t *testing.T, c command) []registryInput {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.setup(fs, Env{Getenv: func(string) string { return "" }})
	var out []registryInput
	seen := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		m := envSuffix.FindStringSubmatch(f.Usage)
		if m == nil {
			t.Errorf("bulwark %s -%s: no environment variable", c.name, f.Name)
			return
		}
		name := m[1]
		if seen[name] {
			return
		}
		seen[name] = true
		_, usage := flag.UnquoteUsage(f)
		usage = strings.TrimSuffix(usage, m[0])
		usage = strings.Replace(usage, " (a file holding it)", "", 1)
		if m[2] != "" {
			usage += " (also read as " + m[2] + ")"
		}
		in := registryInput{Name: name, Description: usage, IsSecret: bootenv.IsSecret(name), IsRequired: name == c.needs}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			in.Format = "boolean"
		}
		if !in.IsSecret && f.DefValue != "" && f.DefValue != "[]" {
			in.Default = f.DefValue
		}
		out = append(out, in)
	})
	return out
}

func registryJSON(t *testing.T) string {
	e := registryEntry{
		Schema:      registrySchema,
		Name:        "io.github.bulwarkmcp/bulwark",
		Description: "MCP servers that are safe to hand to an AI model: DNS zones and Rustpad pads.",
		Version:     registryVersion,
		Repository:  map[string]string{"url": "https://github.com/bulwarkmcp/bulwark", "source": "github"},
	}
	for _, c := range commands() {
		e.Packages = append(e.Packages, registryPackage{
			RegistryType:     "oci",
			Identifier:       "ghcr.io/bulwarkmcp/bulwark:" + registryVersion,
			Version:          registryVersion,
			Transport:        map[string]any{"type": "stdio"},
			PackageArguments: []registryInput{{Type: "positional", Value: c.name, Description: c.summary}},
			Environment:      serverEnv(t, c),
		})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(e); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestServerJSONMatchesTheBinary(t *testing.T) {
	mcptest.GoldenFile(t, "../../server.json", registryJSON(t))
}

// The constraints of the registry's schema that a generator could break.
func TestServerJSONFollowsTheRegistrySchema(t *testing.T) {
	b, err := os.ReadFile("../../server.json")
	if err != nil {
		t.Fatal(err)
	}
	var e registryEntry
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`).MatchString(e.Name) || len(e.Name) > 200 {
		t.Errorf("name %q", e.Name)
	}
	if n := len(e.Description); n < 1 || n > 100 {
		t.Errorf("description is %d characters (1 to 100)", n)
	}
	if e.Version == "" || e.Version == "latest" || e.Repository["url"] == "" || e.Repository["source"] == "" {
		t.Errorf("version %q, repository %v", e.Version, e.Repository)
	}
	names := map[string]bool{}
	for _, c := range commands() {
		names[c.name] = true
	}
	for _, p := range e.Packages {
		if p.RegistryType == "" || p.Identifier == "" || p.Version == "" || p.Version == "latest" || p.Transport["type"] != "stdio" {
			t.Errorf("package %+v", p)
		}
		if len(p.PackageArguments) != 1 || !names[p.PackageArguments[0].Value] {
			t.Errorf("package arguments %+v name no server", p.PackageArguments)
		}
		delete(names, p.PackageArguments[0].Value)
		for _, v := range p.Environment {
			if v.Name == "" || (v.Format != "" && v.Format != "boolean") {
				t.Errorf("variable %+v", v)
			}
		}
	}
	if len(names) > 0 {
		t.Errorf("servers without a package: %v", names)
	}
}
