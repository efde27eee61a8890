// Package authdns is an in-process fake of an authoritative DNS server that
// takes dynamic updates, for tests of clients such as `bulwark dns
// --provider rfc2136` without BIND or Knot. It follows the RFCs the real
// servers implement, so a client that passes here has met the protocol,
// not the fake; its own tests check it against those rules:
//
//   - RFC 2136 (UPDATE): the zone section (FORMERR, NOTAUTH for a zone it
//     does not serve), prerequisites of §2.4 and §3.2 with their exact
//     rcodes (NXDOMAIN, YXDOMAIN, NXRRSET, YXRRSET, FORMERR for a TTL other
//     than 0, NOTZONE), the update prescan of §3.4.1 and the semantics of
//     §3.4.2: a CNAME added beside other data, or other data beside a
//     CNAME, is ignored; the apex SOA and the apex NS RRset are never
//     deleted; an SOA whose serial is not higher is ignored; a duplicate
//     record replaces the one it duplicates; an added record's TTL becomes
//     its RRset's (RFC 2181 §5.2). All or nothing: a failed prerequisite
//     changes nothing. A change bumps the SOA serial by one.
//   - RFC 8945 (TSIG) with BIND's policy: updates and transfers must be
//     signed with a key the server holds (unsigned: REFUSED; a bad
//     signature or unknown key: NOTAUTH, answered unsigned); answers to a
//     signed request are signed, every message of a transfer included.
//   - RFC 5936 (AXFR): the SOA, every record, the SOA again, over TCP only
//     (UDP: REFUSED), Options.PerMessage records a message.
//   - RFC 1995 (IXFR): the differences since the client's serial when the
//     journal holds them, a single SOA when the client is current, the
//     whole zone (AXFR form) otherwise.
//   - Queries: authoritative answers for exact names; NXDOMAIN and NODATA
//     with the SOA; REFUSED outside its zones. No wildcards, CNAME chains
//     or delegations: the fake serves its clients' reads, not resolvers.
//
// Hostile modes (Modes, in Options or switched by SetModes): Huge streams a zone of that many records without
// holding them; TruncateAfter ends a transfer after that many messages
// without its closing SOA; ForgeTSIG signs answers with a wrong secret;
// Unsigned answers signed requests unsigned. BeforeUpdate runs as each
// UPDATE arrives, before its prerequisites are checked, so a test can
// change the zone between a client's read and its update.
//
// # Use
//
//	srv := authdns.Start(t, authdns.Options{Keys: map[string]string{"k.": secret}})
//	srv.AddZone(zoneText)
//	// a client at srv.Addr() (TCP and UDP on one loopback port)
package authdns
