package fcm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"

	"github.com/heraldpush/herald"
)

// bundle is what a client test works with.
type bundle struct {
	emu    *emulator.Emulator
	base   string
	client *fcm.Client
	cred   fcm.Credentials
}

// setup starts an emulator and a client whose credentials point at it.
func setup(tb testing.TB, project string, emuOpts emulator.Options, opts fcm.ClientOptions) bundle {
	tb.Helper()
	emu, base := fcmtest.StartEmulator(tb, emuOpts)
	opts.AllowAnyTokenURI = true
	client := fcm.NewClient(base, opts)
	tb.Cleanup(client.Close)
	cred := fcm.Credentials{Key: project + "/v1", JSON: fcmtest.ServiceAccountJSON(tb, project, base+"/token")}
	return bundle{emu: emu, base: base, client: client, cred: cred}
}

// message returns a typical message for token.
func message(token string) fcm.Message {
	return fcm.BuildMessage(token, fcm.Notification{Title: "Hello", Body: "World", ImageURL: "https://img.example/a.png",
		LinkURL: "https://example.com/x", PushID: "push_1", Badge: true})
}

// classOf returns the class of a Send error, or "" for nil.
func classOf(t *testing.T, err error) herald.SendClass {
	t.Helper()
	if err == nil {
		return ""
	}
	var se *herald.SendError
	if !errors.As(err, &se) {
		t.Fatalf("got error %T %v, want *herald.SendError", err, err)
	}
	return se.Class
}

func TestSendByTokenPrefix(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-prefix", emulator.Options{}, fcm.ClientOptions{})
	tests := []struct {
		token string
		want  []herald.SendClass // one per attempt; "" is success
	}{
		{"ok-1", []herald.SendClass{""}},
		{"unregistered-1", []herald.SendClass{herald.SendUnregistered, herald.SendUnregistered}},
		{"invalid-1", []herald.SendClass{herald.SendInvalidToken}},
		{"mismatch-1", []herald.SendClass{herald.SendInvalidToken}},
		{"quota-1", []herald.SendClass{herald.SendRetry, ""}},
		{"unavailable-1", []herald.SendClass{herald.SendRetry, ""}},
		{"auth-1", []herald.SendClass{herald.SendThirdPartyAuth, herald.SendThirdPartyAuth}},
		{"apnsauth-1", []herald.SendClass{herald.SendThirdPartyAuth, herald.SendThirdPartyAuth}},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			t.Parallel()
			for i, want := range tt.want {
				err := b.client.Send(t.Context(), b.cred, message(tt.token))
				if got := classOf(t, err); got != want {
					t.Fatalf("attempt %d: got class %q (%v), want %q", i+1, got, err, want)
				}
			}
			wantStored := 0
			if tt.want[len(tt.want)-1] == "" {
				wantStored = 1
			}
			got := b.emu.Messages(tt.token)
			if len(got) != wantStored {
				t.Fatalf("stored messages: got %d, want %d", len(got), wantStored)
			}
			for _, rec := range got {
				if rec.Proto != "HTTP/2.0" || rec.Project != "proj-prefix" {
					t.Errorf("got proto %q project %q, want HTTP/2.0 proj-prefix", rec.Proto, rec.Project)
				}
			}
		})
	}
}

func TestSendQuotaRetryAfter(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-quota", emulator.Options{}, fcm.ClientOptions{})
	err := b.client.Send(t.Context(), b.cred, message("quota-x"))
	var se *herald.SendError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want *herald.SendError", err)
	}
	if se.Status != 429 || se.Code != "QUOTA_EXCEEDED" || se.RetryAfter != time.Second {
		t.Errorf("got status %d code %q retry after %v, want 429 QUOTA_EXCEEDED 1s", se.Status, se.Code, se.RetryAfter)
	}
}

