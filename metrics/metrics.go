// Package metrics exposes Herald's Prometheus metrics: HTTP requests per
// listener and route, FCM send outcomes, the build, and River's jobs by
// kind and state, and what retention deleted.
//
// Counters are present at zero from the start, so a rate() over them is
// defined before the first event. The job metrics are read from the
// database every node shares: they are cluster-wide, the same on every
// node, and an alert takes their max over nodes, never their sum.
package metrics

import (
	"context"
	"database/sql"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/retention"
)

// Metrics holds the collectors, registered on its own registry (no
// globals).
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.HistogramVec
	sends    *prometheus.CounterVec
	events   *prometheus.CounterVec
	deleted  *prometheus.CounterVec
	steps    *prometheus.HistogramVec
}

// sendOutcomes are the outcomes herald_fcm_sends_total counts, each
// present at zero from the start.
var sendOutcomes = []string{"sent", "retry", "failed", "undeliverable"}

// New registers Herald's collectors; version and revision name the build
// in herald_build_info; jobsDB, when not nil, is queried at scrape time for
// River's job counts.
func New(jobsDB *sql.DB, version, revision string) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_http_request_duration_seconds",
			Help:    "HTTP requests by listener, method, route and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"listener", "method", "route", "status"}),
		sends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_fcm_sends_total",
			Help: "FCM sends by outcome (sent, retry, failed, undeliverable).",
		}, []string{"outcome"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_sdk_events_total",
			Help: "Events devices reported (POST /api/sdk/v2/events) by type (received, opened) and outcome (accepted, ignored).",
		}, []string{"type", "outcome"}),
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_retention_deleted_total",
			Help: "What the daily retention run deleted on this node, by kind (push_bodies, deliveries, chunks, events, unreachable, recipients, idempotency_keys, consent_records, access_records).",
		}, []string{"kind"}),
		steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_retention_step_seconds",
			Help:    "How long each step of the retention run held the store's writer, by step (expire, rows, idempotency, consent, access, reclaim).",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"step"}),
	}
	for _, o := range sendOutcomes {
		m.sends.WithLabelValues(o)
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "herald_build_info",
		Help:        "Always 1; the labels name the running build.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
	})
	build.Set(1)
	for _, kind := range retention.Kinds {
		m.deleted.WithLabelValues(kind)
	}
	m.registry.MustRegister(m.requests, m.sends, m.events, m.deleted, m.steps, build, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every series starts at zero, so a rate is defined from the first
	// scrape.
	for _, typ := range herald.EventTypes {
		for _, outcome := range []string{"accepted", "ignored"} {
			m.events.WithLabelValues(string(typ), outcome)
		}
	}
	if jobsDB != nil {
		m.registry.MustRegister(&jobCollector{db: jobsDB,
			jobs: prometheus.NewDesc("herald_jobs",
				"River jobs by kind and state, in the whole cluster (the same on every node: take the max over nodes).",
				[]string{"kind", "state"}, nil),
			backlog: prometheus.NewDesc("herald_job_backlog",
				"Jobs ready to run and not yet taken, in the whole cluster (the same on every node: take the max over nodes).",
				nil, nil)})
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Send counts one FCM send outcome.
func (m *Metrics) Send(outcome string) { m.sends.WithLabelValues(outcome).Inc() }

// Event counts one event a device reported, by type, accepted or
// ignored.
func (m *Metrics) Event(typ herald.EventType, accepted bool) {
	outcome := "ignored"
	if accepted {
		outcome = "accepted"
	}
	m.events.WithLabelValues(string(typ), outcome).Inc()
}

// Deleted counts what a retention step deleted of one kind.
func (m *Metrics) Deleted(kind string, n int64) { m.deleted.WithLabelValues(kind).Add(float64(n)) }

// RetentionStep observes how long a retention step held the writer.
func (m *Metrics) RetentionStep(step string, held time.Duration) {
	m.steps.WithLabelValues(step).Observe(held.Seconds())
}

// Observer returns the function a listener calls after each request; the
// route is the mux pattern, so paths with ids do not explode the labels.
func (m *Metrics) Observer(listener string) func(method, route string, status int, elapsed time.Duration) {
	return func(method, route string, status int, elapsed time.Duration) {
		m.requests.WithLabelValues(listener, method, route, strconv.Itoa(status)).Observe(elapsed.Seconds())
	}
}

// jobCollector counts River's jobs at scrape time.
type jobCollector struct {
	db            *sql.DB
	jobs, backlog *prometheus.Desc
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.jobs; ch <- c.backlog }

// Collect reads the counts in one query. The backlog is the jobs in state
// available: River moves a scheduled or retryable job there when it is
// due, so it counts work waiting for a worker, not work waiting for its time.
func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.db.QueryContext(ctx, `SELECT kind, state, COUNT(*) FROM river_job GROUP BY kind, state`)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.jobs, err)
		ch <- prometheus.NewInvalidMetric(c.backlog, err)
		return
	}
	defer rows.Close()
	var backlog float64
	for rows.Next() {
		var kind, state string
		var n float64
		if err := rows.Scan(&kind, &state, &n); err != nil {
			ch <- prometheus.NewInvalidMetric(c.jobs, err)
			return
		}
		if state == "available" {
			backlog += n
		}
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, n, kind, state)
	}
	if err := rows.Err(); err != nil {
		ch <- prometheus.NewInvalidMetric(c.backlog, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, backlog)
}
