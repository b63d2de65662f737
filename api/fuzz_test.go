package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// The fuzz targets of the public API's request decoders. Each drives the
// real handler in process over the fake next layer; the seeds run as
// ordinary tests and .ci/run fuzzes each target for a bounded time.

// fuzzEndpoint is one endpoint under fuzzing: encode turns the write an
// accepted body asked for back into a body that must ask for the same.
type fuzzEndpoint struct {
	method, path string
	encode       func(c call) map[string]any
}

// sdk reports whether the endpoint ignores unknown members.
func (ep fuzzEndpoint) sdk() bool { return strings.HasPrefix(ep.path, "/api/sdk/") }

// fuzzBodies runs the properties every decoder must hold on body: an
// answer of 200 having asked one write, or 400 with details having asked
// none; invalid UTF-8 never accepted and no U+FFFD made up; an accepted
// body re-encodes to one asking the same write; one more member is refused
// by name on the Server API and ignored on the SDK API.
func fuzzBodies(f *testing.F, ep fuzzEndpoint, seeds []string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	a := newFakeAPI()
	f.Fuzz(func(t *testing.T, body []byte) {
		res := a.do(ep.method, ep.path, string(body))
		calls := a.take()
		if res.Status == http.StatusBadRequest {
			wantDetails(t, body, res, calls)
			return
		}
		if res.Status != http.StatusOK || len(calls) != 1 {
			t.Fatalf("%q: got %d %s with %d writes, want 200 and one write or 400", body, res.Status, res.Body, len(calls))
		}
		if !utf8.Valid(body) {
			t.Fatalf("%q holds invalid UTF-8 and was accepted", body)
		}
		if got, stated := replacementsIn(calls[0]), replacements(body); got > stated {
			t.Fatalf("%q accepted with %d U+FFFD in its values, %d stated", body, got, stated)
		}
		again := ep.encode(calls[0])
		if c := a.wantAccepted(t, ep, again); !reflect.DeepEqual(c, calls[0]) {
			t.Fatalf("%q asked %+v; re-encoded as %v it asked %+v", body, calls[0], again, c)
		}
		again["zzUnknown"] = json.RawMessage(`{"scheduleTime":"2025-06-11T22:06"}`)
		if ep.sdk() {
			if c := a.wantAccepted(t, ep, again); !reflect.DeepEqual(c, calls[0]) {
				t.Fatalf("SDK body with an unknown member asked %+v, want %+v", c, calls[0])
			}
			return
		}
		res = a.do(ep.method, ep.path, encode(again))
		if res.Status != http.StatusBadRequest || !slicesContains(res.Err.Details, herald.Detail{Field: "zzUnknown", Reason: "unknown field"}) {
			t.Fatalf("unknown member: got %d %s, want 400 naming zzUnknown", res.Status, res.Body)
		}
		if calls := a.take(); len(calls) > 0 {
			t.Fatalf("unknown member asked %+v, want nothing", calls)
		}
	})
}

// wantDetails checks a 400: the spec's code, details naming each problem,
// nothing asked of the next layer.
func wantDetails(t *testing.T, body []byte, res fakeAnswer, calls []call) {
	t.Helper()
	if res.Err.Code != herald.ErrInvalidRequest.Code || len(res.Err.Details) == 0 {
		t.Fatalf("%q: got %s, want %s with details", body, res.Body, herald.ErrInvalidRequest.Code)
	}
	for _, d := range res.Err.Details {
		if d.Field == "" || d.Reason == "" {
			t.Fatalf("%q: detail %+v without a field or a reason", body, d)
		}
	}
	if len(calls) > 0 {
		t.Fatalf("%q refused but asked %+v", body, calls)
	}
}

// wantAccepted sends body and returns the one write it asked for.
func (a fakeAPI) wantAccepted(t *testing.T, ep fuzzEndpoint, body map[string]any) call {
	t.Helper()
	res := a.do(ep.method, ep.path, encode(body))
	calls := a.take()
	if res.Status != http.StatusOK || len(calls) != 1 {
		t.Fatalf("re-encoded %s: got %d %s with %d writes, want 200 and one", encode(body), res.Status, res.Body, len(calls))
	}
	return calls[0]
}

// encode writes a body as JSON, without HTML escapes so it stays as short
// as the body it came from.
func encode(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.String()
}

func slicesContains(ds []herald.Detail, want herald.Detail) bool {
	for _, d := range ds {
		if d == want {
			return true
		}
	}
	return false
}

