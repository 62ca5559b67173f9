package monitor

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Descriptions of the NATS figures, read at scrape time: the process's
// connection (nats.Conn.Stats) and the embedded server's (Server.Varz).
var (
	descConnected   = prometheus.NewDesc("flowtrack_nats_connected", "1 while the process's NATS connection is connected.", nil, nil)
	descConnInMsgs  = prometheus.NewDesc("flowtrack_nats_client_in_messages_total", "Messages the process's NATS connection received.", nil, nil)
	descConnOutMsgs = prometheus.NewDesc("flowtrack_nats_client_out_messages_total", "Messages the process's NATS connection sent.", nil, nil)
	descConnInB     = prometheus.NewDesc("flowtrack_nats_client_in_bytes_total", "Bytes the process's NATS connection received.", nil, nil)
	descConnOutB    = prometheus.NewDesc("flowtrack_nats_client_out_bytes_total", "Bytes the process's NATS connection sent.", nil, nil)
	descReconnects  = prometheus.NewDesc("flowtrack_nats_client_reconnects_total", "Times the process's NATS connection reconnected.", nil, nil)

	descSrvInMsgs   = prometheus.NewDesc("flowtrack_nats_server_in_messages_total", "Messages the embedded NATS server received (clients and routes).", nil, nil)
	descSrvOutMsgs  = prometheus.NewDesc("flowtrack_nats_server_out_messages_total", "Messages the embedded NATS server sent.", nil, nil)
	descSrvInB      = prometheus.NewDesc("flowtrack_nats_server_in_bytes_total", "Bytes the embedded NATS server received.", nil, nil)
	descSrvOutB     = prometheus.NewDesc("flowtrack_nats_server_out_bytes_total", "Bytes the embedded NATS server sent.", nil, nil)
	descSrvConns    = prometheus.NewDesc("flowtrack_nats_server_connections", "Client connections to the embedded NATS server now.", nil, nil)
	descSrvSlow     = prometheus.NewDesc("flowtrack_nats_server_slow_consumers_total", "Clients the embedded NATS server disconnected as slow consumers.", nil, nil)
	descSrvRoutes   = prometheus.NewDesc("flowtrack_nats_server_routes", "Routes to other NATS servers of the cluster now.", nil, nil)
	descJSStore     = prometheus.NewDesc("flowtrack_jetstream_storage_bytes", "Bytes JetStream holds on disk on the embedded server.", nil, nil)
	descJSMemory    = prometheus.NewDesc("flowtrack_jetstream_memory_bytes", "Bytes JetStream holds in memory on the embedded server.", nil, nil)
	descJSAPIErrors = prometheus.NewDesc("flowtrack_jetstream_api_errors_total", "JetStream API requests that failed on the embedded server.", nil, nil)
)

// natsCollector reads the NATS connection and embedded server at scrape
// time.
type natsCollector struct{ m *Monitor }

func (c natsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConnected, descConnInMsgs, descConnOutMsgs, descConnInB, descConnOutB, descReconnects,
		descSrvInMsgs, descSrvOutMsgs, descSrvInB, descSrvOutB, descSrvConns, descSrvSlow, descSrvRoutes, descJSStore, descJSMemory, descJSAPIErrors} {
		ch <- d
	}
}

func (c natsCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	nc, ns := c.m.nc, c.m.ns
	c.m.mu.Unlock()
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	if nc != nil {
		connected := 0.0
		if nc.IsConnected() {
			connected = 1
		}
		gauge(descConnected, connected)
		st := nc.Stats()
		counter(descConnInMsgs, float64(st.InMsgs))
		counter(descConnOutMsgs, float64(st.OutMsgs))
		counter(descConnInB, float64(st.InBytes))
		counter(descConnOutB, float64(st.OutBytes))
		counter(descReconnects, float64(st.Reconnects))
	}
	if ns == nil {
		return
	}
	v, err := ns.Varz(nil)
	if err != nil {
		return // a server shutting down: its figures are gone with it
	}
	counter(descSrvInMsgs, float64(v.InMsgs))
	counter(descSrvOutMsgs, float64(v.OutMsgs))
	counter(descSrvInB, float64(v.InBytes))
	counter(descSrvOutB, float64(v.OutBytes))
	gauge(descSrvConns, float64(v.Connections))
	counter(descSrvSlow, float64(v.SlowConsumers))
	gauge(descSrvRoutes, float64(v.Routes))
	if s := v.JetStream.Stats; s != nil {
		gauge(descJSStore, float64(s.Store))
		gauge(descJSMemory, float64(s.Memory))
		counter(descJSAPIErrors, float64(s.API.Errors))
	}
}
