package emulator_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
)

// harness is an emulator on a loopback port, an h2c client and an access token.
type harness struct {
	emu    *emulator.Emulator
	base   string
	client *http.Client
	token  string // issued for project "proj"
}

func setup(t *testing.T, opts emulator.Options) harness {
	t.Helper()
	emu, base := fcmtest.StartEmulator(t, opts)
	h := harness{emu: emu, base: base, client: h2cClient(t)}
	status, body := h.grant(t, validClaims("herald@proj.iam.gserviceaccount.com", time.Now()))
	if status != http.StatusOK {
		t.Fatalf("token grant: got %d %s, want 200", status, body)
	}
	h.token = body["access_token"].(string)
	return h
}

// h2cClient returns a client that speaks cleartext HTTP/2 only.
func h2cClient(t *testing.T) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// validClaims returns the claims a service account signs.
func validClaims(iss string, now time.Time) map[string]any {
	return map[string]any{"iss": iss, "scope": "https://www.googleapis.com/auth/firebase.messaging",
		"aud": "http://127.0.0.1/token", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// jwt returns an unsigned-but-well-formed JWT carrying claims.
func jwt(t *testing.T, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("marshal claims: %v", err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(payload) + "." + enc([]byte("signature"))
}

// grant posts a JWT-bearer grant for claims.
func (h harness) grant(t *testing.T, claims map[string]any) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {jwt(t, claims)}}
	return h.do(t, http.MethodPost, "/token", "application/x-www-form-urlencoded", form.Encode(), "")
}

// send posts body to messages:send of project with the access token.
func (h harness) send(t *testing.T, project, body, token string) (int, map[string]any) {
	t.Helper()
	return h.do(t, http.MethodPost, "/v1/projects/"+project+"/messages:send", "application/json", body, token)
}

// do makes a request and decodes the JSON answer (nil for an empty body).
func (h harness) do(t *testing.T, method, path, contentType, body, token string) (int, map[string]any) {
	t.Helper()
	resp := h.raw(t, method, path, contentType, body, token)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	var out map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("answer %q is not JSON: %v", data, err)
		}
	}
	return resp.StatusCode, out
}

// raw makes a request and returns the response.
func (h harness) raw(t *testing.T, method, path, contentType, body, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, h.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// errorOf returns the status and FCM errorCode of a Google error body.
func errorOf(body map[string]any) (status, errorCode string) {
	e, _ := body["error"].(map[string]any)
	status, _ = e["status"].(string)
	details, _ := e["details"].([]any)
	for _, d := range details {
		d, _ := d.(map[string]any)
		if d["@type"] == "type.googleapis.com/google.firebase.fcm.v1.FcmError" {
			errorCode, _ = d["errorCode"].(string)
		}
	}
	return status, errorCode
}

func TestTokenGrant(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	now := time.Now()
	without := func(key string) map[string]any {
		c := validClaims("herald@proj.iam.gserviceaccount.com", now)
		delete(c, key)
		return c
	}
	expired := validClaims("herald@proj.iam.gserviceaccount.com", now.Add(-2*time.Hour))
	tests := []struct {
		name      string
		claims    map[string]any
		wantError string // "" for success
		wantDesc  string
	}{
		{name: "OK", claims: validClaims("herald@proj.iam.gserviceaccount.com", now)},
		{name: "OtherIssuer", claims: validClaims("someone@example.com", now)},
		{name: "NoIss", claims: without("iss"), wantError: "invalid_grant"},
		{name: "NoScope", claims: without("scope"), wantError: "invalid_grant"},
		{name: "NoAud", claims: without("aud"), wantError: "invalid_grant"},
		{name: "NoExp", claims: without("exp"), wantError: "invalid_grant"},
		{name: "Expired", claims: expired, wantError: "invalid_grant"},
		{name: "DeniedIssuer", claims: validClaims("denied@proj.iam.gserviceaccount.com", now),
			wantError: "invalid_grant", wantDesc: "Invalid JWT Signature."},
		{name: "DeniedProject", claims: validClaims("herald@denied-1.iam.gserviceaccount.com", now),
			wantError: "invalid_grant", wantDesc: "Invalid JWT Signature."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := h.grant(t, tt.claims)
			if tt.wantError == "" {
				tok, _ := body["access_token"].(string)
				if status != 200 || !strings.HasPrefix(tok, "emu-") || body["token_type"] != "Bearer" || body["expires_in"] != 3600.0 {
					t.Errorf("got %d %v, want 200 with an emu- Bearer token for 3600s", status, body)
				}
				return
			}
			if status != 400 || body["error"] != tt.wantError {
				t.Errorf("got %d %v, want 400 %s", status, body, tt.wantError)
			}
			if tt.wantDesc != "" && body["error_description"] != tt.wantDesc {
				t.Errorf("description: got %v, want %q", body["error_description"], tt.wantDesc)
			}
		})
	}
}

