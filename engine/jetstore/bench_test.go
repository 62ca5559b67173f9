package jetstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/server"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkCommit measures what a commit costs on a one-replica file
// stream, with the server syncing every write (sync_always, as flowtrack
// serve runs it) and without, beside the JetStream primitives another
// layout would build on: one plain publish of the same bytes, the same
// messages published without a batch (each acknowledged), and a purge.
// commit/N is a commit of the engine document and N instances (a
// document and a history chunk each: 2N+1 messages in one atomic batch).
func BenchmarkCommit(b *testing.B) {
	for _, sync := range []bool{true, false} {
		ns, nc := benchNATS(b, sync)
		name := "sync"
		if !sync {
			name = "nosync"
		}
		doc := []byte(`{"v":"` + strings.Repeat("x", 1000) + `"}`)
		batch := func(n int) *engine.StoreBatch {
			sb := &engine.StoreBatch{Engine: doc, Put: map[int64][]byte{}, History: map[int64]engine.HistoryChunk{}}
			for k := range int64(n) {
				sb.Put[k] = doc
				sb.History[k] = engine.HistoryChunk{From: 0, Records: []byte(`[{"seq":1}]`)}
			}
			return sb
		}
		for _, n := range []int{0, 1, 3, 10, 100} {
			b.Run(fmt.Sprintf("%s/commit/%d", name, n), func(b *testing.B) {
				s, err := jetstore.Open(context.Background(), nc, &jetstore.Options{Name: fmt.Sprintf("bench%d", n)})
				if err != nil {
					b.Fatal(err)
				}
				sb := batch(n)
				for b.Loop() {
					if err := s.Commit(context.Background(), sb); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		js, err := jetstream.New(nc)
		if err != nil {
			b.Fatal(err)
		}
		stream, err := js.CreateOrUpdateStream(context.Background(), jetstream.StreamConfig{Name: "RAW", Subjects: []string{"raw.>"}, Storage: jetstream.FileStorage})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/publish/3KB", func(b *testing.B) {
			data := []byte(strings.Repeat("x", 3000))
			for b.Loop() {
				if _, err := js.Publish(context.Background(), "raw.one", data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/publish-async/3", func(b *testing.B) {
			for b.Loop() {
				for i := range 3 {
					if _, err := js.PublishAsync(fmt.Sprintf("raw.a%d", i), doc); err != nil {
						b.Fatal(err)
					}
				}
				<-js.PublishAsyncComplete()
			}
		})
		b.Run(name+"/purge-subject", func(b *testing.B) {
			for b.Loop() {
				if err := stream.Purge(context.Background(), jetstream.WithPurgeSubject("raw.one")); err != nil {
					b.Fatal(err)
				}
			}
		})
		nc.Close()
		ns.Shutdown()
		ns.WaitForShutdown()
	}
}

func benchNATS(b *testing.B, sync bool) (*natsserver.Server, *nats.Conn) {
	b.Helper()
	var ns *natsserver.Server
	var err error
	if sync {
		ns, err = server.StartNATS(b.TempDir(), 0)
	} else {
		ns, err = natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, JetStream: true,
			StoreDir: b.TempDir(), NoSigs: true, NoLog: true})
		if err == nil {
			ns.Start()
			if !ns.ReadyForConnections(10e9) {
				err = fmt.Errorf("NATS server not ready")
			}
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	return ns, nc
}
