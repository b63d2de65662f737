package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/api"
)

// fakeNow is the moment every request of a fake handler is received:
// 22:04:30 in Seoul, the example of spec section 2.5.
var fakeNow = time.Date(2025, 6, 11, 13, 4, 30, 0, time.UTC)

// call is one write the handler asked of the next layer.
type call struct {
	Op       string
	UserID   string
	UserIDs  []string
	Topic    string
	Token    string
	DeviceID string
	// MapTo is the user SetDeviceUser maps the device to; nil unmaps it.
	MapTo      *string
	Change     herald.ConsentChange
	Reg        herald.DeviceRegistration
	Push       herald.Push
	Recipients []herald.Recipient
}

// fake is the next layer of the public handler in unit and fuzz tests: one
// app that passes every gate, and a record of each write asked for. The
// embedded Store is nil, so a method not written here panics when called.
type fake struct {
	api.Store
	app    herald.App
	secret string
	mu     sync.Mutex
	calls  []call
}

func newFake() *fake {
	secret := herald.NewSecretKey()
	return &fake{secret: secret, app: herald.App{
		ID: "app_fake", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret(secret), Tier: herald.TierBusiness,
		AppUserEnabled: true, Registered: true, TimeZone: herald.DefaultTimeZone, FCMCredentials: []byte("sealed"),
	}}
}

func (f *fake) record(c call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
}

// take returns the calls recorded since the last take.
func (f *fake) take() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

func (f *fake) AppByAPIKey(_ context.Context, key string) (herald.App, error) {
	if key != f.app.APIKey {
		return herald.App{}, herald.ErrNotFound
	}
	return f.app, nil
}

func (f *fake) Accept(_ context.Context, p herald.Push, rs []herald.Recipient, _ *herald.Idempotency) (string, bool, error) {
	p.ID, p.CreatedAt = "", time.Time{} // fresh on every request
	p.Ledger = slices.Clone(p.Ledger)
	for i := range p.Ledger {
		p.Ledger[i].PushID, p.Ledger[i].At = "", time.Time{}
	}
	f.record(call{Op: "push", Push: p, Recipients: rs})
	return "push_fake", false, nil
}

func (f *fake) SetUserConsent(_ context.Context, _, userID string, c herald.ConsentChange) (herald.Consent, error) {
	f.record(call{Op: "consent", UserID: userID, Change: c})
	return herald.Consent{}, nil
}

func (f *fake) WithdrawUser(_ context.Context, _, userID string) error {
	f.record(call{Op: "withdraw", UserID: userID})
	return nil
}

func (f *fake) RegisterDevice(_ context.Context, _ string, reg herald.DeviceRegistration) (herald.Device, error) {
	f.record(call{Op: "register", Reg: reg})
	return herald.Device{ID: reg.DeviceID, UserID: reg.UserID}, nil
}

func (f *fake) SetDeviceUser(_ context.Context, _, deviceID string, userID *string) (herald.Device, error) {
	f.record(call{Op: "device-user", DeviceID: deviceID, MapTo: userID})
	return herald.Device{ID: deviceID, UserID: userID}, nil
}

func (f *fake) SetDeviceConsent(_ context.Context, _, deviceID string, c herald.ConsentChange) (herald.Device, error) {
	f.record(call{Op: "device-consent", DeviceID: deviceID, Change: c})
	return herald.Device{ID: deviceID}, nil
}

func (f *fake) DeleteDevice(_ context.Context, _, deviceID string) error {
	f.record(call{Op: "delete-device", DeviceID: deviceID})
	return nil
}

func (f *fake) DeleteToken(_ context.Context, _, token string) error {
	f.record(call{Op: "delete-token", Token: token})
	return nil
}

func (f *fake) SubscribeTopic(_ context.Context, _, topic string, ids []string) (int, error) {
	f.record(call{Op: "subscribe", Topic: topic, UserIDs: ids})
	return len(ids), nil
}

func (f *fake) UnsubscribeTopic(_ context.Context, _, topic string, ids []string) (int, error) {
	f.record(call{Op: "unsubscribe", Topic: topic, UserIDs: ids})
	return len(ids), nil
}

// fakeAPI is the public handler over a fake.
type fakeAPI struct {
	*fake
	h http.Handler
}

func newFakeAPI() fakeAPI {
	f := newFake()
	h := api.NewHandler(api.Config{Store: f, Pushes: f, Now: func() time.Time { return fakeNow },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return fakeAPI{fake: f, h: h}
}

// fakeAnswer is what the handler answered, the error body read when there
// is one.
type fakeAnswer struct {
	Status int
	Body   string
	Err    struct {
		Code    string
		Details []herald.Detail
	}
}

// do sends body to path in process, with the Server API keys (or only the
// API key on the SDK API).
func (a fakeAPI) do(method, path, body string) fakeAnswer {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", a.app.APIKey)
	if !strings.HasPrefix(path, "/api/sdk/") {
		req.Header.Set("x-secret-key", a.secret)
	}
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, req)
	out := fakeAnswer{Status: rec.Code, Body: rec.Body.String()}
	if rec.Code >= 400 {
		json.Unmarshal(rec.Body.Bytes(), &out.Err)
	}
	return out
}

// wantUnknown checks a 400 naming field as an unknown member, and that
// nothing was asked of the next layer.
func (a fakeAPI) wantUnknown(t *testing.T, res fakeAnswer, field string) {
	t.Helper()
	if res.Status != http.StatusBadRequest || res.Err.Code != herald.ErrInvalidRequest.Code {
		t.Fatalf("got %d %s, want 400 %s", res.Status, res.Body, herald.ErrInvalidRequest.Code)
	}
	want := herald.Detail{Field: field, Reason: "unknown field"}
	found := false
	for _, d := range res.Err.Details {
		found = found || d == want
	}
	if !found {
		t.Errorf("details: got %+v, want one %+v", res.Err.Details, want)
	}
	if calls := a.take(); len(calls) > 0 {
		t.Errorf("a refused request asked for %+v, want nothing", calls)
	}
}