// replacements counts U+FFFD a body states on purpose: the raw character
// and its \ufffd escape.
func replacements(body []byte) int {
	return bytes.Count(body, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(body), []byte(`\ufffd`))
}

// replacementsIn counts U+FFFD in the distinct strings of a write.
func replacementsIn(c call) int {
	var v any
	json.Unmarshal([]byte(encode(c)), &v)
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			seen[v] = true
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	n := 0
	for s := range seen {
		n += strings.Count(s, "\uFFFD")
	}
	return n
}

// putContent and putOptions re-encode what a push body said.
func putContent(m map[string]any, c herald.Content) map[string]any {
	m["title"], m["content"] = c.Title, c.Content
	if c.LinkURL != "" {
		m["linkURL"] = c.LinkURL
	}
	if c.ImageURL != "" {
		m["imageURL"] = c.ImageURL
	}
	return m
}

func putOptions(m map[string]any, p herald.Push) map[string]any {
	o := map[string]any{"isUsingBadge": p.Badge, "isMarketing": p.IsMarketingOpt}
	if p.RequestGroupID != "" {
		o["requestGroupId"] = p.RequestGroupID
	}
	if p.ScheduledAt != nil {
		o["scheduleTime"] = p.ScheduledAt.In((herald.App{}).Location()).Format("2006-01-02T15:04")
	}
	m["options"] = o
	return m
}

func userIDs(rs []herald.Recipient) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.UserID
	}
	return ids
}

func consentMembers(m map[string]any, c herald.ConsentChange) map[string]any {
	if c.Marketing != nil {
		m["marketing"] = *c.Marketing
	}
	if c.MarketingNight != nil {
		m["marketingNight"] = *c.MarketingNight
	}
	return m
}

var (
	usersEndpoint = fuzzEndpoint{http.MethodPost, usersPath, func(c call) map[string]any {
		return putOptions(putContent(map[string]any{"userIds": userIDs(c.Recipients)}, c.Push.Content), c.Push)
	}}
	messagesEndpoint = fuzzEndpoint{http.MethodPost, messagesPath, func(c call) map[string]any {
		ms := make([]any, len(c.Recipients))
		for i, r := range c.Recipients {
			ms[i] = putContent(map[string]any{"userId": r.UserID}, *r.Content)
		}
		return putOptions(map[string]any{"messages": ms}, c.Push)
	}}
	topicsEndpoint = fuzzEndpoint{http.MethodPost, topicsPath, func(c call) map[string]any {
		return putOptions(putContent(map[string]any{"topic": c.Push.Topic}, c.Push.Content), c.Push)
	}}
	allEndpoint = fuzzEndpoint{http.MethodPost, allPath, func(c call) map[string]any {
		return putOptions(putContent(map[string]any{}, c.Push.Content), c.Push)
	}}
)

var pushSeeds = []string{
	`{"userIds":["u1",2,"u1"],"title":"t","content":"c"}`,
	`{"userIds":["u1"],"title":"(광고) 세일","content":"c","linkURL":"https://example.com/a","imageURL":"https://example.com/i.png","options":{"isUsingBadge":true,"requestGroupId":"grp-1","scheduleTime":"2025-06-11T22:06"}}`,
	`{"userIds":["u1"],"title":"t","content":"c","option":{"scheduleTime":"2025-06-11T22:06"}}`,
	`{"userIds":["u1"],"title":"t","content":"c","options":{"scheduletime":"2025-06-11T22:06"}}`,
	`{"userIds":["u1"],"title":"t","content":"c","options":{"scheduleTime":"2025-06-11T22:05"}}`,
	`{"userIds":["\ud800"],"title":"\ud83d\ude00","content":"c"}`,
	"{\"userIds\":[\"u\xff\"],\"title\":\"t\",\"content\":\"c\"}",
	`{"userIds":[1.5,true,null,""],"title":"","content":null,"linkURL":null,"options":null}`,
	`{"messages":[{"userId":"a","title":"t","content":"c"},{"userId":7,"title":"(광고) x","content":"c","linkURL":"https://x"}],"options":{"isUsingBadge":false,"requestGroupId":"grp-2"}}`,
	`{"messages":[{"userId":"a","title":"t","titel":"x","content":"c"}],"options":{"scheduleTime":"2025-06-11T22:06"}}`,
	`{"messages":[{"userId":"\ud83d\ude00","title":"\u0041","content":"c","imageURL":"https://x/i.png"}]}`,
	`{"messages":[],"options":{}}`,
	`{"topic":"news","title":"t","content":"c","options":{"isMarketing":true}}`,
	`{"topic":"bad topic","title":"t","content":"c"}`,
	`{"title":"t","content":"c","options":{"requestGroupId":"a'bcd"}}`,
	`{"title":"t","content":"c","imageURL":"https://example.com/i.png","options":{"isUsingBadge":true,"requestGroupId":"all-1","scheduleTime":"2025-06-11T22:06"}}`,
	`{"title":"t","content":"c","userIds":["u1"]}`,
	`[]`, `{}`, `null`, `{"a":1}{}`, ``,
}

