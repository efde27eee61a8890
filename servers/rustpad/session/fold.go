package session

import (
	"fmt"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// foldState is what the session knows of the pad, built by folding server
// messages in order. Guarded by Session.mu.
type foldState struct {
	maxUsers, maxDoc int
	deadline         time.Time // for folding long histories

	haveID   bool
	id       uint64
	barrier  bool // our UserCursor echo arrived: the initial state is complete
	synced   bool
	doc      []rune
	spare    []rune
	rev      int
	baseRev  int             // revision when the handshake completed
	log      []*ot.Operation // operations folded since baseRev
	language *string
	users    map[uint64]User     // at most maxUsers, with their names
	others   map[uint64]struct{} // ids of the users past maxUsers, at most maxOthers
	lost     bool                // more users than maxUsers+maxOthers: the count is a lower bound

	awaitAck bool
	ack      *EditResult
	wantLang *string
	langSeen bool
}

func newFoldState(o Options) foldState {
	return foldState{maxUsers: o.MaxUsers, maxDoc: o.MaxDocument, users: map[uint64]User{}, others: map[uint64]struct{}{}}
}

// apply folds one message.
func (f *foldState) apply(m message) error {
	if !f.haveID {
		if m.kind != kindIdentity {
			return protocolErr("first message is not Identity")
		}
		f.haveID, f.id = true, m.id
		return nil
	}
	switch m.kind {
	case kindIdentity:
		return protocolErr("second Identity")
	case kindHistory:
		return f.history(m)
	case kindLanguage:
		f.language = &m.text
		if f.wantLang != nil && *f.wantLang == m.text {
			f.langSeen = true
		}
	case kindUserInfo:
		return f.userInfo(m)
	case kindUserCursor:
		if m.id == f.id {
			f.barrier = true
		}
	}
	return nil
}

// OthersPerUser bounds the users counted without their names: at most
// OthersPerUser × MaxUsers ids are kept past MaxUsers; beyond that the
// count says "at least".
const OthersPerUser = 10

// userInfo tracks a user joining, renaming or leaving. Anyone can open
// connections to a public pad, so the list never fails a call: past
// maxUsers users are only counted, and past the ids' cap only known to
// exist.
func (f *foldState) userInfo(m message) error {
	if m.user == nil {
		delete(f.users, m.id)
		delete(f.others, m.id)
		return nil
	}
	if m.id == f.id {
		return nil // ourselves
	}
	if _, known := f.users[m.id]; known || len(f.users) < f.maxUsers {
		delete(f.others, m.id)
		f.users[m.id] = *m.user
		return nil
	}
	if _, known := f.others[m.id]; !known {
		if len(f.others) >= f.maxUsers*OthersPerUser {
			f.lost = true
			return nil
		}
		f.others[m.id] = struct{}{}
	}
	return nil
}

// history folds the entries of a History the session has not seen yet.
func (f *foldState) history(m message) error {
	if m.start > uint64(f.rev) {
		return historyErr("revision gap: starts at %d, we are at %d", m.start, f.rev)
	}
	skip := f.rev - int(m.start)
	if skip >= len(m.entries) {
		return nil
	}
	for _, e := range m.entries[skip:] {
		if time.Now().After(f.deadline) {
			return fmt.Errorf("%w: folding history (at revision %d)", ErrDeadline, f.rev)
		}
		if err := f.step(e); err != nil {
			return err
		}
	}
	return nil
}

func (f *foldState) step(e entry) error {
	if e.op.TargetLen() > f.maxDoc {
		return fmt.Errorf("%w: revision %d would hold %d code points (cap %d)",
			ErrDocumentTooLarge, f.rev+1, e.op.TargetLen(), f.maxDoc)
	}
	next, err := e.op.ApplyRunes(f.spare, f.doc)
	if err != nil {
		return historyErr("operation of revision %d does not apply: %v", f.rev+1, err)
	}
	f.doc, f.spare = next, f.doc
	f.rev++
	if f.synced {
		f.log = append(f.log, e.op)
	}
	if f.awaitAck && e.id == f.id {
		f.awaitAck = false
		f.ack = &EditResult{Revision: f.rev, Operation: e.op}
	}
	return nil
}
