package metrics

import (
	"database/sql"
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// scrape answers what Prometheus would read from m.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func TestCountersStartAtZero(t *testing.T) {
	out := scrape(t, New(nil, "v1.2.3", "abc123"))
	for _, want := range []string{
		`herald_fcm_sends_total{outcome="sent"} 0`,
		`herald_fcm_sends_total{outcome="retry"} 0`,
		`herald_fcm_sends_total{outcome="failed"} 0`,
		`herald_fcm_sends_total{outcome="undeliverable"} 0`,
		`herald_retention_deleted_total{kind="deliveries"} 0`,
		`herald_retention_deleted_total{kind="consent_records"} 0`,
		`herald_build_info{goversion="` + runtime.Version() + `",revision="abc123",version="v1.2.3"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics: got no line %q in\n%s", want, out)
		}
	}
}

func TestJobsAreClusterWide(t *testing.T) {
	db, err := sql.Open("sqlite", t.TempDir()+"/jobs.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE river_job (kind TEXT, state TEXT);
		INSERT INTO river_job VALUES ('herald.send','available'), ('herald.send','available'),
			('herald.fanout','available'), ('herald.send','scheduled'), ('herald.webhook','retryable')`); err != nil {
		t.Fatal(err)
	}
	out := scrape(t, New(db, "v", ""))
	for _, want := range []string{
		`herald_jobs{kind="herald.send",state="available"} 2`,
		`herald_jobs{kind="herald.webhook",state="retryable"} 1`,
		"herald_job_backlog 3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("metrics: got no line %q in\n%s", want, out)
		}
	}
}
