// Package ot implements the operation type that Rustpad speaks: the
// operational transform of the Rust crate operational-transform 0.6.1,
// written in-house against the vectors of the protocol reference.
//
// An [Operation] walks a whole document and consists of components: retain n,
// delete n and insert text. Every length is counted in Unicode code points
// (Rust chars), never bytes or UTF-16 units.
//
// # Building
//
// [New] returns an empty operation; [Operation.Retain], [Operation.Delete] and
// [Operation.Insert] append components and normalise exactly like the crate's
// builder: zero-length parts are dropped, neighbours of the same kind merge,
// and an insert that follows a delete is placed before it. Invalid input (a
// negative count, text that is not valid UTF-8, a length overflow) does not
// panic; it makes the operation invalid, and [Operation.Err] as well as every
// function that consumes it reports [ErrInvalidOperation].
//
// # Algebra
//
// [Operation.Apply] applies an operation to a text, [Compose] merges two
// consecutive operations and [Transform] rebases two concurrent ones. The
// insert/insert tie is broken by the 0.6.1 rule: the first argument's insert
// goes first. The Rustpad server passes the incoming client edit as the first
// argument, so clients must do the same to agree with it.
// [TransformIndex] moves a cursor offset through an operation the way the
// server moves stored cursors.
//
// # JSON
//
// Operations encode as the crate does: a JSON array whose positive integers
// are retains, negative integers deletes and strings inserts, for example
// [2,"n",-1,2]. Decoding is strict and mirrors what the server accepts:
// floats, exponents, -0, null, lone surrogate escapes and invalid UTF-8 are
// rejected; the decoded components go through the builder, so the result is
// normalised. Decoding hostile input never panics.
//
// The package knows nothing of sessions or sockets.
package ot
