package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

const (
	testAPIKey    = "hk_0123456789abcdefghijABCDEFGHIJkl"
	testSecretKey = "hs_0123456789abcdefghijABCDEFGHIJklmnopqrst"
)

// seen is the request a fake server received.
type seen struct {
	method string
	path   string
	header http.Header
	body   any // decoded JSON
}

// answer is what a fake server replies.
type answer struct {
	status int
	header map[string]string
	body   string
}

// newServer starts a fake Herald that records one request and replies a.
func newServer(t *testing.T, a answer) (*client.Client, <-chan seen) {
	t.Helper()
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body %q is not JSON: %v", raw, err)
		}
		got <- seen{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return client.New(srv.URL+"/", testAPIKey, testSecretKey, nil), got
}

// decodeJSON decodes a literal for comparison with a recorded body.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return v
}

func TestRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		call       func(ctx context.Context, c *client.Client) (any, error)
		answer     answer
		wantMethod string
		wantPath   string
		wantSecret bool
		wantBody   string
		want       any
	}{
		{
			name: "PushUsers",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.PushUsers(ctx, client.PushUsersRequest{
					UserIDs: []any{"u1", 2}, Title: "t", Content: "c",
					Options: &client.Options{IsUsingBadge: new(false), RequestGroupID: "group1", ScheduleTime: "2025-06-11T22:06"},
				})
			},
			answer:     answer{status: 200, header: map[string]string{"X-Push-Id": "push_01"}, body: `"Push has been scheduled successfully."`},
			wantMethod: "POST", wantPath: "/api/push/v2/users", wantSecret: true,
			wantBody: `{"userIds":["u1",2],"title":"t","content":"c","options":{"isUsingBadge":false,"requestGroupId":"group1","scheduleTime":"2025-06-11T22:06"}}`,
			want:     client.PushResult{Message: "Push has been scheduled successfully.", PushID: "push_01"},
		},
		{
			name: "PushMessages",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.PushMessages(ctx, client.PushMessagesRequest{
					Messages: []client.Message{
						{UserID: "u1", Title: "t1", Content: "c1", LinkURL: "https://l", ImageURL: "https://i"},
						{UserID: 7, Title: "t2", Content: "c2"},
					},
					Options: &client.Options{IsMarketing: new(true)},
				})
			},
			answer:     answer{status: 200, header: map[string]string{"X-Push-Id": "push_02"}, body: `"Push has been requested to be sent."`},
			wantMethod: "POST", wantPath: "/api/push/v2/messages", wantSecret: true,
			wantBody: `{"messages":[{"userId":"u1","title":"t1","content":"c1","linkURL":"https://l","imageURL":"https://i"},{"userId":7,"title":"t2","content":"c2"}],"options":{"isMarketing":true}}`,
			want:     client.PushResult{Message: "Push has been requested to be sent.", PushID: "push_02"},
		},
		{
			name: "SetMarketing",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.SetMarketing(ctx, 123, client.MarketingState{Marketing: new(true)})
			},
			answer:     answer{status: 200, body: `{"marketing":true,"marketingNight":false}`},
			wantMethod: "PATCH", wantPath: "/api/app-user/v2/marketing", wantSecret: true,
			wantBody: `{"userId":123,"state":{"marketing":true}}`,
			want:     client.Consent{Marketing: true},
		},
		{
			name: "DeleteUser",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.DeleteUser(ctx, "u1")
			},
			answer:     answer{status: 200, body: `{"message":"The withdrawal process has been executed."}`},
			wantMethod: "DELETE", wantPath: "/api/app-user/v2", wantSecret: true,
			wantBody: `{"userId":"u1"}`,
			want:     "The withdrawal process has been executed.",
		},
		{
			name: "RegisterPushToken",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.RegisterPushToken(ctx, client.RegisterRequest{DeviceID: "d1", Token: "tok", Platform: "ios", AppSourceVersion: "1.6.0"})
			},
			answer:     answer{status: 200, body: `{"deviceId":"d1","userId":null,"marketing":false,"marketingNight":false}`},
			wantMethod: "POST", wantPath: "/api/sdk/v2/push-token",
			wantBody: `{"deviceId":"d1","token":"tok","platform":"ios","appSourceVersion":"1.6.0"}`,
			want:     client.Device{DeviceID: "d1"},
		},
		{
			name: "RegisterPushTokenWithUser",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.RegisterPushToken(ctx, client.RegisterRequest{DeviceID: "d1", Token: "tok", Platform: "android", AppSourceVersion: "1.5.0", UserID: 42})
			},
			answer:     answer{status: 200, body: `{"deviceId":"d1","userId":"42","marketing":true,"marketingNight":true}`},
			wantMethod: "POST", wantPath: "/api/sdk/v2/push-token",
			wantBody: `{"deviceId":"d1","token":"tok","platform":"android","appSourceVersion":"1.5.0","userId":42}`,
			want:     client.Device{DeviceID: "d1", UserID: new("42"), Marketing: true, MarketingNight: true},
		},
		{
			name: "SetUserID",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.SetUserID(ctx, "d1", "u1")
			},
			answer:     answer{status: 200, body: `{"deviceId":"d1","userId":"u1","marketing":false,"marketingNight":false}`},
			wantMethod: "POST", wantPath: "/api/sdk/v2/user",
			wantBody: `{"deviceId":"d1","userId":"u1"}`,
			want:     client.Device{DeviceID: "d1", UserID: new("u1")},
		},
		{
			name: "SetUserIDNull",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.SetUserID(ctx, "d1", nil)
			},
			answer:     answer{status: 200, body: `{"deviceId":"d1","userId":null,"marketing":false,"marketingNight":false}`},
			wantMethod: "POST", wantPath: "/api/sdk/v2/user",
			wantBody: `{"deviceId":"d1","userId":null}`,
			want:     client.Device{DeviceID: "d1"},
		},
		{
			name: "SetConsent",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.SetConsent(ctx, "d1", nil, new(false))
			},
			answer:     answer{status: 200, body: `{"deviceId":"d1","marketing":true,"marketingNight":false}`},
			wantMethod: "PATCH", wantPath: "/api/sdk/v2/consent",
			wantBody: `{"deviceId":"d1","marketingNight":false}`,
			want:     client.DeviceConsent{DeviceID: "d1", Marketing: true},
		},
		{
			name: "DeletePushToken",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return nil, c.DeletePushToken(ctx, "d1")
			},
			answer:     answer{status: 200, body: `{"message":"ok"}`},
			wantMethod: "DELETE", wantPath: "/api/sdk/v2/push-token",
			wantBody: `{"deviceId":"d1"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, got := newServer(t, tt.answer)
			res, err := tt.call(context.Background(), c)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if !reflect.DeepEqual(res, tt.want) {
				t.Errorf("result: got %+v, want %+v", res, tt.want)
			}
			r := <-got
			if r.method != tt.wantMethod || r.path != tt.wantPath {
				t.Errorf("request: got %s %s, want %s %s", r.method, r.path, tt.wantMethod, tt.wantPath)
			}
			checkHeaders(t, r.header, tt.wantSecret)
			if want := decodeJSON(t, tt.wantBody); !reflect.DeepEqual(r.body, want) {
				t.Errorf("body: got %v, want %v", r.body, want)
			}
		})
	}
}

// checkHeaders checks the credentials and content type of a request.
func checkHeaders(t *testing.T, h http.Header, wantSecret bool) {
	t.Helper()
	if got := h.Get("x-api-key"); got != testAPIKey {
		t.Errorf("x-api-key: got %q, want %q", got, testAPIKey)
	}
	wantSecretKey := ""
	if wantSecret {
		wantSecretKey = testSecretKey
	}
	if got := h.Get("x-secret-key"); got != wantSecretKey {
		t.Errorf("x-secret-key: got %q, want %q", got, wantSecretKey)
	}
	if got := h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", got)
	}
	if got := h.Get("Idempotency-Key"); got != "" {
		t.Errorf("Idempotency-Key: got %q, want none", got)
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	c, got := newServer(t, answer{status: 200, body: `"Push has been requested to be sent."`})
	ctx := client.WithIdempotencyKey(context.Background(), "key-1")
	if _, err := c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"}); err != nil {
		t.Fatal(err)
	}
	if k := (<-got).header.Get("Idempotency-Key"); k != "key-1" {
		t.Errorf("Idempotency-Key: got %q, want key-1", k)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer answer
		want   client.Error
	}{
		{
			name:   "ErrWithdrawn",
			answer: answer{status: 410, body: `{"statusCode":410,"path":"/api/app-user/v2","code":"ERR-AB-ACS-22","message":"User already withdrawn."}`},
			want:   client.Error{StatusCode: 410, Path: "/api/app-user/v2", Code: "ERR-AB-ACS-22", Message: "User already withdrawn."},
		},
		{
			name: "ErrValidationDetails",
			answer: answer{status: 400, body: `{"statusCode":400,"path":"/api/app-user/v2","code":"ERR-AB-VAL-00",` +
				`"message":"Incorrect request. Server cannot understand request.","details":[{"field":"userId","reason":"required"}]}`},
			want: client.Error{StatusCode: 400, Path: "/api/app-user/v2", Code: "ERR-AB-VAL-00",
				Message: "Incorrect request. Server cannot understand request.", Details: []client.Detail{{Field: "userId", Reason: "required"}}},
		},
		{
			name: "ErrRateLimited",
			answer: answer{status: 429, header: map[string]string{"Retry-After": "3"},
				body: `{"statusCode":429,"path":"/api/app-user/v2","code":"ERR-AB-RTL-01","message":"Too many requests."}`},
			want: client.Error{StatusCode: 429, Path: "/api/app-user/v2", Code: "ERR-AB-RTL-01", Message: "Too many requests.", RetryAfter: 3 * time.Second},
		},
		{
			name:   "ErrNotJSON",
			answer: answer{status: 502, header: map[string]string{"Content-Type": "text/html"}, body: "<html>Bad Gateway</html>\n"},
			want:   client.Error{StatusCode: 502, Path: "/api/app-user/v2", Message: "<html>Bad Gateway</html>"},
		},
		{
			name:   "ErrEmptyBody",
			answer: answer{status: 503},
			want:   client.Error{StatusCode: 503, Path: "/api/app-user/v2", Message: "Service Unavailable"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := newServer(t, tt.answer)
			_, err := c.DeleteUser(context.Background(), "u1")
			var got *client.Error
			if !errors.As(err, &got) {
				t.Fatalf("got %T %v, want *client.Error", err, err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  client.Error
		want string
	}{
		{
			err:  client.Error{StatusCode: 404, Code: "ERR-AB-PSS-91", Message: "App data not found."},
			want: "herald: 404 ERR-AB-PSS-91: App data not found.",
		},
		{
			err: client.Error{StatusCode: 400, Code: "ERR-AB-VAL-00", Message: "Incorrect request.",
				Details: []client.Detail{{Field: "title", Reason: "required"}, {Field: "userIds", Reason: "at most 500"}}},
			want: "herald: 400 ERR-AB-VAL-00: Incorrect request. (title: required; userIds: at most 500)",
		},
		{err: client.Error{StatusCode: 500}, want: "herald: 500"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestSuccessNotJSON(t *testing.T) {
	t.Parallel()
	c, _ := newServer(t, answer{status: 200, body: "OK"})
	_, err := c.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	var apiErr *client.Error
	if err == nil || errors.As(err, &apiErr) || !strings.Contains(err.Error(), "decode answer") {
		t.Errorf("got %v, want a decode error", err)
	}
}

func TestTransportError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := client.New(url, testAPIKey, testSecretKey, nil)
	if _, err := c.DeleteUser(context.Background(), "u1"); err == nil {
		t.Error("got nil, want a connection error")
	}
}
