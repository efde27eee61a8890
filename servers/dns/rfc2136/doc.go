// Package rfc2136 implements dns.Provider against any authoritative DNS
// server that takes dynamic updates: BIND, Knot, PowerDNS, Windows DNS and
// the hosted services that speak RFC 2136. It serves the core tools only
// (zones and RRSets read, record changes): the protocol has no zone
// creation, labels, comments, protection or action log, so the capability
// interfaces are not implemented and those tools are not registered.
//
// # Reads
//
// The protocol has no zone listing: the zones are the ones configured
// (Options.Zones); a zone's id is a hash of its name, stable across
// restarts and orderings of the list. A read asks the server for the
// zone's SOA; when the serial is the one read before, the kept copy
// answers; otherwise the zone is transferred, by IXFR from the kept serial
// (RFC 1995) when there is one, else by AXFR (RFC 5936). A transfer is
// charged against the local store's zone-file budget as it arrives — at
// most zonefile.MaxRecords records and zonefile.MaxBytes bytes on the wire —
// and stops when the caller's context ends; it takes one of the zonefile
// package's parse slots, so concurrent transfers are bounded. A transfer
// that is refused, over budget, truncated (no closing SOA), inconsistent
// (an IXFR that deletes what the zone does not hold) or badly signed
// leaves the kept copy as it was. Every record from the server is
// untrusted; the tools' envelope marks it so.
//
// Only record types of the model (dns.RRSetTypes) are listed as RRSets;
// export_zonefile gives every record. Every RRSet has its own TTL (a zone
// here has no default); Zone.TTL is Options.DefaultTTL, the TTL of records
// added without one.
//
// # Writes
//
// Each change is one UPDATE message (RFC 2136) built from the zone as just
// read, with prerequisites that make it exact: the RRSet exists with
// exactly the records read (RFC 2136 §2.4.2), or does not exist (§2.4.3).
// A server that finds the RRSet changed since it was read answers NXRRSET
// or YXRRSET, and the tool fails with conflict: nothing is overwritten.
// Prerequisites compare record data, not TTLs. A CNAME is created only
// where the name holds nothing (§2.4.5), and other data only where the
// name holds no CNAME, so the server never silently ignores part of an
// update (§3.4.2.2). The apex SOA and NS records, which servers manage and
// RFC 2136 never deletes, are refused as targets of a change that would
// delete them.
//
// # Security
//
// Every message is signed with the TSIG key (HMAC-SHA256 or -SHA512) and
// goes over TCP. Every answer must carry a valid signature of that key —
// every message of a transfer included — or it is dropped as
// bad_signature; an answer that says the server did not accept the key is
// tsig_rejected. The key's secret is never printed.
package rfc2136
