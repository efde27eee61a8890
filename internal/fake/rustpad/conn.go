package rustpad

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// serverReadLimit mirrors tungstenite's default maximum message size.
const serverReadLimit = 64 << 20

// conn is one socket being served.
type conn struct {
	ws      *websocket.Conn
	pad     *pad
	me      *member
	h       Hostile
	rev     int
	flooded bool
}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request, id string) {
	h := s.currentHostile()
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(serverReadLimit)
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	p := s.pad(id, true)
	c := &conn{ws: ws, pad: p, me: p.join(func() { ws.CloseNow() }), h: h}
	defer p.leave(c.me)
	c.run(ctx)
}

// run sends the handshake, then serves until the client or server leaves.
func (c *conn) run(ctx context.Context) {
	if c.h.Stall == StallBeforeIdentity {
		c.discard(ctx)
		return
	}
	if !c.handshake(ctx) {
		return
	}
	if c.h.Chatter {
		c.chatter(ctx)
		return
	}
	msgs := make(chan []byte)
	readDone := make(chan struct{})
	rctx, stop := context.WithCancel(ctx)
	go c.readLoop(rctx, msgs, readDone)
	defer func() { stop(); c.ws.CloseNow(); <-readDone }()
	c.serve(rctx, msgs)
}

// handshake sends Identity, the hostile injections and the initial burst.
func (c *conn) handshake(ctx context.Context) bool {
	if !c.send(ctx, identityMsg(c.me.id)) {
		return false
	}
	for _, f := range c.h.injections() {
		if !c.send(ctx, f) {
			return false
		}
	}
	switch {
	case c.h.CloseAfterIdentity:
		return false
	case c.h.Stall == StallAfterIdentity:
		c.discard(ctx)
		return false
	}
	if !sleep(ctx, c.h.BurstDelay) {
		return false
	}
	b := c.pad.burst(c.h.Malformed == WellFormed)
	c.rev = b.revision
	for _, f := range append(b.frames, c.h.invented()...) {
		if !c.send(ctx, f) {
			return false
		}
	}
	return true
}

func (c *conn) readLoop(ctx context.Context, msgs chan<- []byte, done chan<- struct{}) {
	defer close(done)
	defer close(msgs)
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			continue // binary frames are ignored
		}
		select {
		case msgs <- b:
		case <-ctx.Done():
			return
		}
	}
}

// serve is the connection loop of §6 step 3.
func (c *conn) serve(ctx context.Context, msgs <-chan []byte) {
	for {
		if !c.catchUp(ctx) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.me.dropped:
			return
		case <-c.me.wake:
		case m := <-c.me.meta:
			if !c.send(ctx, m) {
				return
			}
		case b, ok := <-msgs:
			if !ok || !c.handle(ctx, b) {
				return
			}
		}
	}
}

func (c *conn) catchUp(ctx context.Context) bool {
	if c.h.WithholdEcho {
		return true
	}
	msg, rev := c.pad.since(c.rev)
	if msg == nil {
		return true
	}
	c.rev = rev
	return c.send(ctx, msg)
}

// handle applies one client message; false drops the connection.
func (c *conn) handle(ctx context.Context, frame []byte) bool {
	m, err := decodeClient(frame)
	if err != nil {
		return false
	}
	switch m.kind {
	case "Edit":
		if c.pad.edit(c.me.id, m.revision, m.op) != nil {
			return false
		}
	case "SetLanguage":
		c.pad.setLanguage(m.language)
	case "ClientInfo":
		c.pad.setUser(c.me.id, m.user)
	case "CursorData":
		c.pad.setCursor(c.me.id, m.cursor)
	}
	return c.flood(ctx)
}

// flood sends the hostile flood once, after the reply to the first message.
func (c *conn) flood(ctx context.Context) bool {
	if c.h.Flood <= 0 || c.flooded {
		return true
	}
	c.flooded = true
	for drained := false; !drained; {
		select {
		case m := <-c.me.meta:
			if !c.send(ctx, m) {
				return false
			}
		default:
			drained = true
		}
	}
	for i := range c.h.Flood {
		if !c.send(ctx, floodMsg(i)) {
			return false
		}
	}
	return true
}

// discard reads and ignores client messages until the connection ends.
func (c *conn) discard(ctx context.Context) {
	for {
		if _, _, err := c.ws.Read(ctx); err != nil {
			return
		}
	}
}

// chatter writes forever while ignoring everything the client sends.
func (c *conn) chatter(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); defer cancel(); c.discard(ctx) }()
	defer func() { cancel(); <-done }()
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !c.send(ctx, floodMsg(i)) {
				return
			}
		}
	}
}

func (c *conn) send(ctx context.Context, msg []byte) bool {
	return c.ws.Write(ctx, websocket.MessageText, msg) == nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
