package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
)

// TestScenariosJetStored plays every scenario on an engine with the
// JetStream store (engine/jetstore, one stream per scenario on one
// embedded NATS server), closed and reopened after every step, in one
// resumption mode (TestScenariosStored covers both on boltstore), and
// requires the observations of the uninterrupted run.
func TestScenariosJetStored(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a stream per scenario, reopened after every step: too long for -short and -race on two cores (make restore-hosts, part of make test, runs it)")
	}
	scenarios, err := Load("scenarios")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := server.StartNATS(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	reopens := 0
	defer func() {
		if !t.Failed() && reopens == 0 {
			t.Error("no scenario reopened the store")
		}
		t.Logf("%d scenarios, %d reopens", len(scenarios), reopens)
	}()
	mode := engine.ResumeGoroutines
	for i, s := range scenarios {
		if _, ok := s.Skip["native"]; ok {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			plain, err := playNative(t, s, mode)
			if err != nil {
				t.Fatalf("uninterrupted: %v", err)
			}
			r := &storing{mode: mode, closeStore: func() error { return nil }}
			name := fmt.Sprintf("s%d", i)
			r.openStore = func() (engine.Store, error) {
				return jetstore.Open(context.Background(), nc, &jetstore.Options{Name: name})
			}
			if err := r.open(); err != nil {
				t.Fatal(err)
			}
			res, err := Run(ctxT(t), r, s)
			if cerr := r.Close(context.Background()); cerr != nil && err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatalf("reopened after every step: %v", err)
			}
			reopens += r.reopens
			want, _ := json.Marshal(plain.Observations)
			got, _ := json.Marshal(res.Observations)
			if !bytes.Equal(got, want) {
				t.Errorf("reopened after every step (%d reopens) observed\n%s\nuninterrupted\n%s", r.reopens, got, want)
			}
		})
	}
}
