package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald"
)

// receiver is the webhook receiver of a run with delivery events
// (Options.WebhookEvents): on loopback in the bench process, answering
// 204 to every message and counting the push.sent events it got.
type receiver struct {
	srv  *httptest.Server
	sent atomic.Int64
}

func startReceiver() *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var m struct {
			Type string
			Data struct{ Events []struct{ Type string } }
		}
		if json.Unmarshal(body, &m) == nil && m.Type == herald.WebhookEventsBatch {
			for _, e := range m.Data.Events {
				if e.Type == string(herald.WebhookSent) {
					r.sent.Add(1)
				}
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	return r
}

// subscribe points the app's webhook at the receiver and turns every
// webhook event type on.
func (r *receiver) subscribe(ctx context.Context, srv Server, appID string) error {
	admin := adminClient{base: srv.AdminURL, token: srv.AdminToken, hc: &http.Client{Timeout: 30 * time.Second}}
	body, _ := json.Marshal(map[string]string{"url": r.srv.URL + "/hooks"})
	if err := admin.do(ctx, http.MethodPut, "/admin/v1/apps/"+appID+"/webhook", body, http.StatusOK, nil); err != nil {
		return err
	}
	body, _ = json.Marshal(map[string]any{"webhookEvents": herald.WebhookEvents})
	return admin.do(ctx, http.MethodPatch, "/admin/v1/apps/"+appID, body, http.StatusOK, nil)
}

// await waits until the receiver has a push.sent event of every one of
// n deliveries, or the deadline passes.
func (r *receiver) await(ctx context.Context, n int, deadline time.Duration) error {
	end := time.Now().Add(deadline)
	for r.sent.Load() < int64(n) {
		if time.Now().After(end) {
			return fmt.Errorf("bench: the webhook got %d push.sent events of %d in %s", r.sent.Load(), n, deadline)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
