package upstream

import (
	"errors"
	"fmt"
	"net/url"
)

// ErrURLRefused reports a request whose URL Options.CheckURL refused; it was
// never sent.
var ErrURLRefused = errors.New("upstream: url refused")

// check runs Options.CheckURL on the URL a request is about to go to. It is
// the last look at a request before any byte of it leaves the process: a
// server whose arguments become path segments refuses here, in one place,
// every route it must never reach, whichever of its tools built the URL.
// The refusal carries the check's reason, never the URL.
func (c *Client) check(u *url.URL) error {
	if c.checkURL == nil {
		return nil
	}
	if err := c.checkURL(u); err != nil {
		return fmt.Errorf("%w: %w", ErrURLRefused, err)
	}
	return nil
}
