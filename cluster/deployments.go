package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/internal/dispatch"
	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// The deployment log: every deploy the cluster accepted, in one order, as
// a message of the stream FLOWTRACK_<cluster>_DEPLOYMENTS (logEntry). A
// partition holds the log's first k entries when its store holds k
// deployments, so it applies entries k+1... in order, before it serves
// and whenever a router asks (deploy), and every partition holds the same
// process versions.

// logEntry is one deployment of the log.
type logEntry struct {
	Name      string `json:"name"`
	XMLBase64 string `json:"xmlBase64"`
}

// validate runs a deploy request through a fresh engine with the
// partitions' options and returns the document to log with the fresh
// engine's result, or the response refusing it (BAD_REQUEST,
// DEPLOY_FAILED), as one engine would answer.
func (n *Node) validate(req []byte) (*logEntry, *wire.DeployResult, []byte) {
	eng, err := engine.New(append(n.cfg.Engine[:len(n.cfg.Engine):len(n.cfg.Engine)], engine.WithClock(clock.NewVirtual(clock.Epoch)))...)
	if err != nil {
		return nil, nil, errorResponse(wire.CodeInternal, "deploy: the partitions' engine options: "+err.Error())
	}
	defer func() { _ = eng.Close(context.Background()) }()
	out := dispatch.NewServed(eng, eng.Clock()).Call("deploy", req)
	var resp wire.Response[wire.DeployResult]
	if err := json.Unmarshal(out, &resp); err != nil || !resp.OK {
		return nil, nil, out
	}
	var dr wire.DeployRequest
	if err := json.Unmarshal(req, &dr); err != nil {
		return nil, nil, errorResponse(wire.CodeBadRequest, "deploy: "+err.Error())
	}
	e := &logEntry{Name: resp.Result.Name}
	if dr.XMLBase64 != nil {
		e.XMLBase64 = *dr.XMLBase64
	} else {
		e.XMLBase64 = base64.StdEncoding.EncodeToString([]byte(*dr.XML))
	}
	return e, &resp.Result, nil
}

// appendDeployment writes e to the log and returns its sequence.
func (n *Node) appendDeployment(ctx context.Context, e *logEntry) (uint64, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return 0, err
	}
	// A publish tried again after its acknowledgement was lost carries
	// the same message id: JetStream drops the second copy (its
	// duplicate window is two minutes) and answers with the first's
	// sequence, so an entry is logged once.
	id := nuid.Next()
	var ack *jetstream.PubAck
	err = jswait.Do(ctx, func(ctx context.Context) error {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ack, err = n.js.Publish(pctx, deploySubject(n.cfg.Cluster), data, jetstream.WithMsgID(id))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("append to the deployment log: %w", err)
	}
	return ack.Sequence, nil
}

// syncTo applies the log's entries the partition does not hold yet, up
// to the log's end (at least seq), and returns the result of entry seq
// when this node applied it (nil otherwise; seq 0 asks for none).
func (p *Partition) syncTo(ctx context.Context, eng *engine.Engine, seq uint64) ([]byte, error) {
	p.deployMu.Lock()
	defer p.deployMu.Unlock()
	ctx, cancel := jswait.Bound(ctx, jswait.DefaultWait)
	defer cancel()
	var info *jetstream.StreamInfo
	err := jswait.Do(ctx, func(ctx context.Context) error {
		var err error
		info, err = p.n.deploy.Info(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("partition %d: read the deployment log: %w", p.id, err)
	}
	last := max(info.State.LastSeq, seq)
	for s := uint64(p.applied) + 1; s <= last; s++ {
		var msg *jetstream.RawStreamMsg
		err := jswait.Do(ctx, func(ctx context.Context) error {
			var err error
			msg, err = p.n.deploy.GetMsg(ctx, s)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("partition %d: deployment log entry %d: %w", p.id, s, err)
		}
		var e logEntry
		if err := json.Unmarshal(msg.Data, &e); err != nil {
			return nil, fmt.Errorf("partition %d: deployment log entry %d: %w", p.id, s, err)
		}
		doc, err := base64.StdEncoding.DecodeString(e.XMLBase64)
		if err != nil {
			return nil, fmt.Errorf("partition %d: deployment log entry %d: %w", p.id, s, err)
		}
		d, err := eng.Deploy(e.Name, doc)
		if d == nil {
			// Validated with the same options before it was logged:
			// a refusal here is a defect, and the partition stops
			// applying the log rather than number versions apart.
			return nil, fmt.Errorf("partition %d: deployment log entry %d (%s): %w", p.id, s, e.Name, err)
		}
		p.applied++
		p.results[s], _ = json.Marshal(wire.DeployResult{Name: d.Name, Processes: d.Processes, Warnings: d.Warnings})
		delete(p.results, s-64) // a router asks right after it logs
	}
	return p.results[seq], nil
}

// answerSync answers a router's sync request: the data is the log
// sequence; the reply a response envelope with the entry's result (null
// when an earlier owner applied it).
func (p *Partition) answerSync(m *nats.Msg) {
	seq, err := strconv.ParseUint(string(m.Data), 10, 64)
	if err != nil {
		p.n.respond(m, errorResponse(wire.CodeBadRequest, "sync: not a log sequence: "+strconv.Quote(string(m.Data))))
		return
	}
	res, err := p.syncTo(context.Background(), p.Engine(), seq)
	if err != nil {
		p.n.respond(m, errorResponse(wire.CodeInternal, err.Error()))
		return
	}
	if res == nil {
		res = []byte("null")
	}
	p.n.respond(m, okResponse(res, nil))
}
