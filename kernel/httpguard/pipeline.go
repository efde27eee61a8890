package httpguard

import (
	"cmp"
	"log/slog"
	"net/http"
)

// PipelineOptions configures every guard of a Pipeline. The zero value is
// the safe default: flood guard at 100 requests per 10 s per address, Host
// limited to the loopback names, no browser origin, POST only, JSON only,
// 3 MiB bodies, trace headers validated, headers checked against the body,
// and no authentication stage.
type PipelineOptions struct {
	// Flood configures the per-address flood guard.
	Flood *FloodOptions
	// DisableFlood removes the flood guard, for deployments whose edge
	// already limits per address.
	DisableFlood bool
	// Hosts is the Host allowlist (see DefaultHosts); empty means loopback.
	Hosts []string
	// CORS configures the Origin / CORS guard; nil allows no browser origin.
	CORS *CORSOptions
	// ContentType configures the media-type guard.
	ContentType ContentType
	// MaxBodyBytes limits the body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Auth is the authentication stage, run after the trace guard and
	// before header agreement. Nil means none.
	Auth func(http.Handler) http.Handler
	// Logger records refused Host values, and Origin values unless the CORS
	// options name their own logger.
	Logger *slog.Logger
}

// Pipeline composes the transport guards in the kernel's order (steps 1 to
// 9 of the map of the pipeline in kernel/doc.go):
//
//	flood -> Host -> Origin/CORS -> method -> content type -> body size ->
//	trace headers -> [Auth] -> header agreement -> next
//
// so that nothing reads the body before the size guard, no disallowed
// browser origin reaches authentication, and the body is parsed once, after
// authentication, for every later stage (see RequestMessage).
type Pipeline struct {
	flood       *floodGuard
	hosts       *hostGuard
	cors        *corsGuard
	contentType ContentType
	body        bodyLimit
	auth        func(http.Handler) http.Handler
}

// NewPipeline validates opts (which may be nil) and builds every guard;
// any invalid setting is an error now rather than on the first request.
func NewPipeline(opts *PipelineOptions) (*Pipeline, error) {
	if opts == nil {
		opts = &PipelineOptions{}
	}
	p := &Pipeline{contentType: opts.ContentType, body: bodyLimit{Max: opts.MaxBodyBytes}, auth: opts.Auth}
	var err error
	if !opts.DisableFlood {
		if p.flood, err = newFlood(opts.Flood); err != nil {
			return nil, err
		}
	}
	if p.hosts, err = newHosts(opts.Hosts, &hostOptions{Logger: opts.Logger}); err != nil {
		return nil, err
	}
	corsOpts := CORSOptions{Logger: opts.Logger}
	if opts.CORS != nil {
		corsOpts = *opts.CORS
		corsOpts.Logger = cmp.Or(corsOpts.Logger, opts.Logger)
	}
	if p.cors, err = newCORS(&corsOpts); err != nil {
		return nil, err
	}
	return p, nil
}

// Handler wraps next in every guard, outermost first.
func (p *Pipeline) Handler(next http.Handler) http.Handler {
	h := headerAgreement{}.Handler(next)
	if p.auth != nil {
		h = p.auth(h)
	}
	h = traceHeaders{}.Handler(h)
	h = p.body.Handler(h)
	h = p.contentType.Handler(h)
	h = postOnly{}.Handler(h)
	h = p.cors.Handler(h)
	h = p.hosts.Handler(h)
	if p.flood != nil {
		h = p.flood.Handler(h)
	}
	return h
}
