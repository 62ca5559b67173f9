package monitor

import (
	"github.com/flowtrack/flowtrack/engine"
	"github.com/prometheus/client_golang/prometheus"
)

// Descriptions of the metrics read from the engines at scrape time. Every
// one has the label partition (1 for a single server); per-process,
// per-job-type and per-element-type series add process, job_type or
// element_type. No label ever holds an instance, job or message key.
var (
	descStarted      = counterDesc("flowtrack_instances_started_total", "Process instances started, by process id.", "process")
	descEnded        = counterDesc("flowtrack_instances_ended_total", "Process instances ended, by process id and end state (completed, terminated, failed).", "process", "state")
	descActive       = gaugeDesc("flowtrack_instances_active", "Process instances live now, by process id.", "process")
	descElements     = counterDesc("flowtrack_element_activations_total", "Elements entered, by BPMN element type.", "element_type")
	descJobsCreated  = counterDesc("flowtrack_jobs_created_total", "Jobs created, by job type.", "job_type")
	descJobsActiv    = counterDesc("flowtrack_jobs_activated_total", "Jobs handed to workers (activate_jobs, the REST API, the job queues), by job type.", "job_type")
	descJobsDone     = counterDesc("flowtrack_jobs_completed_total", "Jobs completed, by job type.", "job_type")
	descJobsFailed   = counterDesc("flowtrack_jobs_failed_total", "Job failures reported, with or without retries left, by job type.", "job_type")
	descJobsCanceled = counterDesc("flowtrack_jobs_canceled_total", "Jobs canceled because their element was left otherwise, by job type.", "job_type")
	descJobsOpen     = gaugeDesc("flowtrack_jobs_activatable", "Jobs open now, by job type.", "job_type")
	descOldestJob    = gaugeDesc("flowtrack_job_oldest_wait_seconds", "How long the oldest open job has waited (0 with none).")
	descIncOpen      = gaugeDesc("flowtrack_incidents_open", "Incidents open now.")
	descIncCreated   = counterDesc("flowtrack_incidents_created_total", "Incidents created.")
	descIncResolved  = counterDesc("flowtrack_incidents_resolved_total", "Incidents resolved.")
	descMsgPub       = counterDesc("flowtrack_messages_published_total", "Messages published, through the API and by throw events.")
	descMsgCorr      = counterDesc("flowtrack_messages_correlated_total", "Messages correlated to a waiting instance.")
	descMsgSubs      = gaugeDesc("flowtrack_message_subscriptions_open", "Message subscriptions open now.")
	descSigBcast     = counterDesc("flowtrack_signals_broadcast_total", "Signals broadcast, through the API and by throw events.")
	descSigRecv      = counterDesc("flowtrack_signals_received_total", "Signal catches triggered.")
	descSigSubs      = gaugeDesc("flowtrack_signal_subscriptions_open", "Signal subscriptions open now.")
	descTimersSched  = counterDesc("flowtrack_timers_scheduled_total", "Timers scheduled.")
	descTimersFired  = counterDesc("flowtrack_timers_fired_total", "Timers that fell due and fired.")
	descTimersOpen   = gaugeDesc("flowtrack_timers_pending", "Timers scheduled and not yet due now.")
	descDecisions    = counterDesc("flowtrack_decisions_evaluated_total", "Decisions evaluated (business rule tasks and evaluate_decision).")
	descEvents       = counterDesc("flowtrack_events_total", "Records of the event stream, by event type.", "type")
	descOwned        = prometheus.NewDesc("flowtrack_partition_owned", "1 for each partition this node serves now, 0 for the others.", []string{"partition"}, nil)
	descPartitions   = prometheus.NewDesc("flowtrack_partitions", "The cluster's partition count (1 for a single server).", nil, nil)
)

func counterDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"partition"}, labels...), nil)
}

func gaugeDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append([]string{"partition"}, labels...), nil)
}

// engineCollector reads the engines at scrape time.
type engineCollector struct{ m *Monitor }

