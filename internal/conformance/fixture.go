package conformance

import (
	"log/slog"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Name is the fixture's server name.
const Name = "bulwark-conformance-fixture"

// Options configure New. The zero value is usable.
type Options struct {
	// Logger gets the kernel's log lines; discarded when nil.
	Logger *slog.Logger
}

// New returns the fixture: a kernel server with Tools, and the resources,
// prompts and completion of the conformance scenarios on its go-sdk server.
// Serve it with Server.HTTPHandler or Server.ServeHTTP, like any product
// server.
func New(opts *Options) (*kernel.Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	srv, err := kernel.New(kernel.Info{Name: Name, Title: "bulwark conformance fixture", Version: "0.0.0-test"}, Tools(),
		&kernel.Options{Logger: o.Logger, Envelope: untrusted.Envelope{Source: "conformance-fixture"},
			Features: kernel.Features{Prompts: true, Resources: true, Completions: true}})
	if err != nil {
		return nil, err
	}
	addResources(srv.MCP())
	addPrompts(srv.MCP())
	addMRTRPrompt(srv.MCP())
	srv.MCP().AddReceivingMiddleware(completion)
	return srv, nil
}
