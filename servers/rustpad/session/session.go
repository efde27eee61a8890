package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
	"github.com/coder/websocket"
)

// User is another connection that introduced itself with ClientInfo.
// Name is chosen by an arbitrary client: untrusted text.
type User struct {
	ID   uint64
	Name string
	Hue  uint32
}

// Session is one connection to one pad. Create it with [Dial]; always
// [Session.Close] it.
type Session struct {
	opts     Options
	ws       *websocket.Conn
	cancel   context.CancelFunc
	queue    chan message
	queued   atomic.Int64 // bytes in queue
	done     chan struct{}
	readDone chan struct{}
	failOnce sync.Once
	err      error // set once, before done is closed

	mu         sync.Mutex // serialises operations; guards everything below
	fold       foldState
	introduced bool
}

// Dial connects to the pad padID of the Rustpad server at baseURL
// (http(s)://host[:port][/prefix]) and runs the connect sequence: upgrade,
// Identity, barrier, initial burst. When it returns, State is the server's
// state as of the barrier. A failure at any step closes the connection.
func Dial(ctx context.Context, baseURL, padID string, opts *Options) (*Session, error) {
	o := opts.withDefaults()
	if !utf8.ValidString(o.Name) {
		return nil, fmt.Errorf("client name: %w", ot.ErrInvalidText)
	}
	u, err := SocketURL(baseURL, padID)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(o.HandshakeTimeout)
	hctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	ws, _, err := websocket.Dial(hctx, u, &websocket.DialOptions{
		HTTPClient:      o.HTTPClient,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, dialError(ctx, hctx, err)
	}
	ws.SetReadLimit(o.MaxFrameBytes)
	s := start(ws, o)
	if err := s.handshake(ctx, deadline); err != nil {
		s.Close()
		return nil, fmt.Errorf("handshake with pad %s: %w", padID, err)
	}
	return s, nil
}

func dialError(ctx, hctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("connecting: %w", ctx.Err())
	case hctx.Err() != nil:
		return fmt.Errorf("%w: connecting (handshake timeout)", ErrDeadline)
	}
	return fmt.Errorf("%w: %v", ErrDial, err)
}

func start(ws *websocket.Conn, o Options) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		opts:     o,
		ws:       ws,
		cancel:   cancel,
		queue:    make(chan message, o.MaxQueue),
		done:     make(chan struct{}),
		readDone: make(chan struct{}),
		fold:     newFoldState(o),
	}
	go s.readLoop(ctx)
	return s
}

// handshake waits for Identity, sends the barrier and folds until its echo.
func (s *Session) handshake(ctx context.Context, deadline time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.fold
	if err := s.await(ctx, "identity", deadline, func() bool { return f.haveID }); err != nil {
		return err
	}
	if err := s.write(ctx, deadline, []byte(`{"CursorData":{"cursors":[],"selections":[]}}`)); err != nil {
		return err
	}
	if err := s.await(ctx, "initial state", deadline, func() bool { return f.barrier }); err != nil {
		return err
	}
	f.synced, f.baseRev = true, f.rev
	return nil
}

// readLoop reads, decodes and queues frames until the session ends.
func (s *Session) readLoop(ctx context.Context) {
	defer close(s.readDone)
	for {
		typ, b, err := s.ws.Read(ctx)
		if err != nil {
			s.fail(readError(ctx, err))
			return
		}
		if typ != websocket.MessageText {
			s.fail(protocolErr("binary frame"))
			return
		}
		m, err := decode(b)
		if err != nil {
			s.fail(err)
			return
		}
		if s.queued.Add(m.size) > s.opts.MaxQueueBytes {
			s.fail(fmt.Errorf("%w: more than %d bytes waiting", ErrQueueOverflow, s.opts.MaxQueueBytes))
			return
		}
		select {
		case s.queue <- m:
		default:
			s.fail(fmt.Errorf("%w: more than %d messages waiting", ErrQueueOverflow, s.opts.MaxQueue))
			return
		}
	}
}

func readError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ErrClosed
	case errors.Is(err, websocket.ErrMessageTooBig):
		return fmt.Errorf("%w: %v", ErrFrameTooLarge, err)
	}
	return fmt.Errorf("%w: connection ended by the server: %v", ErrClosed, err)
}

// fail ends the session with err (the first error wins) and returns the
// session's error.
func (s *Session) fail(err error) error {
	s.failOnce.Do(func() {
		s.err = err
		close(s.done)
		s.cancel()
		s.ws.CloseNow()
	})
	return s.err
}

// await folds queued messages until cond holds, the deadline passes, the
// server is silent for ReadTimeout, ctx ends or the session fails. Any
// failure ends the session. Caller holds mu.
func (s *Session) await(ctx context.Context, what string, deadline time.Time, cond func() bool) error {
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	s.fold.deadline = deadline
	limit := time.NewTimer(time.Until(deadline))
	defer limit.Stop()
	idle := time.NewTimer(s.opts.ReadTimeout)
	defer idle.Stop()
	for !cond() {
		select {
		case m := <-s.queue:
			if err := s.take(m); err != nil {
				return err
			}
			idle.Reset(s.opts.ReadTimeout)
		case <-s.done:
			if err := s.drain(); err == nil && cond() {
				return nil
			}
			return s.err
		case <-ctx.Done():
			return s.fail(fmt.Errorf("waiting for %s: %w", what, ctx.Err()))
		case <-limit.C:
			return s.fail(fmt.Errorf("%w: waiting for %s", ErrDeadline, what))
		case <-idle.C:
			return s.fail(fmt.Errorf("%w: no message for %v while waiting for %s", ErrDeadline, s.opts.ReadTimeout, what))
		}
	}
	return nil
}

// take folds one dequeued message; a failure ends the session.
func (s *Session) take(m message) error {
	s.queued.Add(-m.size)
	if err := s.fold.apply(m); err != nil {
		return s.fail(err)
	}
	return nil
}

// drain folds what is queued without waiting. Caller holds mu.
func (s *Session) drain() error {
	s.fold.deadline = time.Now().Add(s.opts.ReadTimeout)
	for {
		select {
		case m := <-s.queue:
			if err := s.take(m); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// write sends one frame, bounded by deadline; a failure ends the session.
func (s *Session) write(ctx context.Context, deadline time.Time, frame []byte) error {
	select {
	case <-s.done:
		return s.err
	default:
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	err := s.ws.Write(wctx, websocket.MessageText, frame)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return s.fail(fmt.Errorf("sending: %w", ctx.Err()))
	case wctx.Err() != nil:
		return s.fail(fmt.Errorf("%w: sending", ErrDeadline))
	}
	// The reader usually knows why the connection died (a frame over the
	// limit, say): let it record its error first.
	s.ws.CloseNow()
	<-s.readDone
	return s.fail(fmt.Errorf("%w: sending: %v", ErrClosed, err))
}

// Done is closed when the session has ended (error, deadline or Close).
func (s *Session) Done() <-chan struct{} { return s.done }

// Err returns why the session ended, or nil while it is alive. After Close
// it wraps ErrClosed unless an earlier error ended the session.
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close closes the connection and waits for the reader goroutine to end.
// It is idempotent and always returns nil.
func (s *Session) Close() error {
	s.fail(ErrClosed)
	<-s.readDone
	return nil
}
