package session

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// State is what the session knows of the pad.
type State struct {
	// Text is the pad's text; Length is its length in code points.
	Text   string
	Length int
	// Revision is the number of operations folded (the server's revision
	// as far as this session has seen).
	Revision int
	// Language is the editor language; LanguageSet is false when none was
	// ever set (Rustpad then shows plain text).
	Language    string
	LanguageSet bool
	// Users are the other connections that sent ClientInfo, by id: at
	// most Options.MaxUsers of them.
	Users []User
	// MoreUsers counts the other users past MaxUsers, whose names are not
	// kept; MoreUsersAtLeast says the count is a lower bound (more joined
	// than OthersPerUser × MaxUsers).
	MoreUsers        int
	MoreUsersAtLeast bool
}

// EditResult is the acknowledgement of an edit.
type EditResult struct {
	// Revision is the revision right after the edit.
	Revision int
	// Operation is the edit as the server stored it (after its transform).
	Operation *ot.Operation
}

// Identity is this connection's id on the pad.
func (s *Session) Identity() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fold.id
}

// State folds what has arrived and returns the current state.
func (s *Session) State() (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.alive(); err != nil {
		return State{}, err
	}
	if err := s.drain(); err != nil {
		return State{}, err
	}
	f := &s.fold
	st := State{Text: string(f.doc), Length: len(f.doc), Revision: f.rev}
	if f.language != nil {
		st.Language, st.LanguageSet = *f.language, true
	}
	for _, id := range slices.Sorted(maps.Keys(f.users)) {
		st.Users = append(st.Users, f.users[id])
	}
	st.MoreUsers, st.MoreUsersAtLeast = len(f.others), f.lost
	return st, nil
}

func (s *Session) alive() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Edit sends op, an operation on the text at revision (a revision this
// session reported, not older than the end of Dial), and waits for the
// server's acknowledgement. op is first transformed over the operations
// folded since revision. Errors before sending (an op that does not fit,
// a document over MaxDocument) leave the session usable; after sending,
// a deadline or lost connection ends the session with an error wrapping
// ErrOutcomeUnknown: the edit may or may not have been applied.
func (s *Session) Edit(ctx context.Context, revision int, op *ot.Operation) (EditResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.alive(); err != nil {
		return EditResult{}, err
	}
	if err := s.drain(); err != nil {
		return EditResult{}, err
	}
	op, err := s.rebase(revision, op)
	if err != nil {
		return EditResult{}, err
	}
	deadline := time.Now().Add(s.opts.AckTimeout)
	if err := s.introduce(ctx, deadline); err != nil {
		return EditResult{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	enc, _ := op.MarshalJSON() // rebase returned a valid operation
	frame := append(strconv.AppendInt([]byte(`{"Edit":{"revision":`), int64(s.fold.rev), 10), `,"operation":`...)
	frame = append(append(frame, enc...), "}}"...)
	f := &s.fold
	f.awaitAck, f.ack = true, nil
	if err := s.write(ctx, deadline, frame); err != nil {
		return EditResult{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	if err := s.await(ctx, "edit acknowledgement", deadline, func() bool { return f.ack != nil }); err != nil {
		return EditResult{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	return *f.ack, nil
}

// rebase transforms op from revision to the current revision.
func (s *Session) rebase(revision int, op *ot.Operation) (*ot.Operation, error) {
	f := &s.fold
	if revision < f.baseRev || revision > f.rev {
		return nil, fmt.Errorf("%w: %d (known: %d to %d)", ErrRevisionNotKnown, revision, f.baseRev, f.rev)
	}
	if err := op.Err(); err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	for _, h := range f.log[revision-f.baseRev:] {
		var err error
		if op, _, err = ot.Transform(op, h); err != nil {
			return nil, fmt.Errorf("edit at revision %d: %w", revision, err)
		}
	}
	if op.BaseLen() != len(f.doc) {
		return nil, fmt.Errorf("edit: %w: base length %d, text %d", ot.ErrLengthMismatch, op.BaseLen(), len(f.doc))
	}
	if op.TargetLen() > f.maxDoc {
		return nil, fmt.Errorf("%w: the edit would make %d code points (cap %d)", ErrDocumentTooLarge, op.TargetLen(), f.maxDoc)
	}
	return op, nil
}

// SetLanguage sets the pad's editor language and waits for the server to
// broadcast it back. After a deadline the outcome is unknown.
func (s *Session) SetLanguage(ctx context.Context, language string) error {
	if !utf8.ValidString(language) {
		return fmt.Errorf("language: %w", ot.ErrInvalidText)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.alive(); err != nil {
		return err
	}
	deadline := time.Now().Add(s.opts.AckTimeout)
	if err := s.introduce(ctx, deadline); err != nil {
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	f := &s.fold
	f.wantLang, f.langSeen = &language, false
	defer func() { f.wantLang = nil }()
	frame := append(ot.AppendJSONString([]byte(`{"SetLanguage":`), language), '}')
	if err := s.write(ctx, deadline, frame); err != nil {
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	if err := s.await(ctx, "language acknowledgement", deadline, func() bool { return f.langSeen }); err != nil {
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	return nil
}

// introduce sends ClientInfo once, before the first write, if Name is set.
func (s *Session) introduce(ctx context.Context, deadline time.Time) error {
	if s.opts.Name == "" || s.introduced {
		return nil
	}
	s.introduced = true
	frame := ot.AppendJSONString([]byte(`{"ClientInfo":{"name":`), s.opts.Name)
	frame = append(strconv.AppendUint(append(frame, `,"hue":`...), uint64(s.opts.Hue), 10), "}}"...)
	return s.write(ctx, deadline, frame)
}
