package upstream

import (
	"errors"
	"fmt"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// ErrJSONBudget reports a JSON answer over its decode budget (JSONBudget).
var ErrJSONBudget = errors.New("upstream: JSON answer over its decode budget")

// JSONBudget bounds what decoding one JSON answer may build. A byte cap
// alone does not: decoding into Go values costs memory per value, whatever
// the bytes — 3 MiB of {"cwe":[{},{},…]} is a million values, and
// encoding/json built about 140 MB from them into an any. Check counts
// before anything is built.
type JSONBudget struct {
	// MaxValues caps the values (object, array, string, number, literal)
	// and object keys of one answer, each counting one. 0 means no cap.
	MaxValues int
	// MaxDepth caps nesting; 0 means the kernel scanner's 1000.
	MaxDepth int
}

// Check scans data once with the kernel's JSON scanner, building nothing
// and allocating nothing for plain keys. It reports ErrJSONBudget when data
// holds more values or nests deeper than b allows, and
// ErrMalformedResponse when data is not one JSON value.
func (b JSONBudget) Check(data []byte) error {
	s := jsonscan.Scanner{Data: data, MaxDepth: b.MaxDepth, MaxValues: b.MaxValues}
	err := s.Skip(0)
	switch {
	case errors.Is(err, jsonscan.ErrValues) || errors.Is(err, jsonscan.ErrDepth):
		return fmt.Errorf("%w: %w", ErrJSONBudget, err)
	case err != nil || !s.AtEnd():
		return fmt.Errorf("%w: not one JSON value", ErrMalformedResponse)
	}
	return nil
}
