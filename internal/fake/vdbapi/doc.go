// Package vdbapi is an in-process fake of the Vulnetix VDB v2 API and of the
// vulnetix.com device-login endpoints, for tests and benchmarks of
// `bulwark vdb`. It follows shared/reference/vulnetix-vdb-api.md (§11 is its
// checklist); a fake that accepts anything proves nothing, so it refuses
// like the reference says the real API does, and its own tests check that.
//
// # Use
//
//	fake := vdbapi.Start(t, &vdbapi.Options{Now: clock.Now})
//	key := fake.AddKey(vdbapi.OrgA, "secret")   // "<org>:<hex>"
//	fake.AddBearer(vdbapi.OrgB, "tok-b")
//	cfg.APIBaseURL = fake.APIURL()   // http://127.0.0.1:P; clients append /v2
//	cfg.SiteBaseURL = fake.SiteURL() // http://127.0.0.1:Q; device endpoints under DevicePath
//	// ... run the server under test ...
//	for _, r := range fake.Requests() { r.Method, r.Path, r.Org, r.Contains(mcpToken) }
//
// New starts the fake on three loopback ports (API, site, and an
// "elsewhere" host for off-host redirects) and must be closed; Start closes
// it when the test ends and fails the test when a trip-wire route is called.
//
// # The API host (APIURL)
//
//   - GET /health without auth; everything else under /v2 needs a credential.
//   - The GET routes of reference §2 (the whole §10.2 tool surface, plus
//     /cloud-locators, /vuln/{id}/tree-sitter, /raw/…, /spec). Root-level
//     routes /{eco}/{pkg}[/versions] and /{eco}/{group}/{artifact} match only
//     a known ecosystem ({group}/{artifact} is Maven's group:artifact, or
//     npm's @scope/name); /{package}/vulns and /{package}/versions any name.
//     Routing is on the escaped path; parameters are unescaped after
//     matching. Unknown path → 404; a non-GET method → 405 (and a trip-wire).
//   - Auth (reference §7): "Authorization: ApiKey <org>:<hex>" for keys from
//     AddKey (hex = HMAC-SHA256(secret, org), see APIKeyFor), "Bearer <t>"
//     for tokens from AddBearer. Missing, repeated, unknown-scheme, unknown
//     and doubled-prefix ("ApiKey org:org:hex") credentials → 401 with
//     WWW-Authenticate; an org switched off with SetInactive → 403. Bodies
//     are {"success":false,"error":…}. Request.Org is the org each request
//     resolved to, for per-principal tests.
//   - Rate limit (reference §4), on every authenticated answer:
//     RateLimit-DayLimit, RateLimit-Remaining (both "unlimited" for a
//     negative limit), RateLimit-Reset (epoch seconds of the next UTC
//     midnight), X-VDB-Plan, and X-Softlimits: true with Options.SoftLimits.
//     Each org has a daily quota (Options.DayLimit, SetQuota); when it is used
//     up → 429 with Retry-After in seconds until the reset. Scripted 429s:
//     Fault{Kind: FaultRateLimited, RetryAfter: RetryAfterSeconds |
//     RetryAfterDate | RetryAfterAbsent}, with Reset for a RateLimit-Reset
//     of the test's choosing.
//   - Cache (reference §5): X-Cache MISS the first time a URL (without _t)
//     is served and HIT after; Cache-Control: no-cache on the request forces
//     MISS. The enumeration routes (/ecosystems, /sources, /metric-types,
//     /fix-distributions, /summary, /exploit-sources, /exploit-types) carry
//     an ETag and answer If-None-Match with 304. Cache-Control (R): "public,
//     max-age=3600" on enumerations, "private, no-store" on /vex,
//     "private, max-age=300" elsewhere (SetCacheControl overrides, and can
//     send several header lines);
//     Last-Modified on /vuln/{id}.
//   - Paging (reference §2): limit and offset; default limit 20, max 100
//     (/triage: 50 and 200); a limit outside the range, a negative or
//     non-decimal value, or a repeated key → 400. Lists answer (R)
//     {"success":true,"items":[…],"total","limit","offset","hasMore"}.
//   - Fixtures: Log4Shell (KEV, exploits, PoCs, Maven), XZBackdoor (distro
//     fixes), Spring4Shell; LargeVulnID (2.2 MB) and HugeVulnID (4 MiB, over
//     the 3 MiB line) are generated and streamed; AddVuln and AddBigVuln add
//     more. /kev serves CatalogueSize generated entries besides the KEV
//     records. Unknown id → 404. /vex is org-scoped (SetVEX): two orgs see
//     different answers for the same URL. /gcve/{y}/{m} and
//     /identifiers/{y}/{m} refuse a month after the current UTC month (400
//     "Cannot query future months"); /triage?sort=epss without minEpss >= 0.3
//     or minEpssPercentile → 400. /exploits/{id}/poc and /raw/{source}/{cve}
//     answer application/octet-stream with X-Vulnetix-Sha256 and
//     X-Vulnetix-Original-Url or X-Vulnetix-R2-Path; the raw archive of a
//     generated record is as large as the record (HugeVulnID: 4 MiB) and
//     streamed, without the hash header.
//
// # Trip-wires
//
// Routes bulwark must never call (reference §9) are present and answer as
// the real API plausibly would — a POST /v2/cli.* "write" succeeds,
// GET /v2/auth/api-key discloses a key — so that reaching one is visible
// twice: the request is recorded with Request.TripWire set (TripWires lists
// them), and a Server made by Start fails the test at once. They are: any
// POST, PUT, PATCH or DELETE on the API host; /v2/cli.*; /v2/auth and
// /v2/auth/*; /v2/crit/*; /v1/uploads/*; and POST DevicePath+"/approve" on
// the site (it answers 401: the fake has no browser session). A listed
// route is caught in any spelling a server or CDN might normalise to it:
// percent-encoded ("/v2/%63li.scan"), double-encoded, through dot segments
// ("/v2/vuln/../cli.scan", "/v2/vuln/%2e%2e/auth/api-key"), in any case.
//
// # The site host (SiteURL): device login (reference §8, RFC 8628)
//
//   - POST DevicePath+"/authorize" (JSON body) → 200 {device_code (43
//     characters, 256 bits), user_code ("KXQW-4821"), verification_uri,
//     verification_uri_complete, expires_in, interval}. More than
//     Options.AuthorizeLimit (12) calls in 60 s → 429.
//   - POST DevicePath+"/token" {"device_code"} → 400 {"error":
//     "authorization_pending" | "slow_down" | "expired_token" |
//     "access_denied"}, or 200 {"orgId","apiKey"} once. Polling sooner than
//     the interval after the previous poll (or after /authorize) → slow_down,
//     and the interval grows by 5 s. Past expires_in → expired_token. A
//     redeemed device_code → access_denied; an unknown one → expired_token.
//     Only the SHA-256 of each device_code is used for lookups; Issued keeps
//     the clear codes solely so tests can assert they never leak.
//   - Tests drive the human side with ApproveDevice(userCode, apiKey),
//     DenyDevice, ExpireDevice, and script answers (pending, slow_down, 429,
//     502) with ScriptDevice. DeviceGrants and LastUserCode show the state.
//
// # Hostile switches
//
// AddFault installs a Fault for matching requests (host, method, path
// prefix, a number of times): FaultError (any status, every error-body
// shape of reference §3: standard, error-only, v1 404, empty error,
// non-JSON, HTML; slow with Delay), FaultRateLimited (slow with Delay), FaultHTML, FaultRedirect (same-host
// with a path, off-host with ElsewhereURL), FaultSlow (before the answer),
// FaultSlowBody (a trickled body), FaultEndless (a body that never ends),
// FaultHuge (Size bytes of valid JSON, 60 MiB by default, streamed),
// FaultWide (Size bytes of {"cwe":[{},{},…]}, just under 3 MiB by default,
// streamed: the most values per byte),
// FaultReset (a TCP reset), FaultEchoCredential (a 200 record quoting the
// request's Authorization header and org id), FaultRaw. FailNext(n, status)
// is the short form for "502 once, then success". SetInjection(Injection)
// appends an injected instruction, a closing </untrusted-data> tag, a fake
// opening tag, zero-width and bidi characters to every prose field:
// descriptions, titles, workarounds, guidance, exploit descriptions, PoC
// archives, detection rules.
//
// # Requests
//
// Every request to the three hosts is recorded (Requests): host, method,
// escaped path, raw query, headers with Authorization and Cookie redacted
// to their scheme, the credential scheme, the org it resolved to, the
// status and the body. Request.Contains(secret) searches the unredacted
// request, e.g. to prove the MCP client's own token never went upstream.
//
// # Proof
//
// Each behaviour above has a test of the fake itself: checklist_test.go
// (health, the auth refusal table, the request record, rate-limit headers,
// quota and scripted 429s, cache headers and 304, paging, fixtures, every
// route of the tool surface, binary routes, org-scoped VEX, the big
// records), device_test.go (every grant state, the interval, single use,
// scripts, /approve), hostile_test.go (every trip-wire failing the test,
// every fault kind, the injection). FuzzParsePage and FuzzMatchRoute cover
// the fake's own parsers.
//
// (R) marks the fake's reconstructions where the reference gives no shape
// (record and list bodies, Cache-Control values); flip them after a live
// check. Everything listens on 127.0.0.1 only, or, with Options.InMemory,
// on nothing: Dial connects in memory, for tests inside a testing/synctest
// bubble. The clock is Options.Now.
// Options.Latency delays every API answer by a fixed time on the real clock
// (an internet round trip, for benchmarks); an abandoned request stops
// waiting.
package vdbapi
