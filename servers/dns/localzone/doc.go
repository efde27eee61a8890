// Package localzone is the zero-configuration provider of bulwark dns: zones
// kept as zone files in a local directory, and an embedded authoritative DNS
// server answering from them.
//
// # Storage
//
// A data directory (DefaultDir: $XDG_DATA_HOME/bulwark/zones or
// ~/.local/share/bulwark/zones) holds, per zone:
//
//   - <zone>.zone, an RFC 1035 master file with $ORIGIN, $TTL and the SOA
//     first, one record a line, a record's comment after it ("; text"),
//     readable by BIND, Knot, NSD and CoreDNS's file plugin. It is the truth
//     about records, TTLs and comments: records of an RRSet whose TTL is nil
//     (the zone default) carry no TTL and inherit $TTL.
//   - <zone>.meta.json, the sidecar: what a zone file cannot say (id,
//     creation time, labels, delete protection, the nameservers assigned at
//     creation, a secondary zone's primaries, per-RRSet labels and change
//     protection, the newest actions). Sidecar entries for RRSets the zone
//     file does not hold are ignored. It is mode 0600: a TSIG key may be in
//     it.
//
// and for the directory .state.json (id counters, the history of deleted
// zones) and .lock. Every write is atomic (temporary file, fsync, rename,
// directory fsync); the order of the files in one mutation is described in
// store_write.go. Processes sharing a directory are serialized by flock(2) on
// .lock (exclusive to write, shared to read); a mutation re-reads its zone
// from disk under the lock, so no other process's change is lost. A zone file
// edited by hand is picked up by the next call; one dropped into the
// directory is adopted (given an id and a sidecar). A zone file that no
// longer parses is reported as 422 invalid_zonefile, naming the line, and is
// never overwritten.
//
// # Semantics
//
// The Provider mirrors the Hetzner Cloud DNS API (reference §3, §5): RRSets
// keyed by name and type, names relative and lower case with "@" for the
// apex, an SOA and NS records made on creation, the SOA serial bumped
// (by the zone's serial policy, always rising) whenever records change, the API's error codes
// as *dns.Error. Where the reference leaves a behaviour open, this package
// chooses:
//
//   - Creating an existing zone or RRSet: 409 uniqueness_error.
//   - A zone's assigned nameservers are Options.Nameservers (default
//     "localhost.", see DefaultNameservers); deleting the SOA or an assigned
//     NS record, or importing a file without them: 422 invalid_input.
//     Creating a zone from a zone file adds a missing SOA or NS.
//   - add_records with a ttl sets the TTL of an existing RRSet too; a value
//     already present is left as it is (a retry is harmless).
//   - remove_records of a value the RRSet lacks: 422 invalid_input.
//   - Change protection does not block label updates.
//   - import_zonefile keeps the labels of RRSets that survive it.
//   - per_page above the maximum (50; 100 for RRSets) is clamped.
//   - An empty mode means primary.
//   - CNAMEs stand alone at their name, with one value, never at the apex.
//   - Values are returned canonical, as miekg/dns prints them: names
//     absolute ("10 mail" becomes "10 mail.example.com."). TXT values
//     containing blanks must be quoted.
//
// Secondary zones are stored with their primary servers and listed, but
// nothing is transferred (no AXFR client): their records are unknown, record
// operations answer 422 incorrect_zone_mode as the API does, and the
// responder does not serve them.
//
// Actions complete before the call returns (status success, progress 100);
// their ids count per data directory.
//
// # Responder
//
// NewResponder and ListenAndServe run an authoritative server for the
// directory's primary zones over UDP and TCP; see Responder for what it
// answers. A bare port binds loopback (ListenAddr), and UDP answers are
// rate-limited per source, slipping to truncated answers (rrl.go).
//
// # Hidden primary
//
// With ResponderOptions.Secondaries the responder is the hidden primary of
// its zones (primary.go, journal.go, notify.go): the listed secondaries,
// and they alone, take the zones by AXFR and IXFR — over TCP, from their
// address, signed with their TSIG key; anyone else is REFUSED and the
// refusal logged. IXFR is served from an in-memory journal of each zone's
// recent changes (up to 64 changes and 200,000 records; after a restart,
// or beyond, the whole zone is sent, as RFC 1995 allows). Each secondary
// hears NOTIFY (RFC 1996, signed with its key) of every new serial: at
// start, after each change made through the Provider, and when a zone file
// changes on disk; it is sent again, each wait twice the one before, until
// answered or five tries have gone by. Answers to signed requests are
// signed; a request with a bad signature gets NOTAUTH.
//
// # DNSSEC
//
// Zones named in Options.DNSSEC are signed online (dnssec.go,
// dnssec_sign.go, dnssec_answer.go): the zone file stays unsigned, and the
// responder signs each version it indexes with the zone's key (ECDSA P-256
// or Ed25519, made on first use and kept in <zone>.dnssec-key, mode 0600),
// adds the DNSKEY, and an NSEC or NSEC3 chain (SHA-1, no salt, no extra
// iterations, no opt-out: RFC 9276). A query with the DO bit gets the
// RRSIGs and the proofs of non-existence (NXDOMAIN, NODATA, wildcards,
// empty non-terminals, insecure delegations); a transfer carries the whole
// signed zone, so secondaries serve it as it is. Signatures are valid for
// two weeks from an hour ago; a signature is reused while more than a week
// is left, so a change re-signs only what changed, and a zone whose
// signatures near that mark gets a new serial and new signatures (the
// secondaries follow). get_zone shows the public key and the DS records
// for the parent; the private key is never printed.
//
// The serial of a changed zone rises by the zone's policy
// (Options.SerialPolicy, Options.ZoneSerialPolicy): SerialDate, YYYYMMDDnn
// (the default), or SerialIncrement.
//
// # Budget
//
// Zone files are read through the zonefile package: every record, and
// every $GENERATE range before expansion, is charged against a budget of
// 200,000 records before de-duplication, for imports and files on disk
// alike. An import or creation parses its file with no store lock held,
// under one of the zonefile package's parse slots, and stops with the
// caller's context.
//
// # Cache
//
// A zone file is parsed once per version: the parsed records, and the
// decoded sidecar, are kept between calls (cache.go), each under the
// identity of the file version it came from (device, inode, size,
// nanosecond modification and change times). Every call stats both files
// and uses a kept version only when its identity is the file's now, so an
// edit in place, a rename over the file, a restored older copy and a
// deletion are seen by the next call, from this process or another. (An
// edit in place that keeps the size and lands within the same tick of the
// kernel's file clock as the version before it keeps both times too: it is
// seen at the next change. Writes through a Provider rename a new file into
// place, with a new inode.) A read that meets a file not kept lets its
// locks go, parses the file under a parse slot and with the caller's
// context, and looks again; a refused file is kept as its refusal, with no
// records. A mutation works on a clone, and keeps the file it wrote.
// Callers get copies: nothing returned reaches what is kept.
//
// The cache holds at most Options.CacheBytes (DefaultCacheBytes, 64 MiB) of
// estimated memory, the least recently used zones going first; a zone
// costing more on its own is parsed on every call. The estimate is charged
// per RRSet and record and checked against the heap by a test. The bound is
// on what is kept between calls: ListZones, which reads every zone, holds
// each zone it parsed until it answers. Resolving a zone by id and listing
// actions read sidecars only.
//
// ListRRSets sorts a kept zone's RRSets once per order it is asked for,
// then builds only the page; a filter costs one pass over the sorted
// RRSets.
package localzone
