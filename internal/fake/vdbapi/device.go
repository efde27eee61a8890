package vdbapi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// Device-grant states (DeviceGrant.State).
const (
	GrantPending  = "pending"
	GrantApproved = "approved"
	GrantDenied   = "denied"
	GrantExpired  = "expired"
	GrantRedeemed = "redeemed"
)

// DeviceStep is one scripted answer of POST /token, used before the
// grant's own state (ScriptDevice).
type DeviceStep int

// Scripted /token answers (reference §11).
const (
	StepPending     DeviceStep = iota + 1 // 400 authorization_pending
	StepSlowDown                          // 400 slow_down (interval +5 s)
	StepRateLimited                       // 429
	StepBadGateway                        // 502 with an HTML body
)

// ErrUnknownUserCode is returned by the device switches for a user code
// the fake never issued.
var ErrUnknownUserCode = errors.New("vdbapi: unknown user code")

// grant is one device authorization, stored under the SHA-256 of its
// device_code (reference §8: the server keeps only the hash).
type grant struct {
	userCode string
	state    string
	apiKey   string
	orgID    string
	expires  time.Time
	interval time.Duration
	last     time.Time // last poll (issue time before the first)
	polls    int
	script   []DeviceStep
}

// DeviceGrant is a snapshot of one grant, for assertions.
type DeviceGrant struct {
	UserCode string
	State    string
	Polls    int           // POST /token calls for this grant
	Interval time.Duration // current interval (raised by slow_down)
	Expires  time.Time
}

// IssuedGrant is a device_code the fake handed out, kept only so tests can
// assert that it never reaches a tool result, a log line or an audit
// record. The fake itself looks grants up by SHA-256.
type IssuedGrant struct {
	DeviceCode string
	UserCode   string
}

// ApproveDevice approves the grant of userCode, as a signed-in human would
// in the browser; the next poll redeems it and returns apiKey, which must be
// a value from AddKey.
func (s *Server) ApproveDevice(userCode, apiKey string) error {
	orgID := s.orgOfKey(apiKey)
	if orgID == "" {
		return fmt.Errorf("vdbapi: ApproveDevice: the api key was not provisioned with AddKey")
	}
	return s.setGrant(userCode, func(g *grant) {
		g.state, g.apiKey, g.orgID = GrantApproved, apiKey, orgID
	})
}

// DenyDevice denies the grant of userCode: the next poll gets access_denied.
func (s *Server) DenyDevice(userCode string) error {
	return s.setGrant(userCode, func(g *grant) { g.state = GrantDenied })
}

// ExpireDevice expires the grant of userCode now: polls get expired_token.
func (s *Server) ExpireDevice(userCode string) error {
	return s.setGrant(userCode, func(g *grant) { g.state = GrantExpired })
}

// ScriptDevice queues answers for the next polls of userCode's grant; they
// are used, one per poll, before its state is consulted.
func (s *Server) ScriptDevice(userCode string, steps ...DeviceStep) error {
	return s.setGrant(userCode, func(g *grant) { g.script = append(g.script, steps...) })
}

func (s *Server) setGrant(userCode string, f func(*grant)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.grants {
		if g.userCode == userCode {
			f(g)
			return nil
		}
	}
	return ErrUnknownUserCode
}

// DeviceGrants returns a snapshot of every grant, in no particular order.
func (s *Server) DeviceGrants() []DeviceGrant {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []DeviceGrant
	for _, g := range s.grants {
		out = append(out, DeviceGrant{UserCode: g.userCode, State: g.state, Polls: g.polls,
			Interval: g.interval, Expires: g.expires})
	}
	return out
}

// Issued returns every device_code and user_code handed out, in order.
func (s *Server) Issued() []IssuedGrant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]IssuedGrant(nil), s.issued...)
}

// LastUserCode is the user_code of the latest grant ("" when none).
func (s *Server) LastUserCode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.issued) == 0 {
		return ""
	}
	return s.issued[len(s.issued)-1].UserCode
}

