package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
)

// env is a running herald serve with an FCM emulator, for end-to-end tests.
type env struct {
	t        *testing.T
	svc      *service
	emu      *emulator.Emulator
	emuURL   string
	logs     *syncBuffer
	dataDir  string
	adminTok string
}

type syncBuffer struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{mu: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.String()
}

// start runs the service on port 0 against a fresh emulator.
func start(t *testing.T, tweak ...func(*config)) *env {
	t.Helper()
	emu, emuURL := fcmtest.StartEmulator(t, emulator.Options{})
	e := &env{t: t, emu: emu, emuURL: emuURL, logs: newSyncBuffer(), dataDir: t.TempDir(), adminTok: "test-admin-token"}
	e.startService(tweak...)
	return e
}

func (e *env) startService(tweak ...func(*config)) {
	cfg := config{
		Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", DataDir: e.dataDir, AdminToken: e.adminTok,
		FCMEndpoint: e.emuURL, FCMAllowAnyTokenURI: true, WebhookAllowPrivate: true,
		LogLevel: "info", LogFormat: "text",
	}
	for _, f := range tweak {
		f(&cfg)
	}
	svc, err := startService(context.Background(), cfg, io.Discard, e.logs)
	if err != nil {
		e.t.Fatalf("start service: %v", err)
	}
	e.svc = svc
	e.t.Cleanup(func() { svc.shutdown() })
}

// admin calls the admin API and decodes the answer into out.
func (e *env) admin(method, path string, body any, out any) int {
	e.t.Helper()
	var rd io.Reader
	if b, ok := body.([]byte); ok {
		rd = bytes.NewReader(b)
	} else if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.svc.AdminURL+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.adminTok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// testApp is an app created through the admin API, with FCM credentials.
type testApp struct {
	ID, APIKey, SecretKey string
	c                     *client.Client
}

func (e *env) newApp(settings map[string]any) testApp {
	e.t.Helper()
	if settings == nil {
		settings = map[string]any{}
	}
	if settings["name"] == nil {
		settings["name"] = "test app"
	}
	var a struct{ AppID, APIKey, SecretKey string }
	if code := e.admin("POST", "/admin/v1/apps", settings, &a); code != http.StatusCreated {
		e.t.Fatalf("create app: got %d, want 201", code)
	}
	creds := fcmtest.ServiceAccountJSON(e.t, "proj-"+a.AppID[len(a.AppID)-6:], e.emuURL+"/token")
	if code := e.admin("PUT", "/admin/v1/apps/"+a.AppID+"/fcm-credentials", creds, nil); code != http.StatusNoContent {
		e.t.Fatalf("put fcm credentials: got %d, want 204", code)
	}
	return testApp{ID: a.AppID, APIKey: a.APIKey, SecretKey: a.SecretKey, c: client.New(e.svc.PublicURL, a.APIKey, a.SecretKey, nil)}
}

// register registers n devices, one per user "u<i>", with tokens prefix+i.
func (e *env) register(a testApp, prefix string, users ...string) {
	e.t.Helper()
	for i, u := range users {
		_, err := a.c.RegisterPushToken(context.Background(), client.RegisterRequest{
			DeviceID: fmt.Sprintf("dev-%s-%d", u, i), Token: prefix + u, Platform: "android", AppSourceVersion: "1.6.0", UserID: u,
		})
		if err != nil {
			e.t.Fatalf("register %s: %v", u, err)
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for work
	}
}

// pushStatus reads a push's admin record.
func (e *env) push(id string) pushView {
	e.t.Helper()
	var p pushView
	if code := e.admin("GET", "/admin/v1/pushes/"+id, nil, &p); code != http.StatusOK {
		e.t.Fatalf("get push %s: got %d", id, code)
	}
	return p
}

type pushView struct {
	PushID, Status, RequestGroupID string
	ServerActions                  float64
	Counts                         struct {
		RequestedUsers, Tokens, Sent, Failed, SuppressedConsent, SuppressedNight, Unreachable int
	}
	UnreachableUsers []struct{ UserID, Reason string }
}
