package reply_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/flowtrack/flowtrack/internal/reply"
)

// small starts a NATS server on loopback whose max payload is 64 KB, so
// that a few hundred KB make many chunks.
func small(t *testing.T) *nats.Conn {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, MaxPayload: 64 << 10, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS not ready")
	}
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func TestMux_Request(t *testing.T) {
	nc := small(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 40_000) // 640 KB: 11 chunks
	errs := make(chan error, 10)
	_, err := nc.Subscribe("answer.*", func(m *nats.Msg) {
		data := []byte("small")
		if m.Subject == "answer.big" {
			data = big
		}
		errs <- reply.Respond(nc, m, data, nats.Header{"X": []string{"y"}}, func(size, max int) []byte { return []byte("too large") })
	})
	if err != nil {
		t.Fatal(err)
	}
	x := reply.NewMux(nc)
	defer x.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, tc := range []struct {
		subject string
		want    []byte
	}{{"answer.small", []byte("small")}, {"answer.big", big}} {
		m, err := x.Request(ctx, tc.subject, []byte("q"), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.subject, err)
		}
		if !bytes.Equal(m.Data, tc.want) || m.Header.Get("X") != "y" || m.Header.Get(reply.ChunkHeader) != "" {
			t.Errorf("%s: %d bytes, header %v; want %d bytes", tc.subject, len(m.Data), m.Header, len(tc.want))
		}
		if err := <-errs; err != nil {
			t.Errorf("%s: respond: %v", tc.subject, err)
		}
	}

	// A plain request cannot take chunks: it gets the small answer, at
	// once, and the responder knows.
	m, err := nc.RequestWithContext(ctx, "answer.big", []byte("q"))
	if err != nil || string(m.Data) != "too large" {
		t.Fatalf("plain request of a large answer: %v %q", err, m.Data)
	}
	if err := <-errs; !errors.Is(err, reply.ErrTooLarge) {
		t.Errorf("respond to a plain request: %v, want ErrTooLarge", err)
	}

	if _, err := x.Request(ctx, "nobody.home", nil, nil); !errors.Is(err, nats.ErrNoResponders) {
		t.Errorf("no responders: %v", err)
	}
}
