// Package hetznerapi is an in-process fake of the Hetzner Cloud DNS API (the
// /v1/zones endpoints), for tests and benchmarks of clients such as
// `bulwark dns`. It follows shared/reference/hetzner-cloud-dns-api.md; a
// fake that accepts anything proves nothing, so it validates like the
// reference says the real API does, and its own tests check that.
//
// # Use
//
//	fake := hetznerapi.Start(t, &hetznerapi.Options{ReadOnlyToken: "ro"})
//	fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"})
//	client := newClient(fake.URL(), fake.Token()) // http://127.0.0.1:PORT/v1
//
// New gives a bare http.Handler; Start also runs it on a loopback
// httptest.Server. Seed helpers (AddZone, AddRRSet) and snapshots (Zone,
// RRSet, RRSets, Actions, Requests) work on state directly. Switches:
// ScriptActions / FailNextAction / CompleteActions / FinishAction for the
// action lifecycle, RateLimitNext / SetRateLimitRemaining for 429s, AddFault
// / FailNext / ClearFaults for hostile answers, and StartSink for a second
// server that records whether a redirected client leaked its token.
//
// # Faithful
//
//   - Bearer auth: missing, unknown or non-Bearer → 401 unauthorized; a Read
//     token doing anything but GET → 401 token_readonly (not 403).
//   - Errors in the documented shape {"error":{code,message,details}},
//     details null or {"fields":[{name,messages}]}; statuses per §2.1.
//   - Routing on the escaped path: "%40" is not "@" and "%2A" is not "*"
//     (404 on GET; 422 on add_records, which validates the name).
//   - {z} is a numeric id or the exact name.
//   - Status codes of §4: 201 for creates, actions and both DELETEs; 200
//     for update_records, GETs and PUTs.
//   - Primary zones get an SOA and the three Hetzner NS records;
//     record_count counts records (4 to start); assigned nameservers set.
//   - Mode rules of §5 (422 incorrect_zone_mode); protection (423 protected)
//     for zone delete and for RRSet set/add/remove/update_records, change_ttl,
//     DELETE and any import_zonefile; toggling protection always works.
//   - Validation (422 invalid_input): TTL 60..2147483647, non-empty distinct
//     records in zone-file syntax (parsed with miekg/dns), TXT as quoted
//     strings of ≤255 bytes, the 16 types, lower-case relative names without
//     trailing dot or zone suffix, label keys/values, label selectors, sort
//     fields, page numbers, enum filters. Array query parameters are repeated
//     keys: "type=A,AAAA" or "sort=name,id" is one invalid value.
//   - Lists: page/per_page (defaults 1/25, maxima 50 and 100 for RRSets),
//     full meta.pagination with nulls, Link header with prev/next/last.
//   - Label selectors: k=v, k==v, k!=v, k, !k, k in (…), k notin (…), comma
//     = AND.
//   - Actions: running → success (progress 0 → 100, finished set),
//     resources [{id: zone, type: "zone"}], reachable at /zones/actions/{id}
//     and /zones/{z}/actions/{id}; scripted "error" and "stays running".
//   - RateLimit-Limit/-Remaining/-Reset and X-Correlation-Id on every API
//     answer; a token bucket of RateLimit per hour refilled evenly.
//   - tsig_key is echoed back, so client-side redaction gets tested.
//   - Import: $ORIGIN must be the zone plus a dot, $TTL sets the zone TTL,
//     class IN only, SOA and Hetzner NS required, per-record comments kept,
//     standalone comments dropped, all RRSets replaced; the SOA serial is
//     managed (YYYYMMDDnn, bumped on every record change). Export renders a
//     BIND file that imports back to the same RRSets.
//
// # Choices for the reference's [?] points (flip them after a live check)
//
//   - per_page above the maximum is clamped (meta shows the clamped value);
//     Options.RejectPerPageOverMax answers 422 instead.
//   - RRSet sort fields: id, name and created (creation order).
//   - Duplicate zone name or RRSet name+type → 409 uniqueness_error with
//     details.fields [{name:"name"}].
//   - Creating a zone with both rrsets and zonefile → 422 (field zonefile).
//     An @/NS entry in rrsets adds to the Hetzner NS records; @/SOA → 422.
//   - primary_nameservers port defaults to 53; primary zones show [].
//   - Wildcards "*" and "*.sub" are accepted ("*" only as first label).
//   - "%2A" is not decoded, like "%40".
//   - Removing a Hetzner NS (remove_records, set_records without it, DELETE
//     @/NS) → 422 invalid_input (field records); DELETE @/SOA → 422.
//   - add_records with ttl also changes an existing RRSet's TTL; a value that
//     is already present is ignored; duplicates inside one request → 422.
//   - remove_records of an absent value is a no-op (still an action).
//   - Change protection does not block the label PUT.
//   - update_records with a value the RRSet lacks → 422; it does not bump
//     the serial. set_records on @/SOA takes one record and its serial is
//     replaced by the managed one; add_records on SOA → 422.
//   - Unknown body fields are ignored, like the real API is assumed to do;
//     Requests() keeps every raw body so tests can prove a field never left
//     the client. Bodies over 8 MiB → 400 json_error.
//   - "!=" and "notin" also match objects without the key (Kubernetes
//     semantics); keys under hetzner.cloud/ may be selected, not written.
//   - Zone names must be registrable domains (eTLD+1 per
//     golang.org/x/net/publicsuffix); TLDs not on the list are refused.
//   - An empty name= filter means no filter.
//   - Action commands: create_zone, delete_zone, change_protection,
//     change_ttl, change_primary_nameservers, import_zonefile, create_rrset,
//     delete_rrset, add_rrset_records, remove_rrset_records,
//     set_rrset_records, update_rrset_records, change_rrset_ttl,
//     change_rrset_protection. Clients must treat them as opaque.
//   - Mutations apply at once; an action scripted to fail changes nothing.
//     A zone shows status "updating" while it has a running action.
//   - An action finishes on its Options.ActionPolls-th GET (default 1); a
//     list filtered by id counts as a GET of each listed action (hcloud-go
//     waits that way). GET /actions needs an id filter (else 422).
//   - Import details: an RRSet whose TTL equals the $TTL (or zone TTL) gets
//     ttl null; differing TTLs in one RRSet take the lowest; repeated values
//     merge; labels and protection of replaced RRSets are dropped; $TTL must
//     be plain seconds; directives other than $ORIGIN and $TTL are refused;
//     values pass the same checks as through the API and are stored as
//     miekg/dns renders them (names fully qualified). Values written through
//     the API are stored verbatim; distinctness is exact string equality.
//   - Every API request, failed ones included, spends one rate-limit token.
//     Proxy-like faults (HTML, redirect, oversized, raw) carry no API
//     headers and spend none.
//   - Check order: faults, rate limit, auth, route (404/405), zone (404),
//     mode (422), RRSet (404; add_records creates instead), body and
//     validation (400/422), protection (423), lock (423).
package hetznerapi
