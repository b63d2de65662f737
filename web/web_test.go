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

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

// TestErrorLogging: an error without a code answers 500 ERR-AB-SYS-00 and
// is logged at ERROR, unless the request was abandoned (its context ended
// and the error is that), which is logged at INFO.
func TestErrorLogging(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cancel    bool
		err       error
		wantLevel string
	}{
		{"Internal", false, errors.New("disk on fire"), "level=ERROR"},
		{"ClientGone", true, context.Canceled, "level=INFO"},
		{"OtherErrorAfterCancel", true, errors.New("disk on fire"), "level=ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			ctx, cancel := context.WithCancel(web.WithLogger(context.Background(), slog.New(slog.NewTextHandler(&logs, nil))))
			if tt.cancel {
				cancel()
			}
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/x", nil)
			w := httptest.NewRecorder()
			web.Error(w, r, tt.err)
			if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "ERR-AB-SYS-00") {
				t.Errorf("answer: got %d %s, want 500 ERR-AB-SYS-00", w.Code, w.Body)
			}
			if !strings.Contains(logs.String(), tt.wantLevel) {
				t.Errorf("log: got %q, want %s", logs.String(), tt.wantLevel)
			}
		})
	}
}

// TestRequestLogNamesErrorCode: the request log line of an error answer
// carries its code; a success's line has none.
func TestRequestLogNamesErrorCode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		handler  http.HandlerFunc
		wantCode string
	}{
		{"ClientError", func(w http.ResponseWriter, r *http.Request) { web.Error(w, r, herald.ErrBadSecretKey) }, "code=ERR-AB-SGK-13"},
		{"NotFound", nil, "code=ERR-AB-NTF-00"},
		{"OK", func(w http.ResponseWriter, r *http.Request) { web.JSON(w, http.StatusOK, "fine") }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			mux := http.NewServeMux()
			if tt.handler != nil {
				mux.Handle("/x", tt.handler)
			}
			h := web.Logged(slog.New(slog.NewTextHandler(&logs, nil)), nil, web.Mux(mux))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
			line := logs.String()
			if !strings.Contains(line, "msg=request") {
				t.Fatalf("log: got %q, want a request line", line)
			}
			if tt.wantCode == "" && strings.Contains(line, "code=") {
				t.Errorf("log: got %q, want no code on a success", line)
			}
			if tt.wantCode != "" && !strings.Contains(line, tt.wantCode) {
				t.Errorf("log: got %q, want %s", line, tt.wantCode)
			}
		})
	}
}
