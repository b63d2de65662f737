package metrics

import (
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// promtool returns the path of promtool, or skips the test.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian: apt-get install prometheus); .ci/run installs it")
	}
	return p
}

// runPromtool runs promtool with args in dir, and fails the test with its
// output when it fails.
func runPromtool(t *testing.T, dir string, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestAlertRules: deploy/prometheus's rules pass promtool's check and
// their unit tests (the backlog alert takes the max over nodes).
func TestAlertRules(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "deploy", "prometheus")
	runPromtool(t, dir, "", "check", "rules", "herald-rules.yml")
	runPromtool(t, dir, "", "test", "rules", "herald-rules.test.yml")
	runPromtool(t, dir, "", "check", "config", "prometheus.yml")
}

// TestMetricsPassPromtool: what /metrics serves passes promtool's lint.
func TestMetricsPassPromtool(t *testing.T) {
	t.Parallel()
	runPromtool(t, ".", scrape(t, New(nil, "v1.0.0", "abc")), "check", "metrics")
}

// TestGrafanaQueries: every query of the Grafana dashboard parses as
// PromQL (checked as recording rules) and names only metrics Herald or
// Prometheus itself serves.
func TestGrafanaQueries(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "herald-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("dashboard: %v", err)
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			expr := strings.ReplaceAll(tg.Expr, "$job", "herald")
			if !strings.Contains(expr, "herald_") && !strings.Contains(expr, "process_") && !strings.Contains(expr, "up{") {
				t.Errorf("panel %q: query %q names no Herald metric", p.Title, tg.Expr)
			}
			q, _ := json.Marshal(expr)
			rules.WriteString("      - record: dashboard:q" + string(rune('a'+n%26)) + "\n        expr: " + string(q) + "\n")
			n++
		}
	}
	if n == 0 {
		t.Fatal("dashboard: no queries")
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, ".", "", "check", "rules", file)
}

// scrapeJob is a job of deploy/prometheus/prometheus.yml as
// TestRulesSelectScrapedSeries reads it.
type scrapeJob struct {
	name, metricsPath string
	// hosts are the hosts it scrapes: its targets', or the exporter's it
	// is relabelled to.
	hosts []string
}

var (
	jobNameLine = regexp.MustCompile(`(?m)^\s*- job_name:\s*(\S+)\s*$`)
	pathLine    = regexp.MustCompile(`(?m)^\s*metrics_path:\s*(\S+)\s*$`)
	targetHost  = regexp.MustCompile(`"(?:https?://)?([A-Za-z0-9.-]+):\d+`)
	exporter    = regexp.MustCompile(`(?m)^\s*replacement:\s*"?([A-Za-z0-9.-]+):\d+`)
)

// scrapeJobs reads the jobs of a Prometheus configuration.
func scrapeJobs(t *testing.T, config string) map[string]scrapeJob {
	t.Helper()
	jobs := map[string]scrapeJob{}
	idx := jobNameLine.FindAllStringSubmatchIndex(config, -1)
	for i, m := range idx {
		end := len(config)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		block := config[m[1]:end]
		j := scrapeJob{name: config[m[2]:m[3]], metricsPath: "/metrics"}
		if p := pathLine.FindStringSubmatch(block); p != nil {
			j.metricsPath = p[1]
		}
		if e := exporter.FindStringSubmatch(block); e != nil {
			j.hosts = []string{e[1]} // the targets are the exporter's parameters
		} else {
			for _, h := range targetHost.FindAllStringSubmatch(block, -1) {
				j.hosts = append(j.hosts, h[1])
			}
		}
		jobs[j.name] = j
	}
	return jobs
}

// blackboxMetrics are the series the blackbox exporter's http prober
// answers on /probe.
var blackboxMetrics = []string{"probe_success", "probe_duration_seconds", "probe_http_status_code", "probe_http_duration_seconds",
	"probe_http_content_length", "probe_http_version", "probe_http_ssl", "probe_dns_lookup_time_seconds", "probe_ip_protocol"}

// scrapeSeries are the series Prometheus adds to every job's targets.
var scrapeSeries = []string{"up", "scrape_duration_seconds", "scrape_samples_scraped", "scrape_samples_post_metric_relabeling", "scrape_series_added"}

// heraldMetricNames are the series names Herald's /metrics serves, with
// River's job counts (read from a jobs table as on a real store).
func heraldMetricNames(t *testing.T) []string {
	t.Helper()
	db, err := sql.Open("sqlite", t.TempDir()+"/jobs.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE river_job (kind TEXT, state TEXT); INSERT INTO river_job VALUES ('herald.send','discarded')`); err != nil {
		t.Fatal(err)
	}
	m := New(db, "v", "r")
	m.Observer("admin")("GET", "/readyz", 200, time.Millisecond) // a histogram has series once observed
	m.RetentionStep("rows", time.Millisecond)
	var names []string
	for _, line := range strings.Split(scrape(t, m), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		switch f[3] {
		case "histogram":
			names = append(names, f[2]+"_bucket", f[2]+"_count", f[2]+"_sum")
		case "summary":
			names = append(names, f[2], f[2]+"_count", f[2]+"_sum")
		default:
			names = append(names, f[2])
		}
	}
	return names
}

// selector is a vector selector of a PromQL expression: a metric name and
// the job its matchers name ("" when none).
type selector struct{ metric, job string }

var (
	identifier  = regexp.MustCompile(`^[A-Za-z_:][A-Za-z0-9_:]*`)
	jobMatcher  = regexp.MustCompile(`\bjob\s*=\s*"([^"]*)"`)
	groupClause = regexp.MustCompile(`^(by|without)\s*\(`)
)

