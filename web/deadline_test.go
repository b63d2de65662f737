package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/web"
)

// TestUnavailable checks over HTTP that a store that does not answer before
// the request's deadline, or answers that it is unavailable, makes a 503
// ERR-AB-SYS-01 with Retry-After and the Idempotency-Key advice, never a
// 500 and never a hang.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"DeadlinePassed", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // a frozen database: the driver returns when the context ends
			web.Error(w, r, fmt.Errorf("query: %w", r.Context().Err()))
		}},
		{"DeadlinePassedDriverText", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // a driver that reports an interrupt of its own
			web.Error(w, r, errors.New("interrupted (9)"))
		}},
		{"StoreUnavailable", func(w http.ResponseWriter, r *http.Request) {
			web.Error(w, r, herald.Unavailable(errors.New("dial tcp: connection refused")))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(web.Deadline(50*time.Millisecond, tt.handler))
			defer srv.Close()
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(srv.URL + "/x")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				StatusCode    int
				Code, Message string
				Details       []herald.Detail
			}
			json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != http.StatusServiceUnavailable || body.StatusCode != 503 || body.Code != "ERR-AB-SYS-01" ||
				body.Message != "Service temporarily unavailable." {
				t.Errorf("got %d %+v, want 503 ERR-AB-SYS-01", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Retry-After"); got != "5" {
				t.Errorf("Retry-After: got %q, want 5", got)
			}
			if len(body.Details) != 1 || body.Details[0] != herald.ErrUnavailable.Details[0] {
				t.Errorf("details: got %+v, want the Idempotency-Key advice", body.Details)
			}
		})
	}
	t.Run("ClientGoneIsNoOutage", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		w := httptest.NewRecorder()
		web.Error(w, httptest.NewRequestWithContext(ctx, http.MethodGet, "/x", nil), context.Canceled)
		if w.Code == http.StatusServiceUnavailable {
			t.Errorf("a request its client abandoned: got 503, want it not counted as an outage")
		}
	})
}

// TestExtend: a handler that moves its request's deadline on (Extend)
// keeps working past the deadline Deadline first gave it, and what it
// derives from the context sees the new deadline; one that does not is
// ended at the first.
func TestExtend(t *testing.T) {
	t.Parallel()
	const first = 50 * time.Millisecond
	got := make(chan error, 1)
	srv := httptest.NewServer(web.Deadline(first, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		start, _ := ctx.Deadline()
		web.Extend(ctx, w, time.Hour)
		moved, _ := ctx.Deadline()
		derived, cancel := context.WithTimeout(ctx, 30*time.Minute)
		defer cancel()
		d, _ := derived.Deadline()
		switch {
		case moved.Sub(start) < 50*time.Minute || d.Sub(start) < 25*time.Minute:
			got <- fmt.Errorf("deadline %v, derived %v: want about an hour and 30 minutes past %v", moved, d, start)
			return
		}
		select {
		case <-ctx.Done():
			got <- fmt.Errorf("ended after Extend: %v", ctx.Err())
		case <-time.After(4 * first):
			got <- nil
		}
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-got; err != nil {
		t.Error(err)
	}
}

// TestDeadlineDerivedContexts: contexts derived from a request's context
// (every store call makes one) end with it, and do not each start a
// goroutine to watch it, as they would under a context type the context
// package does not know how to join.
func TestDeadlineDerivedContexts(t *testing.T) {
	started, ended := make(chan int), make(chan bool)
	h := web.Deadline(200*time.Millisecond, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := runtime.NumGoroutine()
		var cancels []context.CancelFunc
		var derived []context.Context
		for range 50 {
			ctx, cancel := context.WithCancel(r.Context())
			derived, cancels = append(derived, ctx), append(cancels, cancel)
		}
		started <- runtime.NumGoroutine() - before
		all, limit := true, time.After(5*time.Second) // the request's deadline passes meanwhile
		for _, ctx := range derived {
			select {
			case <-ctx.Done():
			case <-limit:
				all = false
			}
		}
		for _, c := range cancels {
			c()
		}
		ended <- all
	}))
	go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if n := <-started; n > 5 {
		t.Errorf("50 derived contexts started %d goroutines, want none of their own", n)
	}
	if !<-ended {
		t.Errorf("a derived context did not end with the request's deadline")
	}
}
