package rustpad

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
	"github.com/coder/websocket"
)

// Client is a minimal raw WebSocket user of a Rustpad server, for tests:
// it sends frames as given and returns frames as received.
type Client struct {
	// ID is the connection id from the Identity message.
	ID uint64
	ws *websocket.Conn
}

// Connect opens /api/socket/{padID} on baseURL (http or ws scheme, padID
// used verbatim) and reads the Identity message.
func Connect(ctx context.Context, baseURL, padID string) (*Client, error) {
	ws, _, err := websocket.Dial(ctx, strings.TrimSuffix(baseURL, "/")+"/api/socket/"+padID, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to pad %q: %w", padID, err)
	}
	ws.SetReadLimit(serverReadLimit)
	c := &Client{ws: ws}
	first, err := c.Read(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("reading identity: %w", err)
	}
	var m struct{ Identity *uint64 }
	if err := json.Unmarshal([]byte(first), &m); err != nil || m.Identity == nil {
		c.Close()
		return nil, fmt.Errorf("first message is not Identity: %.80s", first)
	}
	c.ID = *m.Identity
	return c, nil
}

// Send writes one text frame.
func (c *Client) Send(ctx context.Context, frame string) error {
	return c.ws.Write(ctx, websocket.MessageText, []byte(frame))
}

// SendEdit sends Edit{revision, operation}.
func (c *Client) SendEdit(ctx context.Context, revision int, op *ot.Operation) error {
	enc, err := op.MarshalJSON()
	if err != nil {
		return err
	}
	return c.Send(ctx, `{"Edit":{"revision":`+strconv.Itoa(revision)+`,"operation":`+string(enc)+`}}`)
}

// Read returns the next text frame.
func (c *Client) Read(ctx context.Context) (string, error) {
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			return "", err
		}
		if typ == websocket.MessageText {
			return string(b), nil
		}
	}
}

// ReadUntil reads frames until one contains substr and returns it.
func (c *Client) ReadUntil(ctx context.Context, substr string) (string, error) {
	for {
		f, err := c.Read(ctx)
		if err != nil || strings.Contains(f, substr) {
			return f, err
		}
	}
}

// Close closes the connection without a handshake.
func (c *Client) Close() error { return c.ws.CloseNow() }
