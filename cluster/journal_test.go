package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flowtrack/flowtrack/engine"
)

// journal records what the nodes' partition stores were asked to do
// (loads and commits, with the engine document's last key and the
// instances written), so that a test that finds an acknowledged command
// not reflected can print the story of the partition concerned. Safe
// for concurrent use.
type journal struct {
	start time.Time
	mu    sync.Mutex
	lines map[int][]string // by partition
}

func newJournal() *journal { return &journal{start: time.Now(), lines: map[int][]string{}} }

// wrap returns a WrapStore for node that records into j, beneath
// whatever inner wraps around it (a slow disk: the journal sees a commit
// when it reaches the store).
func (j *journal) wrap(node string, inner func(int, engine.Store) engine.Store) func(int, engine.Store) engine.Store {
	return func(id int, s engine.Store) engine.Store {
		var st engine.Store = journalStore{Store: s, j: j, node: node, id: id, opened: time.Since(j.start)}
		if inner != nil {
			st = inner(id, st)
		}
		return st
	}
}

func (j *journal) add(id int, format string, args ...any) {
	j.mu.Lock()
	j.lines[id] = append(j.lines[id], fmt.Sprintf(format, args...))
	j.mu.Unlock()
}

// story returns partition id's lines.
func (j *journal) story(id int) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.lines[id], "\n")
}

type journalStore struct {
	engine.Store
	j      *journal
	node   string
	id     int
	opened time.Duration // when the partition was opened, telling owners apart
}

func lastKey(doc []byte) int64 {
	var d struct {
		LastKey int64 `json:"lastKey"`
	}
	_ = json.Unmarshal(doc, &d)
	return d.LastKey
}

// buffered lists a message buffer piece's messages as name/key, "" for
// a commit that leaves the buffer as it was.
func buffered(piece []byte) string {
	if piece == nil {
		return ""
	}
	var msgs []struct {
		Name           string   `json:"name"`
		CorrelationKey string   `json:"correlationKey"`
		Correlated     []string `json:"correlated"`
	}
	_ = json.Unmarshal(piece, &msgs)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Name + "/" + m.CorrelationKey
		if len(m.Correlated) > 0 {
			out[i] += fmt.Sprint(m.Correlated)
		}
	}
	return fmt.Sprintf(" messages=%v", out)
}

func (s journalStore) Load(ctx context.Context) (*engine.StoreState, error) {
	t := time.Since(s.j.start)
	st, err := s.Store.Load(ctx)
	var last int64
	n, msgs := 0, ""
	if st != nil {
		last, n, msgs = lastKey(st.Engine), len(st.Instances), buffered(st.Messages)
	}
	s.j.add(s.id, "%8.3fs..%8.3fs %s(opened %.3fs) load lastKey=%d instances=%d%s err=%v", t.Seconds(), time.Since(s.j.start).Seconds(),
		s.node, s.opened.Seconds(), last, n, msgs, err)
	return st, err
}

func (s journalStore) Commit(ctx context.Context, b *engine.StoreBatch) error {
	t := time.Since(s.j.start)
	err := s.Store.Commit(ctx, b)
	keys := make([]int64, 0, len(b.Put))
	for k := range b.Put {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s.j.add(s.id, "%8.3fs..%8.3fs %s(opened %.3fs) commit lastKey=%d put=%v delete=%v%s err=%v", t.Seconds(), time.Since(s.j.start).Seconds(),
		s.node, s.opened.Seconds(), lastKey(b.Engine), keys, b.Delete, buffered(b.Messages), err)
	return err
}
