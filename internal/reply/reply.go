// Package reply carries answers of any size over NATS request/reply.
//
// A NATS message is at most the server's max payload (1 MB by default),
// and a Respond larger than that fails: before this package the servers
// ignored that error, so the requester of a large answer (jobs with 10k
// jobs, a checkpoint) heard nothing and waited out its timeout.
//
// A requester that can reassemble says so with the header AcceptHeader
// on its request; an answer too large for one message then goes to its
// reply subject as numbered chunks, each with ChunkHeader "i/n" (1-based),
// in order (NATS keeps one publisher's order on a subject). A requester
// that did not say so gets, instead of an answer too large to send, the
// small answer the responder gives for that (an error envelope saying how
// large the answer was).
//
// Mux is the requesting side: one wildcard inbox subscription per
// connection, as nats.go's own requests use, whose messages it routes to
// the request waiting for them.
package reply

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/flowtrack/flowtrack/api"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// Headers of the protocol.
const (
	// AcceptHeader on a request says the requester reassembles chunks.
	AcceptHeader = "Flowtrack-Accept-Chunks"
	// ChunkHeader on an answer is "i/n": chunk i of n.
	ChunkHeader = "Flowtrack-Chunk"
)

// headroom is what a message's subject and headers may take beside its
// data within the max payload.
const headroom = 4 << 10

// ErrTooLarge is returned by Respond when an answer is too large for one
// message and the requester does not reassemble chunks: the responder has
// answered with its tooLarge answer instead.
var ErrTooLarge = api.ErrTooLarge

// Respond answers m with data (and hdr, when not nil): in one message when
// it fits, in chunks when it does not and the requester accepts them, and
// with tooLarge(size, max) otherwise (then the error is ErrTooLarge,
// wrapped). A request without a reply subject is not answered. The error
// is that of the publication, never ignored by the callers: a requester
// that gets nothing waits out its timeout.
func Respond(nc *nats.Conn, m *nats.Msg, data []byte, hdr nats.Header, tooLarge func(size, max int) []byte) error {
	if m.Reply == "" {
		return nil
	}
	limit := int(nc.MaxPayload()) - headroom
	if len(data) <= limit {
		return nc.PublishMsg(&nats.Msg{Subject: m.Reply, Data: data, Header: hdr})
	}
	if m.Header.Get(AcceptHeader) == "" {
		if err := nc.PublishMsg(&nats.Msg{Subject: m.Reply, Data: tooLarge(len(data), limit), Header: hdr}); err != nil {
			return fmt.Errorf("reply to %s: %w", m.Subject, err)
		}
		return fmt.Errorf("reply to %s: %w: %d bytes, %d at most, and the requester does not take chunks", m.Subject, ErrTooLarge, len(data), limit)
	}
	n := (len(data) + limit - 1) / limit
	for i := range n {
		h := nats.Header{}
		for k, v := range hdr {
			h[k] = v
		}
		h.Set(ChunkHeader, strconv.Itoa(i+1)+"/"+strconv.Itoa(n))
		if err := nc.PublishMsg(&nats.Msg{Subject: m.Reply, Data: data[i*limit : min((i+1)*limit, len(data))], Header: h}); err != nil {
			return fmt.Errorf("reply to %s: chunk %d of %d: %w", m.Subject, i+1, n, err)
		}
	}
	return nil
}

// Mux sends requests whose answers may come in chunks. It is safe for
// concurrent use; Close unsubscribes.
type Mux struct {
	nc     *nats.Conn
	prefix string

	mu      sync.Mutex
	sub     *nats.Subscription
	waiting map[string]*waiter
}

// waiter is one request waiting for its answer's messages.
type waiter struct {
	ch   chan *nats.Msg
	gone chan struct{} // closed when the requester stops waiting
}

// NewMux returns a Mux on nc, which stays the caller's. It subscribes on
// first use.
func NewMux(nc *nats.Conn) *Mux {
	return &Mux{nc: nc, prefix: nc.NewInbox() + ".", waiting: map[string]*waiter{}}
}

func (x *Mux) route(m *nats.Msg) {
	x.mu.Lock()
	w := x.waiting[strings.TrimPrefix(m.Subject, x.prefix)]
	x.mu.Unlock()
	if w != nil {
		select {
		case w.ch <- m:
		case <-w.gone: // the requester went away
		}
	}
}

// Request sends data to subject with hdr (nil for none) and returns the
// answer, its chunks joined, with the first message's headers.
//
// # Errors
//
// nats.ErrNoResponders when nobody serves subject (at once); ctx's error
// when the answer, or one of its chunks, does not come in time; a chunk
// out of order.
func (x *Mux) Request(ctx context.Context, subject string, data []byte, hdr nats.Header) (*nats.Msg, error) {
	x.mu.Lock()
	if x.sub == nil {
		sub, err := x.nc.Subscribe(x.prefix+"*", x.route)
		if err != nil {
			x.mu.Unlock()
			return nil, fmt.Errorf("request %s: subscribe to the inbox: %w", subject, err)
		}
		x.sub = sub
	}
	token := nuid.Next()
	w := &waiter{ch: make(chan *nats.Msg, 4), gone: make(chan struct{})}
	ch := w.ch
	x.waiting[token] = w
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		delete(x.waiting, token)
		x.mu.Unlock()
		close(w.gone)
	}()
	h := nats.Header{}
	for k, v := range hdr {
		h[k] = v
	}
	h.Set(AcceptHeader, "1")
	if err := x.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: x.prefix + token, Data: data, Header: h}); err != nil {
		return nil, fmt.Errorf("request %s: %w", subject, err)
	}
	var first *nats.Msg
	var parts [][]byte
	for {
		var m *nats.Msg
		select {
		case m = <-ch:
		case <-ctx.Done():
			if first != nil {
				return nil, fmt.Errorf("request %s: %d of the answer's chunks came: %w", subject, len(parts), ctx.Err())
			}
			return nil, ctx.Err()
		}
		if first == nil && len(m.Data) == 0 && m.Header.Get("Status") == "503" {
			return nil, nats.ErrNoResponders
		}
		c := m.Header.Get(ChunkHeader)
		if c == "" && first == nil {
			return m, nil
		}
		i, n, ok := parseChunk(c)
		if !ok || i != len(parts)+1 {
			return nil, fmt.Errorf("request %s: chunk %q where chunk %d was due", subject, c, len(parts)+1)
		}
		if first == nil {
			first = m
		}
		parts = append(parts, m.Data)
		if i == n {
			size := 0
			for _, p := range parts {
				size += len(p)
			}
			joined := make([]byte, 0, size)
			for _, p := range parts {
				joined = append(joined, p...)
			}
			out := &nats.Msg{Subject: first.Subject, Header: first.Header, Data: joined}
			out.Header.Del(ChunkHeader)
			return out, nil
		}
	}
}

func parseChunk(s string) (i, n int, ok bool) {
	a, b, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	return i, n, err1 == nil && err2 == nil && i >= 1 && i <= n
}

// Close unsubscribes the Mux's inbox; requests under way end with their
// context.
func (x *Mux) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.sub == nil {
		return nil
	}
	err := x.sub.Unsubscribe()
	x.sub = nil
	return err
}
