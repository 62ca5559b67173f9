package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/nats-io/nats.go/jetstream"
)

// Reading a partition's correlations under way (intents) from the
// subscription bucket's leader.
//
// A bucket's Get and its key listings are served by any of its replicas
// (direct gets, an ordered consumer), and a replica may lag behind the
// leader: a server restarted a moment ago catches up. A new owner of a
// partition that listed its intents there could miss the one a dead
// owner wrote just before it died, and the message would wait for the
// next sweep (intentSweep). So the owner that opens a partition reads
// them from the leader: the stream's info filtered on the partition's
// intent keys (which only the leader answers) names them, and a get of
// each from the stream API (not a direct get) reads its value there.

// leaderIntents returns the correlations under way of the partition, by
// key, as the subscription bucket's leader holds them, waiting out
// JetStream's transient states until ctx ends.
func (m *messages) leaderIntents(ctx context.Context) (map[string]intent, error) {
	var out map[string]intent
	err := jswait.Do(ctx, func(ctx context.Context) error {
		var err error
		out, err = m.leaderIntentsOnce(ctx)
		return err
	})
	return out, err
}

func (m *messages) leaderIntentsOnce(ctx context.Context) (map[string]intent, error) {
	n := m.p.n
	bucket := subsBucket(n.cfg.Cluster)
	stream := "KV_" + bucket
	prefix := "$KV." + bucket + "."
	filter := prefix + "i." + strconv.Itoa(m.p.id) + ".*"
	rctx, cancel := context.WithTimeout(ctx, leaderReadTimeout)
	defer cancel()
	st, err := n.js.Stream(rctx, stream)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", bucket, err)
	}
	info, err := st.Info(rctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, fmt.Errorf("bucket %s: list %s: %w", bucket, filter, err)
	}
	out := map[string]intent{}
	for subject := range info.State.Subjects {
		data, live, err := m.leaderGet(rctx, stream, subject)
		if err != nil {
			return nil, fmt.Errorf("bucket %s: %s: %w", bucket, subject, err)
		}
		var in intent
		if !live || json.Unmarshal(data, &in) != nil {
			continue // deleted (a marker), or not an intent
		}
		out[strings.TrimPrefix(subject, prefix)] = in
	}
	return out, nil
}

// leaderReadTimeout bounds one request of leaderIntents.
const leaderReadTimeout = 2 * time.Second

// leaderGet reads the last message on subject from the stream's leader
// (the stream API's message get, which the leader answers); live is false
// for a key's delete or purge marker or a subject without messages.
func (m *messages) leaderGet(ctx context.Context, stream, subject string) (data []byte, live bool, err error) {
	req, _ := json.Marshal(map[string]string{"last_by_subj": subject})
	reply, err := m.p.n.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, false, err
	}
	var resp struct {
		Message *struct {
			Header []byte `json:"hdrs"`
			Data   []byte `json:"data"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return nil, false, fmt.Errorf("answer %q: %w", reply.Data, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, false, nil // purged since the listing
	case resp.Error != nil:
		return nil, false, resp.Error
	case resp.Message == nil:
		return nil, false, fmt.Errorf("answer %q holds no message", reply.Data)
	}
	// A put carries no operation header; a delete or purge marker does.
	if bytes.Contains(resp.Message.Header, []byte("KV-Operation")) {
		return nil, false, nil
	}
	return resp.Message.Data, true, nil
}