// selectors finds the vector selectors of a PromQL expression: each name
// that is not a function, an aggregation, a keyword or a label of a
// grouping, with its label matchers. It knows the PromQL Herald's rules
// and dashboard write, not all of PromQL (promtool checks the syntax).
func selectors(expr string) []selector {
	var out []selector
	skipGroup := false // the next parenthesized list is grouping labels
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '[': // a range or subquery duration
			i += strings.IndexByte(expr[i:], ']') + 1
			continue
		case c == '"':
			i += strings.IndexByte(expr[i+1:], '"') + 2
			continue
		case c == '(' && skipGroup:
			i += strings.IndexByte(expr[i:], ')') + 1
			skipGroup = false
			continue
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (expr[i] >= '0' && expr[i] <= '9' || expr[i] == '.' || expr[i] >= 'a' && expr[i] <= 'z') {
				i++
			}
			continue
		}
		name := identifier.FindString(expr[i:])
		if name == "" {
			i++
			continue
		}
		i += len(name)
		rest := strings.TrimLeft(expr[i:], " \t\n")
		switch {
		case slices.Contains([]string{"by", "without", "on", "ignoring", "group_left", "group_right"}, name):
			skipGroup = true
		case slices.Contains([]string{"and", "or", "unless", "bool", "offset"}, name), strings.HasPrefix(rest, "("),
			groupClause.MatchString(rest): // a function, or an aggregation (sum by (le) (…))
		case strings.HasPrefix(rest, "{"):
			i = len(expr) - len(rest)
			end := strings.IndexByte(expr[i:], '}')
			s := selector{metric: name}
			if m := jobMatcher.FindStringSubmatch(expr[i : i+end]); m != nil {
				s.job = m[1]
			}
			out = append(out, s)
			i += end + 1
		default:
			out = append(out, selector{metric: name})
		}
	}
	return out
}

func TestSelectors(t *testing.T) {
	got := selectors(`sum by (le) (rate(a_bucket{job="herald",x=~"5.."}[5m])) / clamp_min(max(b), 1) > 0.2 and on (instance) up{job="j"} == 0 or count by (v) (c)`)
	want := []selector{{"a_bucket", "herald"}, {"b", ""}, {"up", "j"}, {"c", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestRulesSelectScrapedSeries: every series an alert rule or a Grafana
// panel selects is one the shipped scrape configuration produces: its job
// (when it names one) is a job of deploy/prometheus/prometheus.yml, and
// its metric is served by what that job scrapes (Herald's /metrics, the
// blackbox exporter's /probe) or added by Prometheus to every scrape.
// Every host a job scrapes is a service of deploy/compose.yaml, which
// runs Prometheus with that configuration.
func TestRulesSelectScrapedSeries(t *testing.T) {
	t.Parallel()
	read := func(parts ...string) string {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", "deploy"}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	jobs := scrapeJobs(t, read("prometheus", "prometheus.yml"))
	herald := heraldMetricNames(t)
	produces := func(j scrapeJob) []string {
		if j.metricsPath == "/probe" {
			return append(blackboxMetrics, scrapeSeries...)
		}
		return append(herald, scrapeSeries...)
	}
	compose := read("compose.yaml")
	for _, j := range jobs {
		for _, h := range j.hosts {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(h) + `:\s*$`).MatchString(compose) {
				t.Errorf("job %s scrapes %s, which is no service of deploy/compose.yaml", j.name, h)
			}
		}
	}
	if !strings.Contains(compose, "image: prom/prometheus") || !strings.Contains(compose, "./prometheus:/etc/prometheus") {
		t.Errorf("deploy/compose.yaml runs no Prometheus with deploy/prometheus's configuration")
	}
	check := func(where, expr string) {
		sels := selectors(expr)
		if len(sels) == 0 {
			t.Errorf("%s: %q selects no series", where, expr)
		}
		for _, s := range sels {
			if s.job != "" {
				j, ok := jobs[s.job]
				if !ok {
					t.Errorf("%s selects %s{job=%q}: prometheus.yml has no job %q", where, s.metric, s.job, s.job)
				} else if !slices.Contains(produces(j), s.metric) {
					t.Errorf("%s selects %s{job=%q}: that job's targets serve no %s", where, s.metric, s.job, s.metric)
				}
				continue
			}
			found := false
			for _, j := range jobs {
				found = found || slices.Contains(produces(j), s.metric)
			}
			if !found {
				t.Errorf("%s selects %s, which no job of prometheus.yml produces", where, s.metric)
			}
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*- alert: (\S+)\n\s*(?:#.*\n\s*)*expr: (\|\n((?:\s{10,}.*\n)+)|(.*))`).FindAllStringSubmatch(read("prometheus", "herald-rules.yml"), -1) {
		check("alert "+m[1], m[3]+m[4])
	}
	var board struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal([]byte(read("grafana", "herald-dashboard.json")), &board); err != nil {
		t.Fatal(err)
	}
	for _, p := range board.Panels {
		for _, tg := range p.Targets {
			check("panel "+p.Title, strings.ReplaceAll(tg.Expr, "$job", "herald"))
		}
	}
}

// TestDashboardShowsEveryMetric: every metric Herald serves (beyond the
// Go runtime's) has a panel on the Grafana board.
func TestDashboardShowsEveryMetric(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "deploy", "grafana", "herald-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range heraldMetricNames(t) {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
		if strings.HasPrefix(name, "herald_") && !strings.Contains(string(raw), base) {
			t.Errorf("Herald serves %s, and no panel of deploy/grafana/herald-dashboard.json shows it", name)
		}
	}
}