func TestTokenGrantMalformed(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	tests := []struct {
		name, form, want string
	}{
		{"WrongGrantType", "grant_type=client_credentials&assertion=a.b.c", "unsupported_grant_type"},
		{"TwoParts", "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.b", "invalid_grant"},
		{"ClaimsNotBase64", "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.%21%21.c", "invalid_grant"},
		{"NoAssertion", "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer", "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := h.do(t, http.MethodPost, "/token", "application/x-www-form-urlencoded", tt.form, "")
			if status != 400 || body["error"] != tt.want {
				t.Errorf("got %d %v, want 400 %s", status, body, tt.want)
			}
		})
	}
}

func TestSendValidation(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantCode   string // FCM errorCode when not 200
	}{
		{"OK", `{"message":{"token":"t1","notification":{"title":"a","body":"b","image":"https://i"},"data":{"k":"v"}}}`, 200, ""},
		{"Topic", `{"message":{"topic":"news","notification":{"title":"a"}}}`, 200, ""},
		{"Condition", `{"message":{"condition":"'a' in topics","data":{"k":"v"}}}`, 200, ""},
		{"ValidateOnly", `{"validate_only":true,"message":{"token":"t1"}}`, 200, ""},
		{"ValidateOnlyCamel", `{"validateOnly":true,"message":{"token":"t1"}}`, 200, ""},
		{"FullMapping", `{"message":{"token":"t1","android":{"notification":{"image":"https://i"}},` +
			`"apns":{"payload":{"aps":{"badge":1,"mutable-content":1}},"fcm_options":{"image":"https://i"}},` +
			`"webpush":{"fcm_options":{"link":"https://l"}}}}`, 200, ""},
		{"CollapseTags", `{"message":{"token":"t1","android":{"notification":{"tag":"push_1-7"}},` +
			`"apns":{"headers":{"apns-collapse-id":"push_1-7"}},"webpush":{"headers":{"Topic":"push_1-7"}}}}`, 200, ""},
		{"AndroidTagNotString", `{"message":{"token":"t1","android":{"notification":{"tag":7}}}}`, 400, "INVALID_ARGUMENT"},
		{"APNSHeaderNotString", `{"message":{"token":"t1","apns":{"headers":{"apns-priority":10}}}}`, 400, "INVALID_ARGUMENT"},
		{"APNSCollapseIDTooLong", `{"message":{"token":"t1","apns":{"headers":{"apns-collapse-id":"` + strings.Repeat("a", 65) + `"}}}}`, 400, "INVALID_ARGUMENT"},
		{"APNSCollapseID64Bytes", `{"message":{"token":"t1","apns":{"headers":{"apns-collapse-id":"` + strings.Repeat("a", 64) + `"}}}}`, 200, ""},
		{"WebpushTopicTooLong", `{"message":{"token":"t1","webpush":{"headers":{"Topic":"` + strings.Repeat("a", 33) + `"}}}}`, 400, "INVALID_ARGUMENT"},
		{"WebpushTopicBadCharacter", `{"message":{"token":"t1","webpush":{"headers":{"Topic":"push#1"}}}}`, 400, "INVALID_ARGUMENT"},
		{"WebpushHeadersNotObject", `{"message":{"token":"t1","webpush":{"headers":"Topic"}}}`, 400, "INVALID_ARGUMENT"},
		{"TTL", `{"message":{"token":"t1","android":{"ttl":"3600s"},"apns":{"headers":{"apns-expiration":"1800003600"}}}}`, 200, ""},
		{"TTLZero", `{"message":{"token":"t1","android":{"ttl":"0s"},"apns":{"headers":{"apns-expiration":"0"}}}}`, 200, ""},
		{"TTLFraction", `{"message":{"token":"t1","android":{"ttl":"1.5s"}}}`, 200, ""},
		{"TTL28Days", `{"message":{"token":"t1","android":{"ttl":"2419200s"}}}`, 200, ""},
		{"TTLOver28Days", `{"message":{"token":"t1","android":{"ttl":"2419201s"}}}`, 400, "INVALID_ARGUMENT"},
		{"TTLNoUnit", `{"message":{"token":"t1","android":{"ttl":"3600"}}}`, 400, "INVALID_ARGUMENT"},
		{"TTLNotString", `{"message":{"token":"t1","android":{"ttl":3600}}}`, 400, "INVALID_ARGUMENT"},
		{"APNSExpirationNotATime", `{"message":{"token":"t1","apns":{"headers":{"apns-expiration":"tomorrow"}}}}`, 400, "INVALID_ARGUMENT"},
		{"PriorityHigh", `{"message":{"token":"t1","android":{"priority":"HIGH"},"apns":{"headers":{"apns-priority":"10"}}}}`, 200, ""},
		{"PriorityNormal", `{"message":{"token":"t1","android":{"priority":"NORMAL"},"apns":{"headers":{"apns-priority":"5"}}}}`, 200, ""},
		{"AndroidPriorityUnknown", `{"message":{"token":"t1","android":{"priority":"URGENT"}}}`, 400, "INVALID_ARGUMENT"},
		{"AndroidPriorityNotString", `{"message":{"token":"t1","android":{"priority":1}}}`, 400, "INVALID_ARGUMENT"},
		{"APNSPriorityUnknown", `{"message":{"token":"t1","apns":{"headers":{"apns-priority":"high"}}}}`, 400, "INVALID_ARGUMENT"},
		{"NotJSON", `{"message":`, 400, "INVALID_ARGUMENT"},
		{"NoMessage", `{}`, 400, "INVALID_ARGUMENT"},
		{"NoTarget", `{"message":{"notification":{"title":"a"}}}`, 400, "INVALID_ARGUMENT"},
		{"TwoTargets", `{"message":{"token":"t1","topic":"news"}}`, 400, "INVALID_ARGUMENT"},
		{"EmptyToken", `{"message":{"token":""}}`, 400, "INVALID_ARGUMENT"},
		{"TokenNotString", `{"message":{"token":5}}`, 400, "INVALID_ARGUMENT"},
		{"TitleNotString", `{"message":{"token":"t1","notification":{"title":1}}}`, 400, "INVALID_ARGUMENT"},
		{"NotificationUnknownField", `{"message":{"token":"t1","notification":{"badge":"1"}}}`, 400, "INVALID_ARGUMENT"},
		{"DataNotObject", `{"message":{"token":"t1","data":["a"]}}`, 400, "INVALID_ARGUMENT"},
		{"DataValueNotString", `{"message":{"token":"t1","data":{"n":1}}}`, 400, "INVALID_ARGUMENT"},
		{"UnknownMessageField", `{"message":{"token":"t1","priority":"high"}}`, 400, "INVALID_ARGUMENT"},
		{"UnknownRequestField", `{"message":{"token":"t1"},"dry_run":true}`, 400, "INVALID_ARGUMENT"},
		{"ValidateOnlyNotBool", `{"validate_only":"yes","message":{"token":"t1"}}`, 400, "INVALID_ARGUMENT"},
		{"WebpushLinkNotHTTPS", `{"message":{"token":"t1","webpush":{"fcm_options":{"link":"http://l"}}}}`, 400, "INVALID_ARGUMENT"},
		{"APNSPayloadNotObject", `{"message":{"token":"t1","apns":{"payload":"x"}}}`, 400, "INVALID_ARGUMENT"},
		{"AnalyticsLabel", `{"message":{"token":"t1","fcm_options":{"analytics_label":"spring-sale_2025.v1~%20"}}}`, 200, ""},
		{"AnalyticsLabelCamel", `{"message":{"token":"t1","fcmOptions":{"analyticsLabel":"group-1"}}}`, 200, ""},
		{"AnalyticsLabelBadCharacter", `{"message":{"token":"t1","fcm_options":{"analytics_label":"sale#2025"}}}`, 400, "INVALID_ARGUMENT"},
		{"AnalyticsLabelTooLong", `{"message":{"token":"t1","fcm_options":{"analytics_label":"` + strings.Repeat("a", 51) + `"}}}`, 400, "INVALID_ARGUMENT"},
		{"AnalyticsLabelNotString", `{"message":{"token":"t1","fcm_options":{"analytics_label":5}}}`, 400, "INVALID_ARGUMENT"},
		{"FCMOptionsUnknownField", `{"message":{"token":"t1","fcm_options":{"label":"x"}}}`, 400, "INVALID_ARGUMENT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, body := h.send(t, "proj", tt.body, h.token)
			if status != tt.wantStatus {
				t.Fatalf("status: got %d %v, want %d", status, body, tt.wantStatus)
			}
			if status == 200 {
				if name, _ := body["name"].(string); !strings.HasPrefix(name, "projects/proj/messages/") {
					t.Errorf("name: got %q, want projects/proj/messages/…", name)
				}
				return
			}
			if gstatus, code := errorOf(body); gstatus != "INVALID_ARGUMENT" || code != tt.wantCode {
				t.Errorf("error: got %s/%s (%v), want INVALID_ARGUMENT/%s", gstatus, code, body, tt.wantCode)
			}
		})
	}
}

