// Command k8sschema writes the JSON schemas kubeconform validates against,
// from the Kubernetes OpenAPI v3 documents in the k8s.io/kubernetes module
// (api/openapi-spec/v3), which the Go module proxy serves: kubeconform's
// own schema download is not reachable from the machines that run CI.
//
//	go run ./k8sschema -spec "$(go mod download -json k8s.io/kubernetes@v1.34.2 | …Dir)/api/openapi-spec/v3" -out DIR
//
// For every kind of the API groups named (core v1, apps v1, policy v1 by
// default) it writes DIR/<kind>-<group>-<version>.json (core:
// <kind>-<version>.json), kubeconform's file naming, as standalone-strict
// schemas like those kubeconform publishes: every $ref inlined, and every
// object that lists its properties closed to others (additionalProperties
// false), so a misspelt or misplaced field fails.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	spec := flag.String("spec", "", "the directory of the OpenAPI v3 documents (api/openapi-spec/v3)")
	out := flag.String("out", "", "the directory to write the schemas to")
	groups := flag.String("groups", "api__v1,apis__apps__v1,apis__policy__v1", "the documents to read, by name without _openapi.json")
	flag.Parse()
	if *spec == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "k8sschema: -spec and -out are required")
		os.Exit(2)
	}
	n := 0
	for _, g := range strings.Split(*groups, ",") {
		k, err := convert(filepath.Join(*spec, g+"_openapi.json"), *out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "k8sschema:", err)
			os.Exit(1)
		}
		n += k
	}
	fmt.Printf("k8sschema: %d schemas in %s\n", n, *out)
}

// convert writes the schema of every kind in one OpenAPI document.
func convert(path, out string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	n := 0
	for _, s := range doc.Components.Schemas {
		name, ok := fileName(s)
		if !ok {
			continue
		}
		inlined, err := inline(s, doc.Components.Schemas, 0)
		if err != nil {
			return n, fmt.Errorf("%s: %w", name, err)
		}
		data, err := json.Marshal(inlined)
		if err != nil {
			return n, err
		}
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// fileName is kubeconform's name for a kind's schema, from its
// x-kubernetes-group-version-kind; false for a schema that is no kind or a
// list of one.
func fileName(s map[string]any) (string, bool) {
	gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
	if len(gvks) != 1 {
		return "", false
	}
	gvk, _ := gvks[0].(map[string]any)
	kind, _ := gvk["kind"].(string)
	group, _ := gvk["group"].(string)
	version, _ := gvk["version"].(string)
	if kind == "" || strings.HasSuffix(kind, "List") {
		return "", false
	}
	suffix := "-" + version
	if group != "" {
		suffix = "-" + strings.Split(group, ".")[0] + suffix
	}
	return strings.ToLower(kind) + suffix + ".json", true
}

// errDepth stops a reference cycle.
var errDepth = errors.New("references nest too deep")

// inline returns s with every $ref replaced by the schema it names,
// descriptions dropped, nullable turned into a null type, and objects with
// properties closed.
func inline(s map[string]any, all map[string]map[string]any, depth int) (map[string]any, error) {
	if depth > 64 {
		return nil, errDepth
	}
	if ref, ok := s["$ref"].(string); ok {
		target, ok := all[strings.TrimPrefix(ref, "#/components/schemas/")]
		if !ok {
			return nil, fmt.Errorf("no schema %s", ref)
		}
		return inline(target, all, depth+1)
	}
	out := map[string]any{}
	for k, v := range s {
		var err error
		switch {
		case k == "description" || k == "default" || strings.HasPrefix(k, "x-kubernetes-"):
		case k == "properties":
			out[k], err = inlineProperties(v, all, depth)
		default:
			out[k], err = inlineValue(v, all, depth)
		}
		if err != nil {
			return nil, err
		}
	}
	if all, ok := out["allOf"].([]any); ok && len(all) == 1 { // a described $ref
		delete(out, "allOf")
		for k, v := range all[0].(map[string]any) {
			if _, set := out[k]; !set {
				out[k] = v
			}
		}
	}
	if _, ok := out["properties"]; ok {
		if _, set := out["additionalProperties"]; !set {
			out["additionalProperties"] = false
		}
	}
	if nullable, _ := out["nullable"].(bool); nullable {
		delete(out, "nullable")
		if t, ok := out["type"].(string); ok {
			out["type"] = []any{t, "null"}
		}
	}
	return out, nil
}

// inlineProperties inlines the schema of each property; the names are
// kept as they are.
func inlineProperties(v any, all map[string]map[string]any, depth int) (any, error) {
	props, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	out := make(map[string]any, len(props))
	for name, p := range props {
		var err error
		if out[name], err = inlineValue(p, all, depth); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func inlineValue(v any, all map[string]map[string]any, depth int) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		return inline(t, all, depth+1)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			var err error
			if out[i], err = inlineValue(e, all, depth); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}
