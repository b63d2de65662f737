package metrics

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