func TestSendCachesAccessToken(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-cache", emulator.Options{}, fcm.ClientOptions{})
	const sends = 50
	var wg sync.WaitGroup
	errs := make(chan error, sends)
	for range sends {
		wg.Go(func() { errs <- b.client.Send(t.Context(), b.cred, message("cache-token")) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("send: got %v, want nil", err)
		}
	}
	if got := b.emu.TokenGrants(); got != 1 {
		t.Errorf("token grants: got %d, want 1", got)
	}
	if got := b.emu.Stats().Accepted; got != sends {
		t.Errorf("accepted: got %d, want %d", got, sends)
	}
}

func TestSendDeniedTokenGrant(t *testing.T) {
	t.Parallel()
	b := setup(t, "denied-proj", emulator.Options{}, fcm.ClientOptions{})
	for attempt := 1; attempt <= 2; attempt++ {
		err := b.client.Send(t.Context(), b.cred, message("ok-1"))
		var se *herald.SendError
		if !errors.As(err, &se) {
			t.Fatalf("attempt %d: got %v, want *herald.SendError", attempt, err)
		}
		if se.Class != herald.SendAuth || se.Status != 400 || se.Code != "invalid_grant" {
			t.Errorf("attempt %d: got class %q status %d code %q, want auth 400 invalid_grant",
				attempt, se.Class, se.Status, se.Code)
		}
	}
	if got := b.emu.Stats().Received; got != 0 {
		t.Errorf("send requests: got %d, want 0", got)
	}
}

func TestSendRejectsForeignTokenURI(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-strict", emulator.Options{}, fcm.ClientOptions{})
	strict := fcm.NewClient(b.base, fcm.ClientOptions{})
	t.Cleanup(strict.Close)
	err := strict.Send(t.Context(), b.cred, message("ok-1"))
	var invalid *fcm.InvalidServiceAccountError
	if got := classOf(t, err); got != herald.SendAuth || !errors.As(err, &invalid) || invalid.Field != "token_uri" {
		t.Errorf("got class %q error %v, want auth wrapping an invalid token_uri", got, err)
	}
	if got := b.emu.TokenGrants(); got != 0 {
		t.Errorf("token grants: got %d, want 0", got)
	}
}

func TestSendWithoutKeyKeepsAppsApart(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-a", emulator.Options{}, fcm.ClientOptions{})
	for _, project := range []string{"proj-a", "proj-b"} {
		cred := fcm.Credentials{JSON: fcmtest.ServiceAccountJSON(t, project, b.base+"/token")}
		if err := b.client.Send(t.Context(), cred, message("nokey-"+project)); err != nil {
			t.Fatalf("send for %s: got %v, want nil", project, err)
		}
		if got := b.emu.Messages("nokey-" + project); len(got) != 1 || got[0].Project != project {
			t.Errorf("messages for %s: got %+v, want one for that project", project, got)
		}
	}
}

func TestSendTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-slow", emulator.Options{Latency: time.Hour}, fcm.ClientOptions{Timeout: 100 * time.Millisecond})
	err := b.client.Send(t.Context(), b.cred, message("ok-1"))
	if got := classOf(t, err); got != herald.SendRetry || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got class %q error %v, want retry wrapping context.DeadlineExceeded", got, err)
	}
}