func TestSendAuthentication(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	const body = `{"message":{"token":"t1"}}`
	tests := []struct {
		name, project, token string
		wantStatus           int
		wantGoogleStatus     string
	}{
		{"NoToken", "proj", "", 401, "UNAUTHENTICATED"},
		{"UnknownToken", "proj", "emu-forged", 401, "UNAUTHENTICATED"},
		{"OtherProject", "other", h.token, 403, "PERMISSION_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, got := h.send(t, tt.project, body, tt.token)
			if gstatus, _ := errorOf(got); status != tt.wantStatus || gstatus != tt.wantGoogleStatus {
				t.Errorf("got %d %s (%v), want %d %s", status, gstatus, got, tt.wantStatus, tt.wantGoogleStatus)
			}
		})
	}
}

func TestSendTokenPrefixes(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	type answer struct {
		status     int
		code       string
		retryAfter string
	}
	tests := []struct {
		token string
		want  []answer // one per attempt
	}{
		{"plain-1", []answer{{200, "", ""}}},
		{"unregistered-1", []answer{{404, "UNREGISTERED", ""}, {404, "UNREGISTERED", ""}}},
		{"invalid-1", []answer{{400, "INVALID_ARGUMENT", ""}}},
		{"mismatch-1", []answer{{403, "SENDER_ID_MISMATCH", ""}}},
		{"auth-1", []answer{{401, "THIRD_PARTY_AUTH_ERROR", ""}}},
		{"apnsauth-1", []answer{{401, "APNS_AUTH_ERROR", ""}}},
		{"quota-1", []answer{{429, "QUOTA_EXCEEDED", "1"}, {200, "", ""}, {200, "", ""}}},
		{"unavailable-1", []answer{{503, "UNAVAILABLE", ""}, {200, "", ""}}},
		{"down-1", []answer{{503, "UNAVAILABLE", ""}, {503, "UNAVAILABLE", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			t.Parallel()
			for i, want := range tt.want {
				resp := h.raw(t, http.MethodPost, "/v1/projects/proj/messages:send", "application/json",
					`{"message":{"token":"`+tt.token+`"}}`, h.token)
				var body map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&body)
				resp.Body.Close()
				_, code := errorOf(body)
				got := answer{resp.StatusCode, code, resp.Header.Get("Retry-After")}
				if got != want {
					t.Errorf("attempt %d: got %+v, want %+v", i+1, got, want)
				}
			}
		})
	}
}

