package rustpad

import (
	"math"
	"sync"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// MaxDocument is the server's document cap in code points, checked after
// transform; exactly this many is allowed.
const MaxDocument = 256 * 1024

// metaBacklog is the depth of each connection's metadata broadcast queue.
const metaBacklog = 16

// RestoredID is the author id of the operation a restored pad starts with.
const RestoredID = math.MaxUint64

type entry struct {
	id uint64
	op *ot.Operation
}

type userInfo struct {
	name string
	hue  uint32
}

type cursorData struct {
	cursors    []uint32
	selections [][2]uint32
}

// member is a connection's registration in its pad.
type member struct {
	id      uint64
	wake    chan struct{} // revision grew
	meta    chan []byte   // metadata broadcasts
	dropped chan struct{} // closed when the connection fell behind
	kill    func()        // ends the socket, unblocking a pending write
	once    sync.Once
}

func (m *member) drop() {
	m.once.Do(func() {
		close(m.dropped)
		if m.kill != nil {
			m.kill()
		}
	})
}

// pad is one document. All fields are guarded by mu.
type pad struct {
	mu       sync.Mutex
	ops      []entry
	text     string
	language *string
	users    map[uint64]userInfo
	cursors  map[uint64]cursorData
	members  map[uint64]*member
	nextID   uint64
}

func newPad() *pad {
	return &pad{users: map[uint64]userInfo{}, cursors: map[uint64]cursorData{}, members: map[uint64]*member{}}
}

func (p *pad) join(kill func()) *member {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := &member{
		id:      p.nextID,
		wake:    make(chan struct{}, 1),
		meta:    make(chan []byte, metaBacklog),
		dropped: make(chan struct{}),
		kill:    kill,
	}
	p.nextID++
	p.members[m.id] = m
	return m
}

// leave removes the connection and tells the others (§6 step 4).
func (p *pad) leave(m *member) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.members, m.id)
	delete(p.users, m.id)
	delete(p.cursors, m.id)
	p.broadcast(userInfoMsg(m.id, nil))
}

// burst is the initial state sent after Identity, from one consistent read.
type burst struct {
	revision int
	frames   [][]byte
}

func (p *pad) burst(withHistory bool) burst {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := burst{revision: len(p.ops)}
	if withHistory && len(p.ops) > 0 {
		b.frames = append(b.frames, historyMsg(0, p.ops))
	}
	if p.language != nil {
		b.frames = append(b.frames, languageMsg(*p.language))
	}
	for id, u := range p.users {
		b.frames = append(b.frames, userInfoMsg(id, &u))
	}
	for id, c := range p.cursors {
		b.frames = append(b.frames, userCursorMsg(id, c))
	}
	return b
}

// since returns the catch-up History for a connection at revision rev, or
// nil when it is current.
func (p *pad) since(rev int) ([]byte, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rev >= len(p.ops) {
		return nil, rev
	}
	return historyMsg(rev, p.ops[rev:]), len(p.ops)
}

// edit runs the server's edit pipeline (§5); an error drops the sender.
func (p *pad) edit(id, revision uint64, op *ot.Operation) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if revision > uint64(len(p.ops)) {
		return reject("revision %d ahead of %d", revision, len(p.ops))
	}
	for _, h := range p.ops[revision:] {
		var err error
		if op, _, err = ot.Transform(op, h.op); err != nil {
			return reject("transform: %v", err)
		}
	}
	if op.TargetLen() > MaxDocument {
		return reject("document too large")
	}
	text, err := op.Apply(p.text)
	if err != nil {
		return reject("apply: %v", err)
	}
	p.text = text
	for cid, c := range p.cursors {
		p.cursors[cid] = moveCursors(c, op)
	}
	p.ops = append(p.ops, entry{id: id, op: op})
	for _, m := range p.members {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

func moveCursors(c cursorData, op *ot.Operation) cursorData {
	out := cursorData{cursors: make([]uint32, len(c.cursors)), selections: make([][2]uint32, len(c.selections))}
	for i, x := range c.cursors {
		out.cursors[i] = uint32(ot.TransformIndex(op, int(x)))
	}
	for i, s := range c.selections {
		out.selections[i] = [2]uint32{uint32(ot.TransformIndex(op, int(s[0]))), uint32(ot.TransformIndex(op, int(s[1])))}
	}
	return out
}

func (p *pad) setLanguage(lang string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.language = &lang
	p.broadcast(languageMsg(lang))
}

func (p *pad) setUser(id uint64, u userInfo) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.users[id] = u
	p.broadcast(userInfoMsg(id, &u))
}

func (p *pad) setCursor(id uint64, c cursorData) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cursors[id] = c
	p.broadcast(userCursorMsg(id, c))
}

// broadcast queues msg for every connection; one whose queue is full is
// dropped, like a tokio broadcast receiver that lagged. Caller holds mu.
func (p *pad) broadcast(msg []byte) {
	for _, m := range p.members {
		select {
		case m.meta <- msg:
		default:
			m.drop()
		}
	}
}

func (p *pad) snapshot() (string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.text, len(p.ops)
}

func (p *pad) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.members)
}
