package client

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// ErrPermissionDenied is returned (wrapped) for a request the caller's
// role does not allow: refused by the server (a *Error with code
// PERMISSION_DENIED, which unwraps to it) or by the NATS server's subject
// permissions (docs/server.md, "Users and roles"). Check it with
// errors.Is.
var ErrPermissionDenied = wire.ErrPermissionDenied

// deniedPoll is how often guard asks the NATS server, with a round trip,
// whether it refused the request's publication while no answer came.
const deniedPoll = 200 * time.Millisecond

// guard runs do (a request on a subject starting with prefix) and ends it
// with ErrPermissionDenied once the NATS server has refused a publication
// to such a subject. The NATS server reports a refused publication on the
// connection (its last error), not to the request, which would only time
// out: a round trip (Flush) after the request tells whether it was
// refused, so guard flushes every deniedPoll while do has not returned
// (not at once: a request answered within deniedPoll, nearly every one,
// costs no extra round trip). A connection that was refused a subject once is
// refused it for good (permissions do not change on a connection).
func (c *Client) guard(ctx context.Context, prefix string, do func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- do(ctx) }()
	tick := time.NewTimer(deniedPoll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil && c.refused(prefix) {
				return fmt.Errorf("%w: %v", ErrPermissionDenied, c.nc.LastError())
			}
			return err
		case <-tick.C:
			fctx, fcancel := context.WithTimeout(ctx, deniedPoll)
			_ = c.nc.FlushWithContext(fctx)
			fcancel()
			if c.refused(prefix) {
				cancel()
				<-done
				return fmt.Errorf("%w: %v", ErrPermissionDenied, c.nc.LastError())
			}
			tick.Reset(deniedPoll)
		}
	}
}

// refused reports whether the connection's last error is the NATS
// server's refusal of a publication to a subject starting with prefix.
func (c *Client) refused(prefix string) bool {
	err := c.nc.LastError()
	return err != nil && strings.Contains(err.Error(), `Publish to "`+prefix)
}

// refusedSubscription reports whether the connection's last error is the
// NATS server's refusal of a subscription to subject.
func (c *Client) refusedSubscription(subject string) bool {
	err := c.nc.LastError()
	return err != nil && strings.Contains(err.Error(), `Subscription to "`+subject+`"`)
}
