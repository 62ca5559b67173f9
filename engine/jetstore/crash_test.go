package jetstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/engine/storetest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errCrash is what the fault hook returns: the store stops there.
var errCrash = errors.New("injected crash")

// crashBefore is a fault hook that crashes before step while *armed.
func crashBefore(step string, armed *bool) func(string) error {
	return func(at string) error {
		if *armed && at == step {
			return errCrash
		}
		return nil
	}
}

// crashBatches are a first commit and a second one that rewrites, adds,
// deletes and finishes instances, evicts a finished one, adds a
// deployment and replaces the message buffer; with large, it carries a
// document written in parts, which makes it too large for one record.
func crashBatches(instances int, large bool) (first, second *engine.StoreBatch) {
	first = &engine.StoreBatch{Engine: []byte(`{"v":"before"}`), Messages: []byte(`["m0"]`), Deployments: [][]byte{[]byte(`{"d":0}`)},
		Put: map[int64][]byte{}, History: map[int64]engine.HistoryChunk{},
		Finished: []engine.FinishedInstance{{Key: 900_000, Doc: []byte(`{"fin":900000}`)}}}
	for k := int64(1); k <= 20; k++ {
		first.Put[k] = fmt.Appendf(nil, `{"i":%d,"v":0}`, k)
		first.History[k] = engine.HistoryChunk{From: 0, Records: fmt.Appendf(nil, `[{"seq":%d}]`, k)}
	}
	second = &engine.StoreBatch{Engine: []byte(`{"v":"after"}`), Messages: []byte(`["m1"]`), Deployments: [][]byte{[]byte(`{"d":1}`)},
		Put: map[int64][]byte{}, History: map[int64]engine.HistoryChunk{},
		Delete: []int64{1, 2, 3}, Evict: []int64{900_000},
		Finished: []engine.FinishedInstance{{Key: 1, Doc: []byte(`{"fin":1}`)}}}
	for k := int64(4); k < int64(4+instances); k++ {
		second.Put[k] = fmt.Appendf(nil, `{"i":%d,"v":1}`, k)
		from := 0
		if k <= 20 {
			from = 1
		}
		second.History[k] = engine.HistoryChunk{From: from, Records: fmt.Appendf(nil, `[{"seq":%d,"after":true}]`, k)}
	}
	if large {
		second.Put[5] = []byte(`{"v":"` + strings.Repeat("p", 2_500_000) + `"}`) // in parts, over several packs
	}
	return first, second
}

// TestStore_CrashSteps: a commit lands whole, and a crash before any step of
// it (each staging of packs, the record, each run of messages applied,
// the tidying, the purges) leaves a store that reopens to the state before
// it or the one after it, never a mix, and holds no record or staged pack
// once reopened. A crash while the reopen settles a commit is settled by
// the next reopen. Both for a commit that fits its record and for one of
// 1,400 instances and a document of 2.5 MB that is staged.
func TestStore_CrashSteps(t *testing.T) {
	for _, tc := range []struct {
		name      string
		instances int
		large     bool
	}{{"record", 2, false}, {"staged", 1_400, true}} {
		t.Run(tc.name, func(t *testing.T) { testCrash(t, tc.instances, tc.large) })
	}
}