// serveSite answers the sign-in site: the three device endpoints.
func (s *Server) serveSite(w http.ResponseWriter, r *http.Request, rec *Request) {
	if f := s.takeFault(HostSite, r); f != nil && s.applyFault(w, r, f) {
		return
	}
	op, ok := strings.CutPrefix(r.URL.EscapedPath(), DevicePath+"/")
	if !ok || (op != "authorize" && op != "token" && op != "approve") {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "not_found"})
		return
	}
	if op == "approve" {
		s.tripWire(rec) // only a signed-in browser approves; bulwark never does
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "method_not_allowed"})
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	switch op {
	case "authorize":
		s.deviceAuthorize(w)
	case "token":
		s.deviceToken(w, r)
	default:
		// No browser session exists in the fake: tests approve through
		// ApproveDevice.
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "unauthorized"})
	}
}

func (s *Server) deviceAuthorize(w http.ResponseWriter) {
	now := s.now()
	s.mu.Lock()
	kept := s.authorize[:0]
	for _, t := range s.authorize {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	s.authorize = kept
	if len(s.authorize) >= s.opts.AuthorizeLimit {
		s.mu.Unlock()
		w.Header().Set("Retry-After", "60")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": "rate_limited"})
		return
	}
	s.authorize = append(s.authorize, now)
	code, user := randomCode(), randomUserCode()
	s.grants[sha256.Sum256([]byte(code))] = &grant{userCode: user, state: GrantPending,
		expires: now.Add(s.opts.DeviceExpiresIn), interval: s.opts.DeviceInterval, last: now}
	s.issued = append(s.issued, IssuedGrant{DeviceCode: code, UserCode: user})
	s.mu.Unlock()
	verify := s.SiteURL() + VerificationPath
	writeJSON(w, http.StatusOK, map[string]any{
		"device_code": code, "user_code": user, "verification_uri": verify,
		"verification_uri_complete": verify + "?code=" + user,
		"expires_in":                int(s.opts.DeviceExpiresIn / time.Second),
		"interval":                  int(math.Ceil(s.opts.DeviceInterval.Seconds())),
	})
}

// deviceToken answers one poll (reference §8): 400 {"error": …} for every
// refusal, 200 {orgId, apiKey} once.
func (s *Server) deviceToken(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DeviceCode string `json:"device_code"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.DeviceCode == "" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request"})
		return
	}
	status, v := s.poll(body.DeviceCode)
	if status == http.StatusBadGateway {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(DefaultHTMLPage))
		return
	}
	writeJSON(w, status, v)
}

func (s *Server) poll(code string) (int, any) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.grants[sha256.Sum256([]byte(code))]
	if g == nil {
		return tokenError("expired_token")
	}
	g.polls++
	if g.state == GrantRedeemed {
		return tokenError("access_denied")
	}
	if g.state == GrantExpired || !now.Before(g.expires) {
		g.state = GrantExpired
		return tokenError("expired_token")
	}
	if len(g.script) > 0 {
		step := g.script[0]
		g.script = g.script[1:]
		g.last = now
		return scripted(g, step)
	}
	if now.Sub(g.last) < g.interval {
		g.interval += 5 * time.Second
		g.last = now
		return tokenError("slow_down")
	}
	g.last = now
	switch g.state {
	case GrantDenied:
		return tokenError("access_denied")
	case GrantApproved:
		g.state = GrantRedeemed
		return http.StatusOK, map[string]any{"orgId": g.orgID, "apiKey": g.apiKey}
	}
	return tokenError("authorization_pending")
}

func scripted(g *grant, step DeviceStep) (int, any) {
	switch step {
	case StepSlowDown:
		g.interval += 5 * time.Second
		return tokenError("slow_down")
	case StepRateLimited:
		return http.StatusTooManyRequests, map[string]any{"error": "rate_limited"}
	case StepBadGateway:
		return http.StatusBadGateway, nil
	}
	return tokenError("authorization_pending")
}

func tokenError(code string) (int, any) {
	return http.StatusBadRequest, map[string]any{"error": code}
}

// randomCode is a 43-character device_code (256 bits, base64url).
func randomCode() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// randomUserCode is a short code such as "KXQW-4821".
func randomUserCode() string {
	const letters = "BCDFGHJKLMNPQRSTVWXZ"
	var b [8]byte
	_, _ = rand.Read(b[:])
	out := make([]byte, 0, 9)
	for i := range 4 {
		out = append(out, letters[int(b[i])%len(letters)])
	}
	out = append(out, '-')
	for i := 4; i < 8; i++ {
		out = append(out, '0'+b[i]%10)
	}
	return string(out)
}
