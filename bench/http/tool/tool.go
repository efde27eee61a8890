// Package tool is the one trivial tool of the HTTP load benchmark, shared
// by its Go servers (the TypeScript server in ../ts declares the same).
package tool

// Name and Description declare the tool.
const (
	Name        = "get_rrset"
	Description = "Get an RRSet."
)

// Value is the record value every answer carries; the load generator checks
// for it.
const Value = "198.51.100.7"

// In is the tool's arguments.
type In struct {
	Zone string `json:"zone" jsonschema:"the zone"`
	Name string `json:"name" jsonschema:"the name"`
}

// Out is the tool's result.
type Out struct {
	Zone  string `json:"zone"`
	Name  string `json:"name"`
	TTL   int    `json:"ttl"`
	Value string `json:"value"`
}

// Answer is the tool's whole work.
func Answer(in In) Out { return Out{Zone: in.Zone, Name: in.Name, TTL: 300, Value: Value} }