func TestInspection(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC)
	h := setup(t, emulator.Options{Now: func() time.Time { return at }})
	bodies := []string{
		`{"message":{"token":"a","data":{"n":"1"}}}`,
		`{"message": {"token":"b",  "data":{"n":"2"}}}`,
		`{"message":{"token":"a","data":{"n":"3"}}}`,
		`{"validate_only":true,"message":{"token":"a"}}`,
		`{"message":{"token":"invalid-a"}}`,
		`{"message":{"token":"quota-a"}}`,
	}
	for _, b := range bodies {
		h.send(t, "proj", b, h.token)
	}
	assertStats(t, h, map[string]any{"received": 6.0, "accepted": 4.0, "rejected": 2.0})

	var got struct {
		Messages []struct {
			ReceivedAt string          `json:"receivedAt"`
			Project    string          `json:"project"`
			Message    json.RawMessage `json:"message"`
		} `json:"messages"`
	}
	getJSON(t, h, "/emulator/messages?token=a", &got)
	wantMessages := []string{`{"token":"a","data":{"n":"1"}}`, `{"token":"a","data":{"n":"3"}}`}
	if len(got.Messages) != len(wantMessages) {
		t.Fatalf("messages for a: got %d, want %d", len(got.Messages), len(wantMessages))
	}
	for i, m := range got.Messages {
		if string(m.Message) != wantMessages[i] || m.Project != "proj" || m.ReceivedAt != at.Format(time.RFC3339Nano) {
			t.Errorf("message %d: got %s %s %s, want %s proj %s", i, m.Message, m.Project, m.ReceivedAt,
				wantMessages[i], at.Format(time.RFC3339Nano))
		}
	}
	getJSON(t, h, "/emulator/messages", &got)
	if len(got.Messages) != 3 || string(got.Messages[1].Message) != `{"token":"b",  "data":{"n":"2"}}` {
		t.Errorf("all messages: got %d with second %s, want 3 with b's as sent", len(got.Messages), got.Messages[1].Message)
	}
	if counts := h.emu.CountByToken(); counts["a"] != 2 || counts["b"] != 1 || len(counts) != 2 {
		t.Errorf("CountByToken: got %v, want map[a:2 b:1]", counts)
	}

	if status, _ := h.do(t, http.MethodDelete, "/emulator/messages", "", "", ""); status != http.StatusNoContent {
		t.Fatalf("DELETE /emulator/messages: got %d, want 204", status)
	}
	assertStats(t, h, map[string]any{"received": 0.0, "accepted": 0.0, "rejected": 0.0})
	if msgs := h.emu.Messages(""); len(msgs) != 0 {
		t.Errorf("messages after reset: got %d, want 0", len(msgs))
	}
	if status, _ := h.send(t, "proj", `{"message":{"token":"quota-a"}}`, h.token); status != 429 {
		t.Errorf("quota token after reset: got %d, want 429 (first attempt again)", status)
	}
}