func (c engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descStarted, descEnded, descActive, descElements, descJobsCreated, descJobsActiv,
		descJobsDone, descJobsFailed, descJobsCanceled, descJobsOpen, descOldestJob, descIncOpen, descIncCreated,
		descIncResolved, descMsgPub, descMsgCorr, descMsgSubs, descSigBcast, descSigRecv, descSigSubs, descTimersSched,
		descTimersFired, descTimersOpen, descDecisions, descEvents, descOwned, descPartitions} {
		ch <- d
	}
}

func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	engines := c.m.snapshot()
	for _, e := range engines {
		collectEngine(ch, e)
	}
	c.m.mu.Lock()
	own := c.m.ownership
	c.m.mu.Unlock()
	if own == nil {
		ch <- prometheus.MustNewConstMetric(descPartitions, prometheus.GaugeValue, 1)
		return
	}
	owned, parts := own()
	ch <- prometheus.MustNewConstMetric(descPartitions, prometheus.GaugeValue, float64(parts))
	// A partition serves from when its engine is registered (the
	// server answers), a moment before the node lists it as owned.
	mine := map[int]bool{}
	for _, p := range owned {
		mine[p] = true
	}
	for _, e := range engines {
		mine[e.partition] = true
	}
	for p := 1; p <= parts; p++ {
		v := 0.0
		if mine[p] {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descOwned, prometheus.GaugeValue, v, itoa(p))
	}
}

func collectEngine(ch chan<- prometheus.Metric, e *Engine) {
	p := itoa(e.partition)
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{p}, labels...)...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{p}, labels...)...)
	}
	c := e.Tally.Counts()
	met := e.eng.Metrics()
	active := map[string]int{}
	for _, pm := range met.Processes {
		active[pm.ProcessID] = pm.Active
	}
	for id, pc := range c.Processes {
		counter(descStarted, pc.Started, id)
		counter(descEnded, pc.Completed, id, "completed")
		counter(descEnded, pc.Terminated, id, "terminated")
		counter(descEnded, pc.Failed, id, "failed")
		if _, ok := active[id]; !ok {
			active[id] = 0
		}
	}
	for id, n := range active {
		gauge(descActive, float64(n), id)
	}
	for typ, n := range c.ElementsEntered {
		counter(descElements, n, typ)
	}
	open := map[string]int{}
	for typ, n := range met.JobsByType {
		open[typ] = n
	}
	for typ, j := range c.Jobs {
		counter(descJobsCreated, j.Created, typ)
		counter(descJobsActiv, j.Activated, typ)
		counter(descJobsDone, j.Completed, typ)
		counter(descJobsFailed, j.Failed, typ)
		counter(descJobsCanceled, j.Canceled, typ)
		if _, ok := open[typ]; !ok {
			open[typ] = 0
		}
	}
	for typ, n := range open {
		gauge(descJobsOpen, float64(n), typ)
	}
	oldest := 0.0
	if met.OldestJob != nil {
		oldest = met.OldestJob.WaitingMs / 1000
	}
	gauge(descOldestJob, oldest)
	gauge(descIncOpen, float64(met.Open.Incidents))
	counter(descIncCreated, c.IncidentsCreated)
	counter(descIncResolved, c.IncidentsResolved)
	counter(descMsgPub, c.MessagesPublished)
	counter(descMsgCorr, c.MessagesCorrelated)
	gauge(descMsgSubs, float64(met.Open.MessageSubscriptions))
	counter(descSigBcast, c.SignalsBroadcast)
	counter(descSigRecv, c.SignalsReceived)
	gauge(descSigSubs, float64(met.Open.SignalSubscriptions))
	counter(descTimersSched, c.TimersScheduled)
	counter(descTimersFired, c.TimersFired)
	gauge(descTimersOpen, float64(met.Open.Timers))
	counter(descDecisions, c.DecisionsEvaluated)
	for _, typ := range engine.EventTypes() {
		counter(descEvents, c.Events[typ], string(typ))
	}
}