func TestSendNetworkError(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-down", emulator.Options{}, fcm.ClientOptions{})
	down := fcm.NewClient("http://"+closedAddr(t), fcm.ClientOptions{AllowAnyTokenURI: true})
	t.Cleanup(down.Close)
	err := down.Send(t.Context(), b.cred, message("ok-1"))
	if got := classOf(t, err); got != herald.SendRetry {
		t.Errorf("got class %q (%v), want retry", got, err)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return addr
}

// BenchmarkSend measures sends through the lean transport, the default;
// BenchmarkSendStandard the same through net/http's.
func BenchmarkSend(b *testing.B) { benchmarkSend(b, fcm.TransportLean) }

func BenchmarkSendStandard(b *testing.B) { benchmarkSend(b, fcm.TransportStandard) }

func benchmarkSend(b *testing.B, transport string) {
	bb := setup(b, "proj-bench", emulator.Options{}, fcm.ClientOptions{Transport: transport})
	msg := message("bench-token")
	if err := bb.client.Send(b.Context(), bb.cred, msg); err != nil {
		b.Fatalf("warm-up send: %v", err)
	}
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := bb.client.Send(context.Background(), bb.cred, msg); err != nil {
				b.Errorf("send: %v", err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

func TestSendRefreshesCachedToken(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-refresh", emulator.Options{}, fcm.ClientOptions{})
	ctx := context.Background()
	if err := b.client.Send(ctx, b.cred, message("ok-1")); err != nil {
		t.Fatal(err)
	}
	// A THIRD_PARTY_AUTH_ERROR is about APNs or web push: the access
	// token stays cached.
	if got := classOf(t, b.client.Send(ctx, b.cred, message("auth-1"))); got != herald.SendThirdPartyAuth {
		t.Fatalf("got %s, want %s", got, herald.SendThirdPartyAuth)
	}
	if got := classOf(t, b.client.Send(ctx, b.cred, message("apnsauth-1"))); got != herald.SendThirdPartyAuth {
		t.Fatalf("legacy APNS_AUTH_ERROR: got %s, want %s", got, herald.SendThirdPartyAuth)
	}
	if got := b.emu.TokenGrants(); got != 1 {
		t.Fatalf("token grants after third-party auth errors: got %d, want 1", got)
	}
	// FCM refusing the access token (revoked): a fresh one is fetched and
	// the send succeeds on its second try.
	b.emu.RevokeTokens()
	if err := b.client.Send(ctx, b.cred, message("ok-2")); err != nil {
		t.Fatalf("send after revocation: got %v, want nil", err)
	}
	if got, s := b.emu.TokenGrants(), b.emu.Stats(); got != 2 || s.Received != 5 || s.Accepted != 2 {
		t.Fatalf("after revocation: got %d grants and %+v, want 2 grants, 5 requests, 2 accepted", got, s)
	}
	// New credentials under the same key are loaded, not the cached ones.
	fresh := fcm.Credentials{Key: b.cred.Key, JSON: fcmtest.ServiceAccountJSON(t, "proj-other", b.base+"/token")}
	if err := b.client.Send(ctx, fresh, message("ok-3")); err != nil {
		t.Fatal(err)
	}
	msgs := b.emu.Messages("ok-3")
	if got := b.emu.TokenGrants(); got != 3 || len(msgs) != 1 || msgs[0].Project != "proj-other" {
		t.Fatalf("after new credentials: got %d grants and %+v, want 3 grants and a send to proj-other", got, msgs)
	}
}

func TestSendRevokedInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-revoked-burst", emulator.Options{}, fcm.ClientOptions{})
	if err := b.client.Authorize(t.Context(), b.cred); err != nil {
		t.Fatal(err)
	}
	b.emu.RevokeTokens()
	// Fifty sends meet the revoked token together: each is sent again on a
	// fresh token, and the fresh token is shared.
	const sends = 50
	errs := make(chan error, sends)
	var wg sync.WaitGroup
	for i := range sends {
		wg.Go(func() { errs <- b.client.Send(t.Context(), b.cred, message(fmt.Sprintf("burst-%d", i))) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("send: got %v, want nil", err)
		}
	}
	if got := b.emu.Stats().Accepted; got != sends {
		t.Errorf("accepted: got %d, want %d", got, sends)
	}
	if got := b.emu.TokenGrants(); got > 3 {
		t.Errorf("token grants: got %d, want the fresh token shared (at most a few)", got)
	}
}

func TestSendFreshTokenRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, "revoked-proj", emulator.Options{}, fcm.ClientOptions{})
	err := b.client.Send(t.Context(), b.cred, message("ok-1"))
	var se *herald.SendError
	if !errors.As(err, &se) || se.Class != herald.SendAuth || se.Status != 401 {
		t.Fatalf("got %v, want herald.SendAuth with status 401", err)
	}
	if got, s := b.emu.TokenGrants(), b.emu.Stats(); got != 2 || s.Received != 2 {
		t.Errorf("got %d grants and %d requests, want 2 and 2 (one retry on a fresh token)", got, s.Received)
	}
}

func TestTokenEndpointOutage(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-outage", emulator.Options{}, fcm.ClientOptions{})
	b.emu.SetTokenEndpointStatus(503)
	err := b.client.Send(t.Context(), b.cred, message("ok-1"))
	var se *herald.SendError
	if !errors.As(err, &se) || se.Class != herald.SendRetry || se.Status != 503 {
		t.Fatalf("token endpoint 503: got %v, want herald.SendRetry with status 503", err)
	}
	b.emu.SetTokenEndpointStatus(0)
	if err := b.client.Send(t.Context(), b.cred, message("ok-1")); err != nil {
		t.Fatalf("token endpoint back: got %v, want nil", err)
	}

	// A token endpoint that refuses connections is an outage too.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/token"
	ln.Close()
	cred := fcm.Credentials{Key: "down", JSON: fcmtest.ServiceAccountJSON(t, "proj-down", closed)}
	if got := classOf(t, b.client.Authorize(t.Context(), cred)); got != herald.SendRetry {
		t.Fatalf("refused connection: got %s, want %s", got, herald.SendRetry)
	}
}

// TestSendTransports: Send works, and classifies FCM's answers alike,
// through each transport; an unknown transport fails every send.
func TestSendTransports(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{fcm.TransportLean, fcm.TransportStandard} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "proj-transport-"+transport, emulator.Options{}, fcm.ClientOptions{Transport: transport})
			if err := b.client.Send(t.Context(), b.cred, message("ok-1")); err != nil {
				t.Fatalf("got %v, want nil", err)
			}
			if got := classOf(t, b.client.Send(t.Context(), b.cred, message("unregistered-1"))); got != herald.SendUnregistered {
				t.Errorf("got %s, want %s", got, herald.SendUnregistered)
			}
		})
	}
	t.Run("Unknown", func(t *testing.T) {
		t.Parallel()
		b := setup(t, "proj-transport-unknown", emulator.Options{}, fcm.ClientOptions{Transport: "h1"})
		err := b.client.Send(t.Context(), b.cred, message("ok-1"))
		if got := classOf(t, err); got != herald.SendRetry || !strings.Contains(err.Error(), `"h1"`) {
			t.Errorf("got %v, want herald.SendRetry naming the transport", err)
		}
	})
}
