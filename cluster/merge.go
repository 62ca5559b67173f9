package cluster

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/flowtrack/flowtrack/engine"
)

// mergeByKey concatenates the partitions' lists (jobs, incidents) in key
// order, as one engine lists them.
func mergeByKey(results []json.RawMessage) (json.RawMessage, error) {
	return mergeByKeyLimit(results, 0)
}

// mergeByKeyLimit is mergeByKey keeping the first limit items (0: all).
func mergeByKeyLimit(results []json.RawMessage, limit int) (json.RawMessage, error) {
	type keyed struct {
		key int64
		raw json.RawMessage
	}
	var all []keyed
	for _, res := range results {
		var items []json.RawMessage
		if err := json.Unmarshal(res, &items); err != nil {
			return nil, err
		}
		for _, it := range items {
			var k struct {
				Key int64 `json:"key"`
			}
			if err := json.Unmarshal(it, &k); err != nil {
				return nil, err
			}
			all = append(all, keyed{k.Key, it})
		}
	}
	slices.SortFunc(all, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	out := make([]json.RawMessage, len(all))
	for i, k := range all {
		out[i] = k.raw
	}
	return json.Marshal(out)
}

// mergeMetrics adds the partitions' metrics up: open counts and jobs by
// type summed, the oldest job the oldest of all, each process's counts
// summed, its mean latency weighted by its completed instances and its
// maximum the largest.
func mergeMetrics(results []json.RawMessage) (json.RawMessage, error) {
	sum := engine.Metrics{JobsByType: map[string]int{}, Processes: []engine.ProcessMetrics{}}
	byID := map[string]*engine.ProcessMetrics{}
	var ids []string
	for _, res := range results {
		var m engine.Metrics
		if err := json.Unmarshal(res, &m); err != nil {
			return nil, err
		}
		o := &sum.Open
		o.Instances += m.Open.Instances
		o.Jobs += m.Open.Jobs
		o.Incidents += m.Open.Incidents
		o.MessageSubscriptions += m.Open.MessageSubscriptions
		o.SignalSubscriptions += m.Open.SignalSubscriptions
		o.Timers += m.Open.Timers
		for t, c := range m.JobsByType {
			sum.JobsByType[t] += c
		}
		if m.OldestJob != nil && (sum.OldestJob == nil || m.OldestJob.Created.Before(sum.OldestJob.Created)) {
			sum.OldestJob = m.OldestJob
		}
		for _, p := range m.Processes {
			q := byID[p.ProcessID]
			if q == nil {
				q = &engine.ProcessMetrics{ProcessID: p.ProcessID}
				byID[p.ProcessID] = q
				ids = append(ids, p.ProcessID)
			}
			if n := q.Completed + p.Completed; n > 0 {
				q.MeanLatencyMs = (q.MeanLatencyMs*float64(q.Completed) + p.MeanLatencyMs*float64(p.Completed)) / float64(n)
			}
			q.Active += p.Active
			q.Completed += p.Completed
			q.Terminated += p.Terminated
			q.Failed += p.Failed
			q.MaxLatencyMs = max(q.MaxLatencyMs, p.MaxLatencyMs)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		sum.Processes = append(sum.Processes, *byID[id])
	}
	return json.Marshal(sum)
}
