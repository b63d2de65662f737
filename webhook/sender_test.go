package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/webhook"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// received is what a test receiver saw.
type received struct {
	method string
	header http.Header
	body   []byte
}

// newReceiver starts a receiver that records the request and answers status.
func newReceiver(t *testing.T, status int) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{method: r.Method, header: r.Header.Clone(), body: body}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestSenderSend(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 11, 9, 30, 0, 0, time.UTC)
	srv, got := newReceiver(t, http.StatusNoContent)
	s := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true, Now: func() time.Time { return now }})
	body := []byte(`{"type":"push.undeliverable"}`)

	if err := s.Send(context.Background(), srv.URL+"/hook", testSecret, "msg_1", body); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := <-got
	if r.method != http.MethodPost {
		t.Errorf("method: got %s, want POST", r.method)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	if id := r.header.Get("webhook-id"); id != "msg_1" {
		t.Errorf("webhook-id: got %q, want msg_1", id)
	}
	if ts, want := r.header.Get("webhook-timestamp"), strconv.FormatInt(now.Unix(), 10); ts != want {
		t.Errorf("webhook-timestamp: got %q, want %q", ts, want)
	}
	if string(r.body) != string(body) {
		t.Errorf("body: got %s, want %s", r.body, body)
	}
	if err := webhook.Verify(testSecret, r.header, r.body, now, 0); err != nil {
		t.Errorf("Verify: got %v, want nil", err)
	}
}

func TestSenderStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		wantErr bool
	}{
		{status: http.StatusOK},
		{status: http.StatusAccepted},
		{status: http.StatusNoContent},
		{status: http.StatusBadRequest, wantErr: true},
		{status: http.StatusGone, wantErr: true},
		{status: http.StatusInternalServerError, wantErr: true},
		{status: http.StatusServiceUnavailable, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			t.Parallel()
			srv, _ := newReceiver(t, tt.status)
			s := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true})
			err := s.Send(context.Background(), srv.URL, testSecret, "msg_1", []byte(`{}`))
			if !tt.wantErr {
				if err != nil {
					t.Errorf("got %v, want nil", err)
				}
				return
			}
			var de *webhook.DeliveryError
			if !errors.As(err, &de) || de.Status != tt.status {
				t.Errorf("got %v, want *DeliveryError with Status %d", err, tt.status)
			}
		})
	}
}

func TestSenderNoRedirect(t *testing.T) {
	t.Parallel()
	var targetHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		targetHits.Add(1)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true})

	err := s.Send(context.Background(), srv.URL+"/hook", testSecret, "msg_1", []byte(`{}`))
	var de *webhook.DeliveryError
	if !errors.As(err, &de) || de.Status != http.StatusTemporaryRedirect {
		t.Errorf("got %v, want *DeliveryError with Status 307", err)
	}
	if n := targetHits.Load(); n != 0 {
		t.Errorf("redirect target hit %d times, want 0", n)
	}
}

func TestSenderTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	s := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true, Timeout: 50 * time.Millisecond})

	err := s.Send(context.Background(), srv.URL, testSecret, "msg_1", []byte(`{}`))
	var de *webhook.DeliveryError
	if !errors.As(err, &de) || de.Status != 0 || de.Err == nil {
		t.Fatalf("got %v, want *DeliveryError with a transport error", err)
	}
	var netErr interface{ Timeout() bool }
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Errorf("got %v, want a timeout", err)
	}
}

func TestSenderCancelled(t *testing.T) {
	t.Parallel()
	srv, _ := newReceiver(t, http.StatusOK)
	s := webhook.NewSender(webhook.SenderOptions{AllowPrivate: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	err := s.Send(ctx, srv.URL, testSecret, "msg_1", []byte(`{}`))
	var de *webhook.DeliveryError
	if !errors.As(err, &de) || !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want *DeliveryError wrapping context.Canceled", err)
	}
}

func TestSenderRefusesInvalidInput(t *testing.T) {
	t.Parallel()
	srv, got := newReceiver(t, http.StatusOK)
	tests := []struct {
		name   string
		url    string
		secret string
		want   error
	}{
		{name: "ErrLoopbackURL", url: "https://" + srv.Listener.Addr().String(), secret: testSecret, want: webhook.ErrPrivateAddress},
		{name: "ErrHTTPURL", url: "http://example.com/h", secret: testSecret},
		{name: "ErrBadSecret", url: "https://example.com/h", secret: "not-a-secret", want: webhook.ErrInvalidSecret},
	}
	s := webhook.NewSender(webhook.SenderOptions{})
	for _, tt := range tests {
		err := s.Send(context.Background(), tt.url, tt.secret, "msg_1", []byte(`{}`))
		var de *webhook.DeliveryError
		if err == nil || errors.As(err, &de) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: got %v, want a plain error (%v)", tt.name, err, tt.want)
		}
	}
	select {
	case r := <-got:
		t.Errorf("receiver got a %s request, want none", r.method)
	default:
	}
}