func assertStats(t *testing.T, h harness, want map[string]any) {
	t.Helper()
	var got map[string]any
	getJSON(t, h, "/emulator/stats", &got)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("stats %s: got %v, want %v", k, got[k], v)
		}
	}
}

func getJSON(t *testing.T, h harness, path string, v any) {
	t.Helper()
	resp := h.raw(t, http.MethodGet, path, "", "", "")
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: got %d, want 200", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func TestProtocols(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	h.send(t, "proj", `{"message":{"token":"h2"}}`, h.token)
	h1 := h
	h1.client = &http.Client{}
	h1.send(t, "proj", `{"message":{"token":"h1"}}`, h.token)
	for token, want := range map[string]string{"h2": "HTTP/2.0", "h1": "HTTP/1.1"} {
		msgs := h.emu.Messages(token)
		if len(msgs) != 1 || msgs[0].Proto != want {
			t.Errorf("token %s: got %+v, want one message over %s", token, msgs, want)
		}
	}
}

func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	const workers, each = 20, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				token := "c-" + string(rune('a'+w)) + "-" + string(rune('a'+i))
				if status, body := h.send(t, "proj", `{"message":{"token":"`+token+`"}}`, h.token); status != 200 {
					t.Errorf("send %s: got %d %v, want 200", token, status, body)
				}
			}
		})
	}
	wg.Wait()
	if got := h.emu.Stats(); got != (emulator.Stats{Received: workers * each, Accepted: workers * each}) {
		t.Errorf("stats: got %+v, want %d received and accepted", got, workers*each)
	}
	if got := len(h.emu.CountByToken()); got != workers*each {
		t.Errorf("distinct tokens: got %d, want %d", got, workers*each)
	}
}