func FuzzPushUsers(f *testing.F)    { fuzzBodies(f, usersEndpoint, pushSeeds) }
func FuzzPushMessages(f *testing.F) { fuzzBodies(f, messagesEndpoint, pushSeeds) }
func FuzzPushTopics(f *testing.F)   { fuzzBodies(f, topicsEndpoint, pushSeeds) }
func FuzzPushAll(f *testing.F)      { fuzzBodies(f, allEndpoint, pushSeeds) }

var appUserSeeds = []string{
	`{"userId":"u1","state":{"marketing":true}}`,
	`{"userId":12,"state":{"marketing":false,"marketingNight":false}}`,
	`{"userId":"u1","state":{"marketingNight":true}}`,
	`{"userId":"u1","state":{"marketing":false,"marketingNight":true}}`,
	`{"userId":"u1","state":{"marketing":true,"sms":true}}`,
	`{"userId":"\udc00","state":{}}`,
	`{"userId":"u1"}`, `{"userId":-0}`, `{"userId":"u1","reason":"x"}`, `{"userId":1e3}`, `{}`, `[1]`,
}

func FuzzMarketing(f *testing.F) {
	fuzzBodies(f, fuzzEndpoint{http.MethodPatch, marketingPath, func(c call) map[string]any {
		return map[string]any{"userId": c.UserID, "state": consentMembers(map[string]any{}, c.Change)}
	}}, appUserSeeds)
}

func FuzzWithdraw(f *testing.F) {
	fuzzBodies(f, fuzzEndpoint{http.MethodDelete, withdrawPath, func(c call) map[string]any {
		return map[string]any{"userId": c.UserID}
	}}, appUserSeeds)
}

var sdkSeeds = []string{
	`{"deviceId":"d1","token":"tok-1","platform":"android","appSourceVersion":"1.6.0","userId":"u1"}`,
	`{"deviceId":"d1","token":"tok-1","platform":"ios","appSourceVersion":"1.5.0-beta.1","userId":42,"sdk":"9"}`,
	`{"deviceId":"d1","token":"tok-1","platform":"web","appSourceVersion":"1.6","userId":null}`,
	`{"deviceId":"d1","userId":"u2"}`, `{"deviceId":"d1","userId":null}`, `{"deviceId":"d1"}`,
	`{"deviceId":"d1","marketing":true,"marketingNight":true}`, `{"deviceId":"d1","marketing":false,"marketingNight":true}`,
	`{"deviceId":"\ud800","userId":"u1"}`, "{\"deviceId\":\"d\xff\",\"marketing\":true}", `{"deviceId":"","token":1}`,
	`[]`, `{}`, `null`,
}

func FuzzRegisterPushToken(f *testing.F) {
	fuzzBodies(f, fuzzEndpoint{http.MethodPost, pushTokenPath, func(c call) map[string]any {
		m := map[string]any{"deviceId": c.Reg.DeviceID, "token": c.Reg.Token, "platform": c.Reg.Platform, "appSourceVersion": c.Reg.AppSourceVersion}
		if c.Reg.UserID != nil {
			m["userId"] = *c.Reg.UserID
		}
		return m
	}}, sdkSeeds)
}

func FuzzSetUserID(f *testing.F) {
	fuzzBodies(f, fuzzEndpoint{http.MethodPost, setUserPath, func(c call) map[string]any {
		return map[string]any{"deviceId": c.DeviceID, "userId": c.MapTo}
	}}, sdkSeeds)
}

func FuzzDeviceConsent(f *testing.F) {
	fuzzBodies(f, fuzzEndpoint{http.MethodPatch, consentPath, func(c call) map[string]any {
		return consentMembers(map[string]any{"deviceId": c.DeviceID}, c.Change)
	}}, sdkSeeds)
}

func FuzzDeleteDevice(f *testing.F) {
	fuzzBodies(f, fuzzEndpoint{http.MethodDelete, pushTokenPath, func(c call) map[string]any {
		return map[string]any{"deviceId": c.DeviceID}
	}}, sdkSeeds)
}
