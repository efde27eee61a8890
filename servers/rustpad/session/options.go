package session

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Sentinel errors; every error a Session returns wraps one of them (or the
// caller's context error).
var (
	ErrInvalidPadID     = errors.New("invalid pad id")
	ErrInvalidURL       = errors.New("invalid rustpad url")
	ErrDial             = errors.New("connecting to rustpad failed")
	ErrProtocol         = errors.New("rustpad protocol violation")
	ErrMalformedHistory = errors.New("malformed history")
	ErrDocumentTooLarge = errors.New("document too large")
	ErrQueueOverflow    = errors.New("inbound queue overflow")
	ErrFrameTooLarge    = errors.New("inbound frame too large")
	ErrDeadline         = errors.New("deadline exceeded")
	ErrClosed           = errors.New("session closed")
	ErrOutcomeUnknown   = errors.New("edit outcome unknown")
	ErrRevisionNotKnown = errors.New("revision not known to this session")
)

// Defaults, from the protocol reference (§8 limits, §13 rustpad-mcp caps).
const (
	DefaultHandshakeTimeout = 20 * time.Second
	DefaultAckTimeout       = 15 * time.Second
	DefaultReadTimeout      = 15 * time.Second
	DefaultMaxQueue         = 1000
	DefaultMaxQueueBytes    = 64 << 20
	DefaultMaxFrameBytes    = 16 << 20
	DefaultMaxUsers         = 200
	DefaultMaxDocument      = 256 * 1024
)

// Options configures a Session. The zero value (or nil) uses the defaults.
type Options struct {
	// HandshakeTimeout bounds Dial as a whole: upgrade, Identity, initial
	// burst and barrier echo, including folding the first History.
	HandshakeTimeout time.Duration
	// AckTimeout bounds the wait for the echo of an Edit or SetLanguage.
	AckTimeout time.Duration
	// ReadTimeout is the longest silence accepted while waiting for a message.
	ReadTimeout time.Duration
	// MaxQueue caps inbound messages received but not yet folded.
	MaxQueue int
	// MaxQueueBytes caps the frame bytes of those messages.
	MaxQueueBytes int64
	// MaxFrameBytes is the WebSocket read limit per message (the first
	// History replays the whole operation log, ~40 bytes per keystroke).
	MaxFrameBytes int64
	// MaxUsers caps the other users whose names are kept from UserInfo
	// messages; past it users are only counted (State.MoreUsers), never
	// refused.
	MaxUsers int
	// MaxDocument caps the document in code points (the server's cap is
	// 262,144); a History that would exceed it ends the session.
	MaxDocument int
	// Name, if set, is sent once as ClientInfo (hue Hue) before the first
	// write, which makes this client visible to human editors.
	Name string
	Hue  uint32
	// HTTPClient performs the WebSocket upgrade. Redirects are refused even
	// if it allows them. Nil means a client on a clone of
	// http.DefaultTransport with TLSConfig applied.
	HTTPClient *http.Client
	// TLSConfig, used only when HTTPClient is nil, sets TLS for this
	// connection only (for example a private CA, or InsecureSkipVerify when
	// the operator asked for it).
	TLSConfig *tls.Config
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	setDefault(&c.HandshakeTimeout, DefaultHandshakeTimeout)
	setDefault(&c.AckTimeout, DefaultAckTimeout)
	setDefault(&c.ReadTimeout, DefaultReadTimeout)
	setDefault(&c.MaxQueue, DefaultMaxQueue)
	setDefault(&c.MaxQueueBytes, DefaultMaxQueueBytes)
	setDefault(&c.MaxFrameBytes, DefaultMaxFrameBytes)
	setDefault(&c.MaxUsers, DefaultMaxUsers)
	setDefault(&c.MaxDocument, DefaultMaxDocument)
	c.HTTPClient = c.httpClient()
	return c
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// httpClient returns a copy of the configured client that refuses redirects.
func (o *Options) httpClient() *http.Client {
	var c http.Client
	if o.HTTPClient != nil {
		c = *o.HTTPClient
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if o.TLSConfig != nil {
			t.TLSClientConfig = o.TLSConfig.Clone()
		}
		c.Transport = t
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error {
		return errors.New("redirects are not followed")
	}
	return &c
}

// ValidatePadID checks a pad id against the rustpad-mcp rule: 1–100
// characters of [A-Za-z0-9._-], and neither "." nor "..".
func ValidatePadID(id string) error {
	if id == "" || len(id) > 100 || id == "." || id == ".." {
		return fmt.Errorf("%w: must be 1-100 characters and not . or ..", ErrInvalidPadID)
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: only A-Z a-z 0-9 . _ - are allowed", ErrInvalidPadID)
		}
	}
	return nil
}

// SocketURL returns the WebSocket URL of a pad: base's scheme mapped
// http→ws and https→wss, its path prefix kept, then /api/socket/<id>.
// base must be http(s) without credentials, query or fragment.
func SocketURL(base, padID string) (string, error) {
	if err := ValidatePadID(padID); err != nil {
		return "", err
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("%w: want http(s)://host[:port][/prefix]", ErrInvalidURL)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("%w: scheme must be http or https", ErrInvalidURL)
	}
	prefix := strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + prefix + "/api/socket/" + padID, nil
}
