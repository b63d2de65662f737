package web_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/heraldpush/herald/web"
)

// unready is an error with a reason safe to answer.
type unready struct{}

func (unready) Error() string {
	return "database cannot take writes: write /data/herald.db-wal: no space left"
}
func (unready) Reason() string { return "database cannot take writes: disk full" }

func TestReadyz(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantBody   string
	}{
		{"OK", nil, http.StatusOK, `{"status":"ready"}`},
		{"ErrWithReason", unready{}, http.StatusServiceUnavailable, `{"status":"unavailable","reason":"database cannot take writes: disk full"}`},
		{"ErrWrappedReason", errors.Join(errors.New("probe"), unready{}), http.StatusServiceUnavailable, `{"status":"unavailable","reason":"database cannot take writes: disk full"}`},
		{"ErrOtherNeverAnswered", errors.New("open /secret/path: permission denied"), http.StatusServiceUnavailable, `{"status":"unavailable","reason":"not ready"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mux := http.NewServeMux()
			web.Health(mux, func(*http.Request) error { return tt.err })
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if got := strings.TrimSpace(rec.Body.String()); rec.Code != tt.wantStatus || got != tt.wantBody {
				t.Errorf("got %d %s, want %d %s", rec.Code, got, tt.wantStatus, tt.wantBody)
			}
		})
	}
}
