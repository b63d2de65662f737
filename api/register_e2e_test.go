package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestRegisterConcurrent sends many registrations at once through the SDK
// API (on SQLite they share commits), mixed with consent switches refused
// inside their own transaction (marketingNight on without marketing): every
// registration answered 200 is stored with its user, and no refused switch
// changed anything.
func TestRegisterConcurrent(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	sdk := map[string]string{"x-api-key": a.APIKey}
	const workers, each = 16, 20
	var wg sync.WaitGroup
	errs := make(chan string, 2*workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("%d-%d", w, i)
				res := testenv.Send(t, http.DefaultClient, e.API.URL, testenv.Request{Method: http.MethodPost, URL: "/api/sdk/v2/push-token", Header: sdk,
					Body: map[string]any{"deviceId": "d" + id, "token": "tok-" + id, "platform": "android", "appSourceVersion": "1.6.0", "userId": "u" + id}})
				if res.Status != http.StatusOK {
					errs <- fmt.Sprintf("register %s: got %d %s, want 200", id, res.Status, res.Body)
				}
				res = testenv.Send(t, http.DefaultClient, e.API.URL, testenv.Request{Method: http.MethodPatch, URL: "/api/sdk/v2/consent", Header: sdk,
					Body: map[string]any{"deviceId": "d" + id, "marketingNight": true}})
				if res.Status != http.StatusBadRequest {
					errs <- fmt.Sprintf("night consent without marketing on %s: got %d %s, want 400", id, res.Status, res.Body)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	var devices, users, night int
	if err := e.QueryRow(`SELECT count(*), count(DISTINCT user_id), count(CASE WHEN marketing_night THEN 1 END) FROM devices WHERE app_id = ?`, a.ID).
		Scan(&devices, &users, &night); err != nil {
		t.Fatal(err)
	}
	if devices != workers*each || users != workers*each || night != 0 {
		t.Errorf("stored: got %d devices of %d users, %d with night consent; want %d of %d, 0", devices, users, night, workers*each, workers*each)
	}
	if u := e.UserView(a, "u3-7"); u.State != "registered" || len(u.Devices) != 1 || u.Devices[0].DeviceID != "d3-7" {
		t.Errorf("user u3-7: got %+v, want registered with device d3-7", u)
	}
}

// TestSDKDeletedApp checks that a deleted app's API key is unknown to the
// SDK API at once, though the SDK API keeps apps it read for a moment.
func TestSDKDeletedApp(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.Device(a, "d1", "tok-1", "ios", "1.6.0", "u1")
	if code := e.AdminJSON("DELETE", "/admin/v1/apps/"+a.ID, nil, nil); code >= 300 {
		t.Fatalf("delete app: got %d", code)
	}
	const path = "/api/sdk/v2/push-token"
	res := e.ServerDo(http.MethodPost, path, map[string]string{"x-api-key": a.APIKey},
		map[string]any{"deviceId": "d2", "token": "tok-2", "platform": "ios", "appSourceVersion": "1.6.0", "userId": "u2"})
	testenv.WantError(t, res, path, herald.ErrUnknownAPIKey)
}
