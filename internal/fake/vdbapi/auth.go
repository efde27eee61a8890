package vdbapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// Example org ids for tests (any UUID works).
const (
	OrgA = "11111111-1111-4111-8111-111111111111"
	OrgB = "22222222-2222-4222-8222-222222222222"
)

// Plans (X-VDB-Plan).
const (
	PlanCommunity  = "community"
	PlanPro        = "pro"
	PlanTeams      = "teams"
	PlanEnterprise = "enterprise"
)

// org is one organisation: its plan, status and quota.
type org struct {
	id        string
	plan      string
	inactive  bool
	limit     int // <0 unlimited
	remaining int
	day       string            // UTC date the remaining count belongs to
	vex       map[string]string // upper-case vuln id -> VEX status (org-scoped)
}

// orgLocked returns (creating) an org; s.mu held.
func (s *Server) orgLocked(id string) *org {
	o := s.orgs[id]
	if o == nil {
		o = &org{id: id, plan: PlanPro, limit: s.opts.DayLimit, remaining: s.opts.DayLimit}
		s.orgs[id] = o
	}
	return o
}

// APIKeyFor computes the ApiKey digest the real API expects for an org
// secret: hex(HMAC-SHA256(secret, orgID)) (reference §7).
func APIKeyFor(orgID, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(orgID))
	return hex.EncodeToString(m.Sum(nil))
}

// AddKey provisions an ApiKey credential for org (created with plan "pro"
// if new) and returns its value "<org>:<hex>", as the console shows it: the
// header is "Authorization: ApiKey " + the value. A client that prefixes the
// org again ("ApiKey org:org:hex") gets 401.
func (s *Server) AddKey(orgID, secret string) string {
	v := orgID + ":" + APIKeyFor(orgID, secret)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orgLocked(orgID)
	s.keys[v] = orgID
	return v
}

// AddBearer provisions a Bearer token for org: "Authorization: Bearer " +
// token. The token carries no org; the fake resolves it, like the real API.
func (s *Server) AddBearer(orgID, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orgLocked(orgID)
	s.bearers[token] = orgID
}

// SetPlan sets an org's plan (X-VDB-Plan).
func (s *Server) SetPlan(orgID, plan string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orgLocked(orgID).plan = plan
}

// SetInactive makes every request of org answer 403 ("organisation
// inactive") while inactive is true.
func (s *Server) SetInactive(orgID string, inactive bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orgLocked(orgID).inactive = inactive
}

// SetQuota sets an org's daily limit and what remains today; a negative
// limit is "unlimited". Remaining 0 makes the next request 429.
func (s *Server) SetQuota(orgID string, limit, remaining int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.orgLocked(orgID)
	o.limit, o.remaining, o.day = limit, remaining, s.now().UTC().Format(time.DateOnly)
}

// authenticate resolves the Authorization header to an org; s.mu held.
// It returns the status and message of a refusal (401 or 403).
func (s *Server) authenticateLocked(r *http.Request) (*org, int, string) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return nil, http.StatusUnauthorized, "Missing Authorization header"
	}
	if len(vals) > 1 {
		return nil, http.StatusUnauthorized, "Malformed Authorization header"
	}
	scheme, cred, ok := strings.Cut(vals[0], " ")
	if !ok || cred == "" {
		return nil, http.StatusUnauthorized, "Malformed Authorization header"
	}
	var id string
	switch scheme {
	case "ApiKey":
		if strings.Count(cred, ":") != 1 {
			return nil, http.StatusUnauthorized, "Malformed ApiKey: expected <orgId>:<key>"
		}
		id = s.keys[cred]
	case "Bearer":
		id = s.bearers[cred]
	default:
		return nil, http.StatusUnauthorized, "Unsupported authorization scheme"
	}
	if id == "" {
		return nil, http.StatusUnauthorized, "Invalid or expired credentials"
	}
	o := s.orgLocked(id)
	if o.inactive {
		return o, http.StatusForbidden, "Organization is inactive"
	}
	return o, 0, ""
}

// orgOfKey returns the org of a provisioned ApiKey value ("" if none).
func (s *Server) orgOfKey(apiKey string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[apiKey]
}
