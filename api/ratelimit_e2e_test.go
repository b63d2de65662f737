package api_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
)

// hammer sends the i-th request from the i-th client until one is answered
// 429 or tries run out, and returns the 429 and the answers before it.
func (e *env) hammer(tries int, req func(i int) (*http.Client, testenv.Request)) (testenv.Response, []int) {
	e.T.Helper()
	var before []int
	for i := range tries {
		hc, r := req(i)
		res := testenv.Send(e.T, hc, e.API.URL, r)
		if res.Status == http.StatusTooManyRequests {
			return res, before
		}
		before = append(before, res.Status)
	}
	e.T.Fatalf("no 429 in %d requests (answers %v)", tries, before)
	return testenv.Response{}, nil
}

// wantTooMany checks the 429 body of spec section 7 and a Retry-After of
// whole seconds.
func wantTooManyBody(t *testing.T, res testenv.Response, path string) {
	t.Helper()
	want := `{"statusCode":429,"path":"` + path + `","code":"ERR-AB-RTL-01","message":"Too many requests."}` + "\n"
	if string(res.Body) != want {
		t.Errorf("429 body: got %s, want %s", res.Body, want)
	}
	if n, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After: got %q, want whole seconds ≥ 1", res.Header.Get("Retry-After"))
	}
}

func sdkRegister(a testenv.App, device string) testenv.Request {
	return testenv.Request{Method: http.MethodPost, URL: "/api/sdk/v2/push-token", Header: map[string]string{"x-api-key": a.APIKey},
		Body: map[string]any{"deviceId": device, "token": "tok-" + device, "platform": "android", "appSourceVersion": "1.6.0"}}
}

// TestSDKRateLimitPerClient hammers the SDK API from one address with a
// limit of 1 request/s (bursts of 2): it is answered 429 with Retry-After
// within a few requests, while another address and the Server API go on.
// With 20 tries the 429 can only be missed if each request took 1 s.
func TestSDKRateLimitPerClient(t *testing.T) {
	t.Parallel()
	e := start(t, testenv.Options{Config: server.Config{API: api.Limits{SDKClient: 1}}})
	a := e.NewApp(nil)
	one := fromAddr("127.0.0.1")
	res, before := e.hammer(20, func(i int) (*http.Client, testenv.Request) { return one, sdkRegister(a, "d"+strconv.Itoa(i)) })
	t.Logf("429 after %d accepted registrations", len(before))
	wantTooManyBody(t, res, "/api/sdk/v2/push-token")
	for _, s := range before {
		if s != http.StatusOK {
			t.Errorf("before the limit: got %d, want 200", s)
		}
	}
	if res := testenv.Send(t, fromAddr("127.0.0.2"), e.API.URL, sdkRegister(a, "other")); res.Status != http.StatusOK {
		t.Errorf("another address: got %d %s, want 200", res.Status, res.Body)
	}
	if res := e.ServerDo(http.MethodPost, "/api/push/v2/users", a.Keys(),
		map[string]any{"userIds": []string{"u1"}, "title": "t", "content": "c"}); res.Status != http.StatusOK {
		t.Errorf("Server API from the limited address: got %d %s, want 200", res.Status, res.Body)
	}
}

// TestSDKRateLimitPerApp: one app's SDK bucket (1/s, bursts of 2) is shared
// by every address; another app has its own.
func TestSDKRateLimitPerApp(t *testing.T) {
	t.Parallel()
	e := start(t, testenv.Options{Config: server.Config{API: api.Limits{SDK: 1}}})
	a, b := e.NewApp(nil), e.NewApp(nil)
	addrs := []*http.Client{fromAddr("127.0.0.1"), fromAddr("127.0.0.2"), fromAddr("127.0.0.3")}
	res, before := e.hammer(20, func(i int) (*http.Client, testenv.Request) {
		return addrs[i%len(addrs)], sdkRegister(a, "d"+strconv.Itoa(i))
	})
	t.Logf("429 after %d accepted registrations", len(before))
	wantTooManyBody(t, res, "/api/sdk/v2/push-token")
	if res := testenv.Send(t, http.DefaultClient, e.API.URL, sdkRegister(b, "d1")); res.Status != http.StatusOK {
		t.Errorf("another app: got %d %s, want 200", res.Status, res.Body)
	}
}

// TestAuthFailureRateLimitEndToEnd repeats a wrong secret: 401 until the
// address's failure bucket (1/s, bursts of 2) is spent, then 429 with
// Retry-After, and those 429s never looked the API key up (their request
// log lines name no app). The right secret from another address still
// pushes.
func TestAuthFailureRateLimitEndToEnd(t *testing.T) {
	t.Parallel()
	e := start(t, testenv.Options{Config: server.Config{API: api.Limits{AuthFailure: 1}}})
	a := e.NewApp(nil)
	const path = "/api/push/v2/users"
	body := map[string]any{"userIds": []string{"u1"}, "title": "t", "content": "c"}
	wrong := map[string]string{"x-api-key": a.APIKey, "x-secret-key": wrongSecret(a.SecretKey)}
	one := fromAddr("127.0.0.1")
	res, before := e.hammer(20, func(int) (*http.Client, testenv.Request) {
		return one, testenv.Request{Method: http.MethodPost, URL: path, Header: wrong, Body: body}
	})
	t.Logf("429 after %d refusals", len(before))
	if len(before) == 0 {
		t.Fatalf("got 429 at once, want 401 for the first wrong secret")
	}
	for _, s := range before {
		if s != http.StatusUnauthorized {
			t.Errorf("before the limit: got %d, want 401", s)
		}
	}
	wantTooManyBody(t, res, path)
	if got := regexp.MustCompile(`path=`+path+` appId="" status=429`).FindAllString(e.Log.String(), -1); len(got) == 0 {
		t.Errorf("log: got no 429 line without an app id, want the key never looked up")
	}
	right := testenv.Send(t, fromAddr("127.0.0.2"), e.API.URL, testenv.Request{Method: http.MethodPost, URL: path, Header: a.Keys(), Body: body})
	if right.Status != http.StatusOK {
		t.Errorf("right secret from another address: got %d %s, want 200", right.Status, right.Body)
	}
}

// wrongSecret returns a well-formed secret that differs from secret in its
// last character.
func wrongSecret(secret string) string {
	last := "x"
	if strings.HasSuffix(secret, last) {
		last = "y"
	}
	return secret[:len(secret)-1] + last
}
