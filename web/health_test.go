package web_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldpush/herald/web"
)

// unready is an error with a reason safe to answer, found after the
// migrations were checked.
type unready struct{}

func (unready) Error() string {
	return "database cannot take writes: write /data/herald.db-wal: no space left"
}
func (unready) Reason() string     { return "database cannot take writes: disk full" }
func (unready) Migrations() string { return "current" }

// pending is the error of a probe that found migrations to apply.
type pending struct{}

func (pending) Error() string      { return "database migrations are not current: migrations pending" }
func (pending) Reason() string     { return "database migrations are not current" }
func (pending) Migrations() string { return "pending" }

func TestReadyz(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		state      web.Readiness
		wantStatus int
		wantBody   string
	}{
		{"OK", web.Readiness{Database: "postgres"}, http.StatusOK, `{"status":"ready","database":"postgres","migrations":"current"}`},
		{"ErrWithReason", web.Readiness{Database: "sqlite", Err: unready{}}, http.StatusServiceUnavailable,
			`{"status":"unavailable","database":"sqlite","migrations":"current","reason":"database cannot take writes: disk full"}`},
		{"ErrWrappedReason", web.Readiness{Database: "sqlite", Err: errors.Join(errors.New("probe"), unready{})}, http.StatusServiceUnavailable,
			`{"status":"unavailable","database":"sqlite","migrations":"current","reason":"database cannot take writes: disk full"}`},
		{"ErrMigrationsPending", web.Readiness{Database: "postgres", Err: pending{}}, http.StatusServiceUnavailable,
			`{"status":"unavailable","database":"postgres","migrations":"pending","reason":"database migrations are not current"}`},
		{"ErrOtherNeverAnswered", web.Readiness{Database: "postgres", Err: errors.New("open /secret/path: permission denied")}, http.StatusServiceUnavailable,
			`{"status":"unavailable","database":"postgres","migrations":"unknown","reason":"not ready"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mux := http.NewServeMux()
			web.Health(mux, func(*http.Request) web.Readiness { return tt.state })
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if got := strings.TrimSpace(rec.Body.String()); rec.Code != tt.wantStatus || got != tt.wantBody {
				t.Errorf("got %d %s, want %d %s", rec.Code, got, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

// TestReadyzLogsChangesOnly probes a store that goes down for five probes
// and comes back: one "not ready" line and one "ready again", not one a
// probe (a load balancer probes every few seconds for as long as it lasts).
func TestReadyzLogsChangesOnly(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	states := []error{nil, unready{}, unready{}, unready{}, unready{}, unready{}, nil, nil}
	i := 0
	mux := http.NewServeMux()
	web.Health(mux, func(*http.Request) web.Readiness { return web.Readiness{Database: "sqlite", Err: states[i]} })
	ctx := web.WithLogger(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)))
	for i = range states {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, http.MethodGet, "/readyz", nil))
	}
	if got := strings.Count(logs.String(), `msg="not ready"`); got != 1 {
		t.Errorf("not ready lines: got %d, want 1\n%s", got, logs.String())
	}
	if got := strings.Count(logs.String(), `msg="ready again"`); got != 1 {
		t.Errorf("ready again lines: got %d, want 1\n%s", got, logs.String())
	}
}