func TestRevokeTokens(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	const body = `{"message":{"token":"t1"}}`
	if status, got := h.send(t, "proj", body, h.token); status != http.StatusOK {
		t.Fatalf("before revocation: got %d %v, want 200", status, got)
	}
	if status, _ := h.do(t, http.MethodPost, "/emulator/revoke-tokens", "", "", ""); status != http.StatusNoContent {
		t.Fatalf("revoke: got %d, want 204", status)
	}
	if status, got := h.send(t, "proj", body, h.token); status != http.StatusUnauthorized {
		t.Fatalf("revoked token: got %d %v, want 401", status, got)
	}
	status, fresh := h.grant(t, validClaims("herald@proj.iam.gserviceaccount.com", time.Now()))
	if status != http.StatusOK {
		t.Fatalf("grant: got %d", status)
	}
	if status, got := h.send(t, "proj", body, fresh["access_token"].(string)); status != http.StatusOK {
		t.Fatalf("fresh token: got %d %v, want 200", status, got)
	}
	// A project named revoked… gets tokens that are always refused.
	_, r := h.grant(t, validClaims("herald@revoked-p.iam.gserviceaccount.com", time.Now()))
	if status, got := h.send(t, "revoked-p", body, r["access_token"].(string)); status != http.StatusUnauthorized {
		t.Fatalf("revoked project: got %d %v, want 401", status, got)
	}
}

func TestTokenEndpointStatus(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	claims := validClaims("herald@proj.iam.gserviceaccount.com", time.Now())
	for _, bad := range []string{`{"status": 200}`, `{"status": 600}`, `nope`} {
		if status, _ := h.do(t, http.MethodPut, "/emulator/token-endpoint", "application/json", bad, ""); status != http.StatusBadRequest {
			t.Errorf("PUT %s: got %d, want 400", bad, status)
		}
	}
	if status, _ := h.do(t, http.MethodPut, "/emulator/token-endpoint", "application/json", `{"status": 503}`, ""); status != http.StatusNoContent {
		t.Fatalf("set 503: got %d, want 204", status)
	}
	if status, _ := h.grant(t, claims); status != http.StatusServiceUnavailable {
		t.Fatalf("grant while down: got %d, want 503", status)
	}
	if status, _ := h.do(t, http.MethodPut, "/emulator/token-endpoint", "application/json", `{"status": 0}`, ""); status != http.StatusNoContent {
		t.Fatalf("restore: got %d, want 204", status)
	}
	if status, _ := h.grant(t, claims); status != http.StatusOK {
		t.Fatalf("grant after restore: got %d, want 200", status)
	}
}
