package vdb

import (
	"context"
	"errors"
	"runtime"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// The decode budget. Memory follows values, not bytes: decoding into Go
// values costs about 50 to 140 bytes per value, so 3 MiB of
// {"cwe":[{},{},…]} (a million values) built about 140 MB. Every answer is
// counted before anything is built (upstream.JSONBudget, the kernel's JSON
// scanner) and refused with resource_exhausted past the budget; an answer
// over budget is never cached, so a cached answer is always re-decoded
// within it. Heavy decodes take one of a few process-wide slots.
const (
	// MaxDecodeValues caps the values and object keys of one answer: a
	// 2.2 MB vulnerability record has about 220,000.
	MaxDecodeValues = 400_000
	// MaxDecodeDepth caps an answer's nesting (results keep 12 levels).
	MaxDecodeDepth = 64
	// heavyDecode is the body size from which decoding takes a slot.
	heavyDecode = 256 << 10
)

// decodeBudget is the budget every answer is checked against.
var decodeBudget = upstream.JSONBudget{MaxValues: MaxDecodeValues, MaxDepth: MaxDecodeDepth}

// decodeSlots bound the heavy decodes running at once in the process: half
// the CPUs (at least one), so that heavy answers never take every core from
// the calls beside them, and at most that many answers' worth of decoded
// values is alive at once.
var decodeSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// checkBudget refuses an answer over the decode budget, or not JSON at all.
// (Its first result is nothing: it runs through decoded, like a decode.)
func checkBudget(body []byte) (struct{}, error) {
	err := decodeBudget.Check(body)
	switch {
	case errors.Is(err, upstream.ErrJSONBudget):
		return struct{}{}, kernel.Errorf(kernel.ResourceExhausted, "The VDB answer holds more than %d JSON values or nests deeper than %d levels, more than this server decodes; it was not passed on.",
			MaxDecodeValues, MaxDecodeDepth).WithHint("Ask for less where the tool can (a narrower filter, a smaller limit); a record this large cannot be read here.").WithCause(err)
	case err != nil:
		return struct{}{}, kernel.Errorf(kernel.UpstreamError, "The VDB API answered with JSON this server cannot read.").WithCause(err)
	}
	return struct{}{}, nil
}

// decoded runs fn on body — checkBudget, or a decode of an answer that
// passed it — taking a decode slot first when body is heavy; waiting for a
// slot ends with ctx. Scanning a heavy answer takes a slot too: refusing
// 3 MiB costs milliseconds of CPU, and twenty callers refusing at once
// would otherwise take every core from the calls beside them.
func decoded[T any](ctx context.Context, body []byte, fn func([]byte) (T, error)) (T, error) {
	if len(body) >= heavyDecode {
		select {
		case decodeSlots <- struct{}{}:
			defer func() { <-decodeSlots }()
		case <-ctx.Done():
			var zero T
			return zero, kernel.Errorf(kernel.Cancelled, "The call ended while waiting to decode a large answer.").WithCause(ctx.Err())
		}
	}
	return fn(body)
}