func testCrash(t *testing.T, instances int, large bool) {
	ctx := context.Background()
	n := startNATS(t)
	first, second := crashBatches(instances, large)

	var steps []string
	record := false
	ref, err := jetstore.OpenFaulty(ctx, n.nc, &jetstore.Options{Name: "ref"}, func(step string) error {
		if record {
			steps = append(steps, step)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	before, err := ref.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	record = true
	if err := ref.Commit(ctx, second); err != nil {
		t.Fatal(err)
	}
	record = false
	after, err := ref.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Instances) != max(instances, 17) || string(after.Engine) != `{"v":"after"}` || len(after.Deployments) != 2 ||
		len(after.Finished) != 1 || string(after.Instances[5].Doc) != string(second.Put[5]) || len(after.Instances[4].History) != 2 {
		t.Fatalf("after the second commit: engine %s, %d instances, %d deployments, %d finished",
			after.Engine, len(after.Instances), len(after.Deployments), len(after.Finished))
	}
	staged := slices.Contains(steps, "stage 1")
	if staged != large || (large && !slices.Contains(steps, "apply 3")) {
		t.Fatalf("the second commit went through steps %v", steps)
	}
	noLeftovers(t, n, "ref")

	recordAt, purgeAt := slices.Index(steps, "record"), slices.Index(steps, "purge record")
	for i, crashAt := range steps {
		t.Run(fmt.Sprintf("crash before %s", crashAt), func(t *testing.T) {
			name := fmt.Sprintf("crash%d", i)
			armed := false
			s, err := jetstore.OpenFaulty(ctx, n.nc, &jetstore.Options{Name: name}, crashBefore(crashAt, &armed))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(ctx, first); err != nil {
				t.Fatal(err)
			}
			armed = true
			if err := s.Commit(ctx, second); !errors.Is(err, errCrash) {
				t.Fatalf("commit crashed before %s: %v, want the injected crash", crashAt, err)
			}
			recorded := i > recordAt
			if recorded && i <= purgeAt {
				// The record is there: crash again while the reopen
				// settles the commit.
				_, err := jetstore.OpenFaulty(ctx, n.nc, &jetstore.Options{Name: name}, crashBefore("purge record", &armed))
				if !errors.Is(err, errCrash) {
					t.Fatalf("reopen crashed while settling: %v, want the injected crash", err)
				}
			}
			s, err = jetstore.Open(ctx, n.nc, &jetstore.Options{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, which := before, "before"
			if recorded {
				want, which = after, "after"
			}
			if diff := storetest.Diff(got, want); diff != "" {
				t.Fatalf("reopened after a crash before %s: not the state %s the commit: %s", crashAt, which, diff)
			}
			noLeftovers(t, n, name)
			// The reopened store goes on committing.
			if err := s.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"v":"next"}`), Delete: []int64{10}}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Instance(ctx, 10); !errors.Is(err, engine.ErrUnknownInstance) {
				t.Fatalf("instance 10 deleted after the reopen: %v, want ErrUnknownInstance", err)
			}
		})
	}
}

// TestStore_CommitFailed: a staged commit that failed (here before its
// record) is settled by the same store's next commit, which lands.
func TestStore_CommitFailed(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	first, big := crashBatches(1_200, true)
	crash := true
	s, err := jetstore.OpenFaulty(ctx, n.nc, &jetstore.Options{Name: "failed"}, crashBefore("stage 1", &crash))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, big); !errors.Is(err, errCrash) {
		t.Fatalf("staged commit: %v, want the injected crash", err)
	}
	crash = false
	next := &engine.StoreBatch{Engine: []byte(`{"v":"next"}`), Put: map[int64][]byte{30: []byte(`{"i":30}`)}}
	if err := s.Commit(ctx, next); err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, n, "failed")
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(st.Engine) != `{"v":"next"}` || len(st.Instances) != 21 || len(st.Deployments) != 1 || st.Instances[1000] != nil {
		t.Fatalf("after a failed staged commit and a small one: engine %s, %d instances, %d deployments, want the small one on the first",
			st.Engine, len(st.Instances), len(st.Deployments))
	}
}

// noLeftovers fails unless the store's stream holds no staged message and
// no commit record.
func noLeftovers(t *testing.T, n *natsDir, name string) {
	t.Helper()
	js, err := jetstream.New(n.nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(context.Background(), "FLOWTRACK_STORE_"+name)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "flowtrack.store." + name + "."
	for _, filter := range []string{prefix + "stage.>", prefix + "commit"} {
		info, err := stream.Info(context.Background(), jetstream.WithSubjectFilter(filter))
		if err != nil {
			t.Fatal(err)
		}
		if len(info.State.Subjects) != 0 {
			t.Errorf("store %s holds %v on %s", name, info.State.Subjects, filter)
		}
	}
}

// TestOpen_BadRecord: a commit record that cannot be rolled forward (its
// frames cut short or for a subject the store does not write, or naming
// staged packs the stream does not hold) makes
// Open fail with ErrBadRecord, rather than roll forward part of a commit.
func TestOpen_BadRecord(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	js, err := jetstream.New(n.nc)
	if err != nil {
		t.Fatal(err)
	}
	for name, rec := range map[string]func(m *nats.Msg){
		"short": func(m *nats.Msg) { m.Data = []byte{0x05, 'd', 'o'} },
		"frame": func(m *nats.Msg) { m.Data = []byte{0x03, 'd', 'o', 'c', 0, 0, 0} },
		"packs": func(m *nats.Msg) { m.Header.Set("Flowtrack-Commit", "gone"); m.Header.Set("Flowtrack-Parts", "2") },
		"parts": func(m *nats.Msg) { m.Header.Set("Flowtrack-Commit", "gone"); m.Header.Set("Flowtrack-Parts", "two") },
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: name}); err != nil {
				t.Fatal(err)
			}
			m := nats.NewMsg("flowtrack.store." + name + ".commit")
			rec(m)
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
			_, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: name})
			if !errors.Is(err, jetstore.ErrBadRecord) || !strings.Contains(err.Error(), name) {
				t.Fatalf("Open on a bad commit record: %v, want ErrBadRecord naming the store", err)
			}
		})
	}
}
