// Package rustpad is a faithful in-process fake of the Rustpad server
// (ekzhang/rustpad at 54e4a93, operational-transform 0.6.1), for tests and
// benchmarks. It follows shared/reference/rustpad-protocol.md:
//
//   - routes /api/socket/{id} (WebSocket), /api/text/{id} and /api/stats, with
//     the raw path segment as the pad id, any method on the HTTP routes, and
//     404 for empty or extra segments (§2);
//   - the ClientMsg/ServerMsg JSON messages with the server's strict decoding:
//     anything it would reject (unknown variant, missing field, float, -0,
//     null array, lone surrogate escape, a second key) silently drops the
//     connection and broadcasts UserInfo{id, null} (§3, §10);
//   - per pad: the operation log with author ids, text, language, users,
//     cursors and a connection-id counter from 0; the edit pipeline with the
//     0.6.1 transform (incoming edit first), the 262,144 code point cap,
//     cursor moves, and catch-up History to every connection including the
//     sender; metadata broadcasts 16 deep that drop laggards (§5, §6, §8);
//   - the initial burst exactly as §6: Identity, History only if there is an
//     operation, Language only if one was set, then users and cursors — so a
//     never-edited pad sends no History (§7).
//
// [Server.Restore] creates a pad as if loaded from the database (one
// operation with id u64::MAX). Expiry and the persister are not modelled.
//
// Hostile behaviour is switched on with [Server.SetHostile], which applies to
// connections opened afterwards: stalls, a close mid-handshake, floods,
// endless chatter, giant frames, malformed History messages, a huge user list,
// a delayed burst and a withheld edit echo.
//
// [Connect] returns a minimal raw client, used to simulate a second user.
//
// Everything listens on 127.0.0.1 only.
package rustpad
