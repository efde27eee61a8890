package vdb

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

// Bounds of vdb_request.
const (
	MaxRequestPath  = 512
	maxQueryKeys    = 20
	maxQueryValue   = 200
	queryKeyPattern = `^[A-Za-z][A-Za-z0-9_-]{0,39}$`
)

// ErrPath wraps every refusal of CheckPath.
var ErrPath = errors.New("vdb: path refused")

func refusePath(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrPath, fmt.Sprintf(format, args...))
}

// CheckPath decides whether vdb_request may GET path (relative to /v2). It
// refuses, before any request: paths over MaxRequestPath bytes; anything
// not starting with a single "/" (absolute and scheme-relative URLs);
// backslashes, "?", "#", "@", ";" (matrix parameters, which some servers
// cut off: "/exploits/x/poc;"), spaces, control and non-ASCII bytes; empty,
// "." and ".." segments; percent-encodings of these, of "/", "." or "%"
// (double encoding), and malformed ones. It then matches the decoded
// segments against the route rule (routeAllowed). It returns the decoded
// segments.
func CheckPath(path string) ([]string, error) {
	switch {
	case len(path) > MaxRequestPath:
		return nil, refusePath("longer than %d bytes", MaxRequestPath)
	case !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//"):
		return nil, refusePath("it must be a path under /v2 starting with one \"/\", never a URL")
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\\?#@;", c) >= 0 {
			return nil, refusePath("it holds a character that is not allowed in a path (\\, ?, #, @, ;, space, control or non-ASCII)")
		}
	}
	raw := strings.Split(path[1:], "/")
	segs := make([]string, len(raw))
	for i, r := range raw {
		s, err := decodeSegment(r)
		if err != nil {
			return nil, err
		}
		if s == "" || s == "." || s == ".." {
			return nil, refusePath("empty, \".\" and \"..\" segments are not allowed")
		}
		segs[i] = s
	}
	if err := routeAllowed(segs); err != nil {
		return nil, err
	}
	return segs, nil
}

// decodeSegment decodes percent-encodings, refusing those of "/", "\",
// "." and "%" and any malformed one.
func decodeSegment(r string) (string, error) {
	if !strings.Contains(r, "%") {
		return r, nil
	}
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		if r[i] != '%' {
			b.WriteByte(r[i])
			continue
		}
		if i+2 >= len(r) || !isHex(r[i+1]) || !isHex(r[i+2]) {
			return "", refusePath("a malformed percent-encoding")
		}
		c := unhex(r[i+1])<<4 | unhex(r[i+2])
		if c <= ' ' || c >= 0x7f || strings.IndexByte("/\\.%?#@;", c) >= 0 {
			return "", refusePath("encoded dots, slashes, backslashes, semicolons, percent signs (double encoding) and control bytes are not allowed")
		}
		b.WriteByte(c)
		i += 2
	}
	return b.String(), nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

type requestArgs struct {
	Path  string            `json:"path" jsonschema:"the API path under /v2, e.g. /vuln/CVE-2024-3094/tree-sitter or /cloud-locators"`
	Query map[string]string `json:"query,omitempty" jsonschema:"query parameters (keys letters, digits, _ and -)"`
}

func (s *Server) requestTool() kernel.Tool {
	t := kernel.NewTool(kernel.Spec[requestArgs, out]{Name: "vdb_request",
		Description: "GET a VDB API path that no other tool covers, under a fixed list of read prefixes (" +
			"/vuln/…, /kev, /exploits, /packages/…, /cloud-locators, /raw/sources, /spec, …). GET only; " +
			"the CLI-only /cli.* routes, /auth/*, proof-of-concept and raw archives are refused, as are URLs, " +
			"dot segments and encoded slashes or dots. JSON answers only, shaped and cut like every other tool's.",
		Policy: readOnly, Handle: bounded(s, s.request)})
	return argschema.Refine(t, map[string]argschema.Rule{"path": argschema.All(argschema.MinLen(1), argschema.MaxLen(MaxRequestPath))})
}

func (s *Server) request(ctx context.Context, call *kernel.Call, in requestArgs) (out, error) {
	segs, err := CheckPath(in.Path)
	if err != nil {
		return nil, kernel.Errorf(kernel.InvalidArgument, "vdb_request refused the path: %s.", strings.TrimPrefix(err.Error(), ErrPath.Error()+": ")).
			WithHint("Use a path under one of the read prefixes, plain, without encoded dots or slashes; or use the dedicated tool.")
	}
	q, err := checkQuery(in.Query)
	if err != nil {
		return nil, err
	}
	f, v, err := s.getJSON(ctx, call, segs, q)
	if err != nil {
		return nil, err
	}
	p, _ := apiPath(segs...)
	return result(f, out{"path": p, "data": compact(v, 0)}), nil
}

func checkQuery(m map[string]string) (url.Values, error) {
	if len(m) > maxQueryKeys {
		return nil, kernel.Errorf(kernel.InvalidArgument, "At most %d query parameters.", maxQueryKeys)
	}
	q := url.Values{}
	for k, v := range m {
		if k == "_t" {
			continue // the cache-buster: never relayed
		}
		if !validQueryKey(k) || len(v) > maxQueryValue {
			return nil, kernel.Errorf(kernel.InvalidArgument, "Query keys must match %s and values be at most %d bytes.", queryKeyPattern, maxQueryValue)
		}
		q.Set(k, v)
	}
	return q, nil
}

func validQueryKey(k string) bool {
	if k == "" || len(k) > 40 || !(k[0] >= 'A' && k[0] <= 'Z' || k[0] >= 'a' && k[0] <= 'z') {
		return false
	}
	for _, c := range []byte(k) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
