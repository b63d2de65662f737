package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/sqlstore"
	"github.com/heraldpush/herald/webhook"
)

// unexercised are registered operations TestOpenAPILiveAnswers does not
// call, each with the reason.
var unexercised = map[string]string{}

// validator is an http.RoundTripper that checks every answer against
// api/openapi.yaml: the operation is documented, its status is one the
// operation lists, and its headers and body are what that response
// describes (kin-openapi, JSON Schema 2020-12 as OpenAPI 3.1 has it).
type validator struct {
	t      *testing.T
	router routers.Router
	doc    *openapi3.T
	mu     sync.Mutex
	called map[string]bool // "METHOD /documented/path" answered and checked
}

func newValidator(t *testing.T) *validator {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("load api/openapi.yaml: %v", err)
	}
	// Route by path alone: the test servers listen on ports of their own.
	doc.Servers = nil
	for _, item := range doc.Paths.Map() {
		item.Servers = nil
	}
	closeObjects(doc)
	router, err := legacy.NewRouter(doc) // validates the document, examples included
	if err != nil {
		t.Fatalf("api/openapi.yaml: %v", err)
	}
	openapi3filter.RegisterBodyDecoder("application/jsonl", decodeJSONL)
	openapi3filter.RegisterBodyDecoder("text/csv", decodeCSV)
	return &validator{t: t, router: router, doc: doc, called: map[string]bool{}}
}

// decodeJSONL reads JSON lines (the access records' download): each line
// must be a JSON object; the body is then checked as the string it is.
func decodeJSONL(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return "", nil // no line
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var obj map[string]any
		if err := json.Unmarshal(line, &obj); err != nil {
			return nil, fmt.Errorf("line %d is not a JSON object: %w", i+1, err)
		}
	}
	return string(b), nil
}

// decodeCSV reads CSV (a push's recipients download): it must parse,
// every record as long as the header; the body is then checked as the
// string it is.
func decodeCSV(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if _, err := csv.NewReader(bytes.NewReader(b)).ReadAll(); err != nil {
		return nil, err
	}
	return string(b), nil
}

// closeObjects makes the loaded document strict for this test: every
// object schema that lists properties and says nothing of others refuses
// members it does not list, so an answer's undocumented member (such as a
// push's topic) fails the check; the document itself stays open to
// additions. An allOf of object schemas is first merged into one object,
// because a member closed on its own would refuse the other members'
// properties.
func closeObjects(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var visit func(ref *openapi3.SchemaRef)
	visit = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		for _, sub := range slices.Concat(s.AllOf, s.OneOf, s.AnyOf, []*openapi3.SchemaRef{s.Items}) {
			visit(sub)
		}
		for _, prop := range s.Properties {
			visit(prop)
		}
		if len(s.AllOf) > 0 && len(s.Properties) == 0 {
			mergeAllOf(s)
		}
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			closed := false
			s.AdditionalProperties.Has = &closed
		}
	}
	for _, ref := range doc.Components.Schemas {
		visit(ref)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, res := range op.Responses.Map() {
				if res.Value == nil {
					continue
				}
				for _, mt := range res.Value.Content {
					visit(mt.Schema)
				}
			}
		}
	}
}

// mergeAllOf turns s, an allOf of object schemas (visited, so possibly
// closed already), into one object schema with their properties and
// required members.
func mergeAllOf(s *openapi3.Schema) {
	props := openapi3.Schemas{}
	var required []string
	for _, member := range s.AllOf {
		m := member.Value
		if m == nil || len(m.AllOf) > 0 || len(m.OneOf) > 0 || len(m.AnyOf) > 0 {
			return // not a plain object: leave the allOf as it is
		}
		maps.Copy(props, m.Properties)
		required = append(required, m.Required...)
	}
	s.AllOf, s.Properties, s.Required = nil, props, required
	s.Type = &openapi3.Types{openapi3.TypeObject}
}

func (v *validator) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	what := fmt.Sprintf("%s %s answered %d %s", req.Method, req.URL.Path, res.StatusCode, body)
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		v.t.Errorf("%s: no operation of the document matches: %v", what, err)
		return res, nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 res.StatusCode,
		Header:                 res.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(req.Context(), in); err != nil {
		v.t.Errorf("%s: not as the document describes: %v", what, err)
	}
	v.mu.Lock()
	v.called[route.Method+" "+route.Path] = true
	v.mu.Unlock()
	return res, nil
}

// liveEnv is Herald's two real handlers on a real SQLite database, pushes
// accepted by the real delivery service (its jobs inserted, not worked),
// called through the validator.
type liveEnv struct {
	t *testing.T
	// db is the node's store, for what no request can set up.
	db       *sqlstore.Store
	pub, adm string
	// limited is a public listener whose rate limits answer 429 to a
	// second request.
	limited string
	hc      *http.Client
	v       *validator
	// liveApps are the free app and the business app with the app-user
	// feature and FCM credentials; immediate and scheduled are pushes of
	// the business app.
	liveApps             [2]testenv.App
	immediate, scheduled string
	// identitySecret is the free app's, whose identity verification is on.
	identitySecret string
	// adSettings: the app answers adSender and its siblings (DESIGN.md
	// section 7), so the test sets and checks them.
	adSettings bool
}

func newLiveEnv(t *testing.T) *liveEnv {
	t.Helper()
	// River works no job, so every push stays as its answer left it.
	node := testenv.New(t, testenv.Options{Config: server.Config{Webhook: webhook.SenderOptions{AllowPrivate: true}},
		Overrides: server.Overrides{IdleQueue: true}})
	// A second node's public listener on the same store, one request a
	// 1,000 seconds, in bursts of one: a second request is 429.
	limitedHandler, _ := node.Node.Handlers(server.Config{API: api.Limits{Server: 0.001, SDKClient: 0.001}}, node.AdminToken)
	limited := httptest.NewServer(limitedHandler)
	t.Cleanup(limited.Close)
	v := newValidator(t)
	return &liveEnv{t: t, db: node.Store, pub: node.API.URL, adm: node.Admin.URL, limited: limited.URL, hc: &http.Client{Transport: v}, v: v}
}

// call sends one request through the validator and fails the test unless
// the status is want: each call is meant to draw one documented answer.
func (e *liveEnv) call(base, method, path string, header map[string]string, body any, want int) testenv.Response {
	e.t.Helper()
	res := testenv.Send(e.t, e.hc, base, testenv.Request{Method: method, URL: path, Header: header, Body: body})
	if res.Status != want {
		e.t.Fatalf("%s %s: got %d %s, want %d", method, path, res.Status, res.Body, want)
	}
	return res
}

func (e *liveEnv) admin(method, path string, body any, want int) testenv.Response {
	e.t.Helper()
	return e.call(e.adm, method, path, map[string]string{"Authorization": "Bearer " + testenv.AdminToken}, body, want)
}

func (e *liveEnv) server(app testenv.App, method, path string, body any, want int) testenv.Response {
	e.t.Helper()
	return e.call(e.pub, method, path, map[string]string{"x-api-key": app.APIKey, "x-secret-key": app.SecretKey}, body, want)
}

func (e *liveEnv) sdk(app testenv.App, method, path string, body any, want int) testenv.Response {
	e.t.Helper()
	return e.call(e.pub, method, path, map[string]string{"x-api-key": app.APIKey}, body, want)
}

func (e *liveEnv) createApp(settings map[string]any) testenv.App {
	e.t.Helper()
	var out struct{ AppID, APIKey, SecretKey string }
	e.admin(http.MethodPost, "/admin/v1/apps", settings, http.StatusCreated).Decode(e.t, &out)
	return testenv.App{ID: out.AppID, APIKey: out.APIKey, SecretKey: out.SecretKey}
}

// TestOpenAPILiveAnswers drives every registered operation of both
// listeners through the real handlers, drawing their success answers and
// their main errors, and checks each answer against api/openapi.yaml.
func TestOpenAPILiveAnswers(t *testing.T) {
	e := newLiveEnv(t)
	e.operations()
	e.apps()
	e.devices()
	e.consent()
	groupID := e.pushes()
	e.history(groupID)
	e.approvals()
	e.marketingCap()
	e.operators()
	e.pending()
	e.recipients()
	e.teardown()
	e.accessRecords()

	for _, pattern := range append(api.Routes(), admin.Routes()...) {
		op := openAPIRoute(pattern)
		if e.v.called[op] || unexercised[op] != "" {
			continue
		}
		t.Errorf("%s is registered but TestOpenAPILiveAnswers never calls it: add a call whose answer the document describes", op)
	}
}

func (e *liveEnv) operations() {
	for _, base := range []string{e.pub, e.adm} {
		e.call(base, http.MethodGet, "/healthz", nil, nil, http.StatusOK)
		e.call(base, http.MethodGet, "/readyz", nil, nil, http.StatusOK)
		e.call(base, http.MethodGet, "/openapi.yaml", nil, nil, http.StatusOK)
	}
	e.call(e.adm, http.MethodGet, "/metrics", nil, nil, http.StatusOK)
	preflight := map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"}
	e.call(e.pub, http.MethodOptions, "/api/sdk/v2/push-token", preflight, nil, http.StatusNoContent)
	e.call(e.pub, http.MethodOptions, "/api/sdk/v2/user", preflight, nil, http.StatusNoContent)
	e.call(e.pub, http.MethodOptions, "/api/sdk/v2/consent", preflight, nil, http.StatusNoContent)
	e.call(e.pub, http.MethodOptions, "/api/sdk/v2/anything", preflight, nil, http.StatusNoContent)
}

// apps covers the admin API's apps.
func (e *liveEnv) apps() {
	e.admin(http.MethodPost, "/admin/v1/apps", map[string]any{"name": "Shop", "tier": "gold"}, http.StatusBadRequest)
	e.call(e.adm, http.MethodGet, "/admin/v1/apps", nil, nil, http.StatusUnauthorized)
	free := e.createApp(map[string]any{"name": "Shop"})
	biz := e.createApp(map[string]any{"name": "Shop", "tier": "business", "appUserEnabled": true})
	e.admin(http.MethodGet, "/admin/v1/apps", nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/apps/"+biz.ID, nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/apps/app_0Nq3bA9xYzAbCdEfGhIjKl", nil, http.StatusNotFound)
	e.admin(http.MethodPatch, "/admin/v1/apps/"+biz.ID, map[string]any{"defaultConsent": map[string]any{"marketing": true, "marketingNight": false}}, http.StatusOK)
	var secret struct{ SecretKey string }
	e.admin(http.MethodPost, "/admin/v1/apps/"+biz.ID+"/secret-key", nil, http.StatusOK).Decode(e.t, &secret)
	biz.SecretKey = secret.SecretKey
	e.admin(http.MethodPut, "/admin/v1/apps/"+biz.ID+"/fcm-credentials", map[string]any{"type": "service_account"}, http.StatusBadRequest)
	e.admin(http.MethodPut, "/admin/v1/apps/"+biz.ID+"/fcm-credentials", testenv.NewServiceAccount(e.t).JSON, http.StatusOK)
	e.admin(http.MethodPut, "/admin/v1/apps/"+biz.ID+"/webhook", map[string]any{"url": "http://127.0.0.1:9/hook"}, http.StatusOK)
	e.admin(http.MethodPatch, "/admin/v1/apps/"+free.ID, map[string]any{"identityVerification": true}, http.StatusBadRequest)
	var identity struct{ IdentitySecret string }
	e.admin(http.MethodPost, "/admin/v1/apps/"+free.ID+"/identity-secret", nil, http.StatusOK).Decode(e.t, &identity)
	e.identitySecret = identity.IdentitySecret
	e.admin(http.MethodPatch, "/admin/v1/apps/"+free.ID, map[string]any{"identityVerification": true}, http.StatusOK)
	e.liveApps = [2]testenv.App{free, biz}
	e.adSettingsIfServed()
}

// adSettingsIfServed sets the ad footer's settings, which marketing pushes
// need (DESIGN.md section 6), when the app's answer shows they are served.
func (e *liveEnv) adSettingsIfServed() {
	biz := e.liveApps[1]
	var got map[string]any
	e.admin(http.MethodGet, "/admin/v1/apps/"+biz.ID, nil, http.StatusOK).Decode(e.t, &got)
	if _, e.adSettings = got["adSender"]; e.adSettings {
		e.admin(http.MethodPatch, "/admin/v1/apps/"+biz.ID, map[string]any{
			"adSender": map[string]any{"name": "Shop", "contact": "080-000-0000"}, "adOptOut": "수신거부: 마이 > 설정 > 알림",
			"consentNotice": map[string]any{"enabled": false}, "reconfirmation": map[string]any{"enabled": false, "leadDays": 30},
		}, http.StatusOK)
	}
}

// devices covers the SDK API.
func (e *liveEnv) devices() {
	biz := e.liveApps[1]
	device := func(id, token string, user any) map[string]any {
		b := map[string]any{"deviceId": id, "token": token, "platform": "android", "appSourceVersion": "1.6.0"}
		if user != nil {
			b["userId"] = user
		}
		return b
	}
	e.sdk(biz, http.MethodPost, "/api/sdk/v2/push-token", device("device-1", "fcm-token-1", "user-1"), http.StatusOK)
	e.sdk(biz, http.MethodPost, "/api/sdk/v2/push-token", device("device-2", "fcm-token-2", nil), http.StatusOK)
	e.sdk(biz, http.MethodPost, "/api/sdk/v2/push-token", device("device-3", "fcm-token-3", 42), http.StatusOK)
	e.sdk(biz, http.MethodPost, "/api/sdk/v2/push-token", map[string]any{"deviceId": "device-4"}, http.StatusBadRequest)
	e.call(e.pub, http.MethodPost, "/api/sdk/v2/push-token", nil, device("device-4", "t", nil), http.StatusBadRequest)
	unknown := testenv.App{APIKey: "hk_" + strings.Repeat("0", 32), SecretKey: "hs_" + strings.Repeat("0", 40)}
	e.sdk(unknown, http.MethodPost, "/api/sdk/v2/push-token", device("device-4", "t", nil), http.StatusNotFound)
	e.sdk(biz, http.MethodPost, "/api/sdk/v2/user", map[string]any{"deviceId": "device-2", "userId": "user-2"}, http.StatusOK)
	e.sdk(biz, http.MethodPost, "/api/sdk/v2/user", map[string]any{"deviceId": "device-9", "userId": "user-2"}, http.StatusNotFound)
	e.sdk(biz, http.MethodPatch, "/api/sdk/v2/consent", map[string]any{"deviceId": "device-1", "marketing": true}, http.StatusOK)
	e.sdk(biz, http.MethodPatch, "/api/sdk/v2/consent", map[string]any{"deviceId": "device-1"}, http.StatusBadRequest)
	e.sdk(biz, http.MethodPatch, "/api/sdk/v2/tags", map[string]any{"deviceId": "device-1", "tags": map[string]any{"plan": "gold", "visits": 3}}, http.StatusOK)
	e.sdk(biz, http.MethodPatch, "/api/sdk/v2/tags", map[string]any{"deviceId": "device-1", "tags": map[string]any{"bad name": 1}}, http.StatusBadRequest)
	e.sdk(biz, http.MethodPatch, "/api/sdk/v2/tags", map[string]any{"deviceId": "device-9", "tags": map[string]any{}}, http.StatusNotFound)
	// The free app verifies identities.
	free := e.liveApps[0]
	e.sdk(free, http.MethodPost, "/api/sdk/v2/push-token", device("device-1", "fcm-token-f1", "user-1"), http.StatusUnauthorized)
	signed := device("device-1", "fcm-token-f1", "user-1")
	signed["identityToken"] = herald.IdentityToken(e.identitySecret, "user-1")
	e.sdk(free, http.MethodPost, "/api/sdk/v2/push-token", signed, http.StatusOK)
	e.sdk(free, http.MethodPost, "/api/sdk/v2/user", map[string]any{"deviceId": "device-1", "userId": "user-2"}, http.StatusUnauthorized)
	e.sdk(free, http.MethodPatch, "/api/sdk/v2/consent", map[string]any{"deviceId": "device-1", "marketing": true}, http.StatusUnauthorized)
	sdkKey := map[string]string{"x-api-key": biz.APIKey}
	e.call(e.limited, http.MethodPost, "/api/sdk/v2/user", sdkKey, map[string]any{"deviceId": "device-2", "userId": "user-2"}, http.StatusOK)
	e.call(e.limited, http.MethodPost, "/api/sdk/v2/user", sdkKey, map[string]any{"deviceId": "device-2", "userId": "user-2"}, http.StatusTooManyRequests)
}

// consent covers the Server API's consent and the admin API's user views.
func (e *liveEnv) consent() {
	free, biz := e.liveApps[0], e.liveApps[1]

	state := func(user any, s map[string]any) map[string]any { return map[string]any{"userId": user, "state": s} }
	e.server(biz, http.MethodPatch, "/api/app-user/v2/marketing", state("user-1", map[string]any{"marketing": true, "marketingNight": true}), http.StatusOK)
	e.server(biz, http.MethodPatch, "/api/app-user/v2/marketing", state(42, map[string]any{"marketing": false}), http.StatusOK)
	e.server(biz, http.MethodPatch, "/api/app-user/v2/marketing", state("user-1", map[string]any{}), http.StatusBadRequest)
	e.server(biz, http.MethodPatch, "/api/app-user/v2/marketing", state("nobody", map[string]any{"marketing": true}), http.StatusNotFound)
	e.server(free, http.MethodPatch, "/api/app-user/v2/marketing", state("user-1", map[string]any{"marketing": true}), http.StatusForbidden)
	wrong := testenv.App{APIKey: biz.APIKey, SecretKey: "hs_" + strings.Repeat("1", 40)}
	e.server(wrong, http.MethodPatch, "/api/app-user/v2/marketing", state("user-1", map[string]any{"marketing": true}), http.StatusUnauthorized)
	e.call(e.pub, http.MethodPatch, "/api/app-user/v2/marketing", map[string]string{"x-api-key": biz.APIKey}, state("user-1", nil), http.StatusBadRequest)
	tags := func(user any, tags any) map[string]any { return map[string]any{"userId": user, "tags": tags} }
	e.server(biz, http.MethodPut, "/api/app-user/v2/tags", tags("user-1", map[string]any{"vip": true, "city": nil}), http.StatusOK)
	e.server(biz, http.MethodPut, "/api/app-user/v2/tags", tags("user-1", "vip"), http.StatusBadRequest)
	e.server(biz, http.MethodPut, "/api/app-user/v2/tags", tags("nobody", map[string]any{"vip": true}), http.StatusNotFound)
	e.server(free, http.MethodPut, "/api/app-user/v2/tags", tags("user-1", map[string]any{"vip": true}), http.StatusForbidden)
	keys := map[string]string{"x-api-key": biz.APIKey, "x-secret-key": biz.SecretKey}
	e.call(e.limited, http.MethodPatch, "/api/app-user/v2/marketing", keys, state("user-1", map[string]any{"marketing": true}), http.StatusOK)
	e.call(e.limited, http.MethodPatch, "/api/app-user/v2/marketing", keys, state("user-1", map[string]any{"marketing": true}), http.StatusTooManyRequests)

	users := "/admin/v1/apps/" + biz.ID + "/users/"
	e.admin(http.MethodGet, users+"user-1", nil, http.StatusOK)
	e.admin(http.MethodGet, users+"nobody", nil, http.StatusNotFound)
	e.admin(http.MethodGet, users+"user-1/consent-history", nil, http.StatusOK)
	e.admin(http.MethodGet, users+"user-1/export?reason=subject+access+request", nil, http.StatusOK)
	e.admin(http.MethodGet, users+"user-1/export", nil, http.StatusBadRequest)
	e.admin(http.MethodGet, users+"nobody/export?reason=asked", nil, http.StatusNotFound)
	e.admin(http.MethodPatch, users+"user-1/consent", map[string]any{"marketing": true}, http.StatusOK)
	e.admin(http.MethodPatch, users+"user-1/consent", map[string]any{"marketing": "yes"}, http.StatusBadRequest)
	e.admin(http.MethodPut, users+"user-1/tags", map[string]any{"tags": map[string]any{"tier": "b2"}}, http.StatusOK)
	e.admin(http.MethodPut, users+"user-1/tags", map[string]any{"tags": 5}, http.StatusBadRequest)
	e.admin(http.MethodPut, users+"nobody/tags", map[string]any{"tags": map[string]any{}}, http.StatusNotFound)
	e.admin(http.MethodGet, "/admin/v1/apps/"+biz.ID+"/consent-due?within=30d", nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/apps/"+biz.ID+"/consent-due?within=30", nil, http.StatusBadRequest)
}

// pushes covers the push endpoints; it answers the request group used.
func (e *liveEnv) pushes() string {
	free, biz := e.liveApps[0], e.liveApps[1]
	const group = "order-ship"
	msg := map[string]any{"userIds": []any{"user-1", 42}, "title": "Your order has shipped", "content": "It arrives tomorrow.",
		"linkURL": "https://example.com/o/1", "options": map[string]any{"isUsingBadge": true, "requestGroupId": group}}
	res := e.server(biz, http.MethodPost, "/api/push/v2/users", msg, http.StatusOK)
	e.immediate = res.Header.Get("X-Push-Id")
	at := time.Now().In(testenv.Seoul).Add(48 * time.Hour).Format("2006-01-02T15:04")
	scheduled := map[string]any{"userIds": []any{"user-1"}, "title": "(광고) Weekend sale", "content": "20% off",
		"options": map[string]any{"scheduleTime": at, "requestGroupId": group}}
	res = e.server(biz, http.MethodPost, "/api/push/v2/users", scheduled, http.StatusOK)
	e.scheduled = res.Header.Get("X-Push-Id")
	e.server(biz, http.MethodPost, "/api/push/v2/users", map[string]any{"userIds": []any{}, "title": "t", "content": "c"}, http.StatusBadRequest)
	e.server(free, http.MethodPost, "/api/push/v2/users", msg, http.StatusNotFound)
	idem := map[string]string{"x-api-key": biz.APIKey, "x-secret-key": biz.SecretKey, "Idempotency-Key": "order-1"}
	e.call(e.pub, http.MethodPost, "/api/push/v2/users", idem, msg, http.StatusOK)
	e.call(e.pub, http.MethodPost, "/api/push/v2/users", idem, scheduled, http.StatusConflict)
	e.server(biz, http.MethodPost, "/api/push/v2/messages", map[string]any{"messages": []any{
		map[string]any{"userId": "user-1", "title": "Hello Ann", "content": "Your table is ready."},
		map[string]any{"userId": 42, "title": "Hello Bo", "content": "Soon.", "imageURL": "https://example.com/t.png"},
	}, "options": map[string]any{"requestGroupId": "tables-01"}}, http.StatusOK)
	e.server(biz, http.MethodPost, "/api/push/v2/messages", map[string]any{"messages": []any{
		map[string]any{"userId": "user-1", "title": "Your code", "content": "123456"},
	}, "options": map[string]any{"priority": "high"}}, http.StatusOK) // shown with priority high in the history
	e.server(biz, http.MethodPost, "/api/push/v2/users", map[string]any{"userIds": []any{"user-1"}, "title": "t", "content": "c",
		"options": map[string]any{"priority": "urgent"}}, http.StatusBadRequest)
	e.server(biz, http.MethodPost, "/api/push/v2/users", map[string]any{"userIds": []any{"user-1"}, "title": "Later", "content": "Over a minute",
		"options": map[string]any{"spreadMinutes": 1}}, http.StatusOK) // shown with spreadMinutes and spreadUntil in the history
	e.server(biz, http.MethodPost, "/api/push/v2/users", map[string]any{"userIds": []any{"user-1"}, "title": "t", "content": "c",
		"options": map[string]any{"spreadMinutes": 1.5}}, http.StatusBadRequest)
	e.server(biz, http.MethodPost, "/api/topic/v2/subscribe", map[string]any{"topic": "news", "userIds": []any{"user-1"}}, http.StatusOK)
	e.server(biz, http.MethodPost, "/api/push/v2/topics", map[string]any{"topic": "news", "title": "News", "content": "Today"}, http.StatusOK)
	e.server(biz, http.MethodPost, "/api/topic/v2/unsubscribe", map[string]any{"topic": "news", "userIds": []any{"user-1"}}, http.StatusOK)
	e.server(biz, http.MethodPost, "/api/push/v2/all", map[string]any{"title": "To all", "content": "Hello"}, http.StatusOK)
	gold := map[string]any{"tag": "vip", "eq": true}
	seg := e.admin(http.MethodPost, "/admin/v1/apps/"+biz.ID+"/segments", map[string]any{"name": "VIP", "filter": gold}, http.StatusCreated)
	var sg struct{ SegmentID string }
	seg.Decode(e.t, &sg)
	segs := "/admin/v1/apps/" + biz.ID + "/segments"
	e.admin(http.MethodPost, segs, map[string]any{"name": "VIP", "filter": gold}, http.StatusConflict)
	e.admin(http.MethodPost, segs, map[string]any{"name": "bad", "filter": map[string]any{"tag": "vip"}}, http.StatusBadRequest)
	e.admin(http.MethodGet, segs, nil, http.StatusOK)
	e.admin(http.MethodGet, segs+"/"+sg.SegmentID, nil, http.StatusOK)
	e.admin(http.MethodGet, segs+"/seg_nope", nil, http.StatusNotFound)
	e.admin(http.MethodPut, segs+"/"+sg.SegmentID, map[string]any{"name": "VIP users", "filter": gold}, http.StatusOK)
	e.admin(http.MethodGet, segs+"/"+sg.SegmentID+"/count", nil, http.StatusOK)
	e.admin(http.MethodPost, "/admin/v1/apps/"+biz.ID+"/audience/count", map[string]any{"filter": map[string]any{"field": "platform", "eq": "android"}}, http.StatusOK)
	e.admin(http.MethodPost, "/admin/v1/apps/"+biz.ID+"/audience/count", map[string]any{"filter": map[string]any{"field": "planet", "eq": "x"}}, http.StatusBadRequest)
	tagImport := func(contentType, body string, want int) {
		e.t.Helper()
		e.call(e.adm, http.MethodPost, "/admin/v1/apps/"+biz.ID+"/tag-import",
			map[string]string{"Authorization": "Bearer " + testenv.AdminToken, "Content-Type": contentType}, body, want)
	}
	tagImport("text/csv", "userId,vip:boolean,points:number\nuser-1,true,12\nnobody,false,\n", http.StatusOK)
	tagImport("text/csv", "userId,vip:boolean\nuser-1,maybe\n", http.StatusBadRequest)
	tagImport("application/json", `{"userId":"user-1"}`, http.StatusBadRequest)
	e.server(biz, http.MethodPost, "/api/push/v2/segments", map[string]any{"filter": gold, "title": "For VIPs", "content": "Hello"}, http.StatusOK)
	e.server(biz, http.MethodPost, "/api/push/v2/segments", map[string]any{"segmentId": sg.SegmentID, "title": "For VIPs", "content": "Hello"}, http.StatusOK)
	e.server(biz, http.MethodPost, "/api/push/v2/segments", map[string]any{"title": "For VIPs", "content": "Hello"}, http.StatusBadRequest)
	tmp := e.admin(http.MethodPost, segs, map[string]any{"name": "to delete", "filter": gold}, http.StatusCreated)
	var del struct{ SegmentID string }
	tmp.Decode(e.t, &del)
	e.admin(http.MethodDelete, segs+"/"+del.SegmentID, nil, http.StatusNoContent)
	e.admin(http.MethodPost, "/admin/v1/apps/"+biz.ID+"/test-push", map[string]any{"userId": "user-1", "title": "Test", "content": "Hi"}, http.StatusOK)
	e.admin(http.MethodPost, "/admin/v1/apps/"+biz.ID+"/test-push", map[string]any{"title": "Test"}, http.StatusBadRequest)
	return group
}

// history covers the admin views of pushes and usage.
func (e *liveEnv) history(group string) {
	biz := e.liveApps[1]
	app := "/admin/v1/apps/" + biz.ID
	e.admin(http.MethodGet, app+"/pushes", nil, http.StatusOK)
	e.admin(http.MethodGet, app+"/pushes?status=bogus", nil, http.StatusBadRequest)
	e.admin(http.MethodGet, app+"/scheduled-pushes", nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/pushes/"+e.immediate, nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/pushes/push_0Nq3bA9xYzAbCdEfGhIjKl", nil, http.StatusNotFound)
	e.admin(http.MethodPatch, "/admin/v1/pushes/"+e.scheduled, map[string]any{"title": "(광고) Weekend sale, extended"}, http.StatusOK)
	e.admin(http.MethodPatch, "/admin/v1/pushes/"+e.immediate, map[string]any{"title": "Too late"}, http.StatusConflict)
	e.admin(http.MethodPost, "/admin/v1/pushes/"+e.scheduled+"/cancel", nil, http.StatusOK)
	e.admin(http.MethodPost, "/admin/v1/pushes/"+e.immediate+"/release", nil, http.StatusConflict) // not held
	e.admin(http.MethodGet, app+"/push-groups/"+group, nil, http.StatusOK)
	e.admin(http.MethodGet, app+"/push-groups/no-such-group", nil, http.StatusNotFound)
	e.admin(http.MethodGet, app+"/usage", nil, http.StatusOK)
	e.admin(http.MethodGet, app+"/usage?from=2026-13-01", nil, http.StatusBadRequest)
	// The owner's token has no account to enrol TOTP on; an operator's
	// enrols, by the code the dashboard's Account page runs (admin's
	// TestTOTPSignIn).
	e.admin(http.MethodPost, "/admin/v1/me/totp", nil, http.StatusForbidden)
	e.admin(http.MethodPost, "/admin/v1/me/totp/confirm", map[string]any{"code": "123456"}, http.StatusForbidden)
}

// approvals covers a push awaiting approval: its answer and record, its
// approval and rejection, and their refusals.
func (e *liveEnv) approvals() {
	a := e.createApp(map[string]any{"name": "Careful", "approval": map[string]any{"mode": "all", "minUsers": 1}})
	e.admin(http.MethodPatch, "/admin/v1/apps/"+a.ID, map[string]any{"approval": map[string]any{"mode": "sometimes"}}, http.StatusBadRequest)
	e.admin(http.MethodPut, "/admin/v1/apps/"+a.ID+"/fcm-credentials", testenv.NewServiceAccount(e.t).JSON, http.StatusOK)
	push := func() string {
		e.t.Helper()
		res := e.server(a, http.MethodPost, "/api/push/v2/users", map[string]any{"userIds": []any{"user-1"}, "title": "Sale", "content": "Today"}, http.StatusOK)
		if got := res.Header.Get("X-Push-Status"); got != "awaiting_approval" {
			e.t.Errorf("X-Push-Status: got %q, want awaiting_approval", got)
		}
		return res.Header.Get("X-Push-Id")
	}
	first, second := push(), push()
	e.admin(http.MethodGet, "/admin/v1/pushes/"+first, nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/apps/"+a.ID+"/pushes?status=awaiting_approval", nil, http.StatusOK)
	e.admin(http.MethodPost, "/admin/v1/pushes/"+first+"/reject", map[string]any{}, http.StatusBadRequest)
	e.admin(http.MethodPost, "/admin/v1/pushes/"+first+"/approve", map[string]any{"reason": "checked"}, http.StatusOK)
	e.admin(http.MethodPost, "/admin/v1/pushes/"+first+"/approve", nil, http.StatusConflict)
	e.admin(http.MethodPost, "/admin/v1/pushes/"+second+"/reject", map[string]any{"reason": "not today"}, http.StatusOK)
	e.admin(http.MethodPost, "/admin/v1/pushes/push_0Nq3bA9xYzAbCdEfGhIjKl/approve", nil, http.StatusNotFound)
}

// marketingCap covers the frequency cap setting: set, shown, refused,
// cleared.
func (e *liveEnv) marketingCap() {
	a := e.createApp(map[string]any{"name": "Capped", "marketingCap": map[string]any{"perDay": 1, "perWeek": nil}})
	e.admin(http.MethodGet, "/admin/v1/apps/"+a.ID, nil, http.StatusOK)
	e.admin(http.MethodPatch, "/admin/v1/apps/"+a.ID, map[string]any{"marketingCap": map[string]any{"perWeek": 1.5}}, http.StatusBadRequest)
	e.admin(http.MethodPatch, "/admin/v1/apps/"+a.ID, map[string]any{"marketingCap": map[string]any{"perDay": 2, "perWeek": 5}}, http.StatusOK)
	e.admin(http.MethodPatch, "/admin/v1/apps/"+a.ID, map[string]any{"marketingCap": nil}, http.StatusOK)
}

// operators covers operator management and an operator's API token: a
// viewer's push (null per-user rows), its refusals (403, 404) and /me.
func (e *liveEnv) operators() {
	biz := e.liveApps[1]
	ops := "/admin/v1/operators"
	var op struct{ OperatorID string }
	e.admin(http.MethodPost, ops, map[string]any{"email": "mina@example.com", "name": "Mina", "role": "viewer", "apps": []string{biz.ID}}, http.StatusCreated).Decode(e.t, &op)
	e.admin(http.MethodPost, ops, map[string]any{"email": "MINA@example.com", "name": "Mina", "role": "viewer"}, http.StatusConflict)
	e.admin(http.MethodPost, ops, map[string]any{"email": "x@example.com", "name": "X", "role": "boss"}, http.StatusBadRequest)
	e.admin(http.MethodGet, ops, nil, http.StatusOK)
	one := ops + "/" + op.OperatorID
	e.admin(http.MethodGet, one, nil, http.StatusOK)
	e.admin(http.MethodGet, ops+"/op_0Nq3bA9xYzAbCdEfGhIjKl", nil, http.StatusNotFound)
	e.admin(http.MethodPatch, one, map[string]any{"name": "Mina Park"}, http.StatusOK)
	e.admin(http.MethodPatch, one, map[string]any{"apps": []string{"app_0Nq3bA9xYzAbCdEfGhIjKl"}}, http.StatusBadRequest)
	e.admin(http.MethodPost, one+"/setup-link", nil, http.StatusOK)
	var tok struct{ TokenID, Token string }
	e.admin(http.MethodPost, one+"/tokens", map[string]any{"name": "ci", "expiresInDays": 30}, http.StatusCreated).Decode(e.t, &tok)
	e.admin(http.MethodPost, one+"/tokens", map[string]any{"name": "ci", "expiresInDays": 366}, http.StatusBadRequest)
	e.admin(http.MethodGet, one+"/tokens", nil, http.StatusOK)
	viewer := map[string]string{"Authorization": "Bearer " + tok.Token}
	e.call(e.adm, http.MethodGet, "/admin/v1/me", viewer, nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/me", nil, http.StatusOK)
	e.call(e.adm, http.MethodGet, "/admin/v1/pushes/"+e.immediate, viewer, nil, http.StatusOK)
	e.call(e.adm, http.MethodGet, "/admin/v1/apps/"+biz.ID+"/users", viewer, nil, http.StatusForbidden)
	e.call(e.adm, http.MethodGet, "/admin/v1/apps/"+e.liveApps[0].ID, viewer, nil, http.StatusNotFound)
	e.call(e.adm, http.MethodGet, ops, viewer, nil, http.StatusForbidden)
	e.admin(http.MethodDelete, one+"/tokens/"+tok.TokenID, nil, http.StatusNoContent)
	e.call(e.adm, http.MethodGet, "/admin/v1/me", viewer, nil, http.StatusUnauthorized)
	e.admin(http.MethodDelete, one+"/totp", nil, http.StatusNoContent)
	e.admin(http.MethodDelete, one, nil, http.StatusNoContent)
	e.admin(http.MethodDelete, one, nil, http.StatusNotFound)
}

// registered reports whether a route pattern ("METHOD /path") is served.
func registered(pattern string) bool {
	return slices.Contains(api.Routes(), pattern) || slices.Contains(admin.Routes(), pattern)
}

// pending calls the interfaces of DESIGN.md sections 6 and 7 that other
// branches build, once their routes (or, for the app settings, the app's
// answer) show they have landed; until then it calls nothing.
func (e *liveEnv) pending() {
	biz := e.liveApps[1]
	app := "/admin/v1/apps/" + biz.ID
	if e.adSettings {
		e.admin(http.MethodPatch, app, map[string]any{"reconfirmation": map[string]any{"leadDay": 3}}, http.StatusBadRequest)
	}
	if registered("POST /api/sdk/v2/events") {
		e.call(e.pub, http.MethodOptions, "/api/sdk/v2/events", map[string]string{"Origin": "https://app.example"}, nil, http.StatusNoContent)
		e.sdk(biz, http.MethodPost, "/api/sdk/v2/events", map[string]any{"deviceId": "device-1",
			"events": []any{map[string]any{"pushId": e.immediate, "type": "opened"}}}, http.StatusOK)
		e.sdk(biz, http.MethodPost, "/api/sdk/v2/events", map[string]any{"deviceId": "device-1", "events": []any{}}, http.StatusBadRequest)
	}
	if registered("GET /admin/v1/apps/{appId}/overview") {
		e.admin(http.MethodGet, app+"/overview?days=30", nil, http.StatusOK)
		e.admin(http.MethodGet, app+"/overview?days=5", nil, http.StatusBadRequest)
	}
	if registered("GET /admin/v1/apps/{appId}/users") {
		e.admin(http.MethodGet, app+"/users?q=user-&limit=1", nil, http.StatusOK)
		e.admin(http.MethodGet, app+"/users?limit=0", nil, http.StatusBadRequest)
	}
	if registered("POST /admin/v1/apps/{appId}/reconfirmation/run") {
		e.admin(http.MethodPatch, app, map[string]any{"reconfirmation": map[string]any{"enabled": false}}, http.StatusOK)
		e.admin(http.MethodPost, app+"/reconfirmation/run", nil, http.StatusConflict)
		e.admin(http.MethodPatch, app, map[string]any{"reconfirmation": map[string]any{"enabled": true}}, http.StatusOK)
		e.admin(http.MethodPost, app+"/reconfirmation/run", nil, http.StatusOK)
	}
	if registered("POST /admin/v1/apps/{appId}/consent-import") {
		e.admin(http.MethodPost, app+"/consent-import", map[string]any{"users": []any{
			map[string]any{"userId": "user-1", "marketing": true, "marketingNight": false, "at": "2025-01-02T03:04:05Z"},
			map[string]any{"userId": "nobody", "marketing": true, "marketingNight": false, "at": "2025-01-02T03:04:05Z"},
		}}, http.StatusOK)
		e.admin(http.MethodPost, app+"/consent-import", map[string]any{"users": []any{map[string]any{"userId": "user-1"}}}, http.StatusBadRequest)
	}
}

// recipients covers a push's recipients export, its fan-out recorded
// through the store (no job runs here): each JSON line is checked against
// the document's PushRecipient.
func (e *liveEnv) recipients() {
	ctx := context.Background()
	ds := []herald.Delivery{
		{Seq: 0, UserID: "user-1", DeviceID: "device-1", Token: "token-of-device-1", Platform: herald.PlatformAndroid, State: herald.DeliveryPending},
		{Seq: 1, UserID: "42", DeviceID: "device-42", Token: "token-of-device-42", Platform: herald.PlatformAndroid, State: herald.DeliverySuppressedConsent},
		{Seq: 2, UserID: "user-2", DeviceID: "device-2", Token: "token-of-device-2", Platform: herald.PlatformAndroid, State: herald.DeliverySuppressedCap},
	}
	if _, err := e.db.StartSending(ctx, e.immediate, sendstore.Fanout{To: sendstore.FanoutCursor{Seq: 3, Chunk: 1}, Deliveries: ds}); err != nil {
		e.t.Fatalf("record the fan-out: %v", err)
	}
	path := "/admin/v1/pushes/" + e.immediate + "/recipients"
	e.admin(http.MethodGet, path+"?reason=complaint", nil, http.StatusOK)
	res := e.admin(http.MethodGet, path+"?format=jsonl&reason=complaint", nil, http.StatusOK)
	lines := bytes.Split(bytes.TrimSuffix(res.Body, []byte("\n")), []byte("\n"))
	if len(lines) != len(ds) {
		e.t.Errorf("recipients: got %d lines, want %d", len(lines), len(ds))
	}
	schema := e.v.doc.Components.Schemas["PushRecipient"].Value
	for _, line := range lines {
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			e.t.Fatalf("recipients line %s: %v", line, err)
		}
		if err := schema.VisitJSON(v); err != nil {
			e.t.Errorf("recipients line %s: not a PushRecipient: %v", line, err)
		}
	}
	e.admin(http.MethodGet, path+"?format=xml&reason=complaint", nil, http.StatusBadRequest)
	e.admin(http.MethodGet, path, nil, http.StatusBadRequest)
	e.admin(http.MethodGet, "/admin/v1/pushes/push_unknown/recipients?reason=complaint", nil, http.StatusNotFound)
}

// accessRecords covers the access records the calls before left.
func (e *liveEnv) accessRecords() {
	e.admin(http.MethodGet, "/admin/v1/access-records?limit=5", nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/access-records?limit=0", nil, http.StatusBadRequest)
	e.admin(http.MethodGet, "/admin/v1/access-records?format=jsonl", nil, http.StatusBadRequest)
	e.admin(http.MethodGet, "/admin/v1/access-records?format=jsonl&reason=audit", nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/access-records/verify", nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/access-records/head", nil, http.StatusOK)
	e.admin(http.MethodGet, "/admin/v1/access-records/verify?head=%7B%7D", nil, http.StatusBadRequest)
}

// teardown covers the removals, last.
func (e *liveEnv) teardown() {
	free, biz := e.liveApps[0], e.liveApps[1]
	e.server(biz, http.MethodDelete, "/api/app-user/v2", map[string]any{"userId": "user-2"}, http.StatusOK)
	e.server(biz, http.MethodDelete, "/api/app-user/v2", map[string]any{"userId": "user-2"}, http.StatusGone)
	e.server(biz, http.MethodDelete, "/api/app-user/v2", map[string]any{"userId": "nobody"}, http.StatusNotFound)
	e.server(biz, http.MethodPatch, "/api/app-user/v2/marketing", map[string]any{"userId": "user-2", "state": map[string]any{"marketing": true}}, http.StatusGone)
	e.server(free, http.MethodDelete, "/api/app-user/v2", map[string]any{"userId": "user-2"}, http.StatusForbidden)
	e.server(biz, http.MethodDelete, "/api/push-token/v2", map[string]any{"token": "fcm-token-3"}, http.StatusOK)
	e.server(biz, http.MethodDelete, "/api/push-token/v2", map[string]any{"token": "fcm-token-3"}, http.StatusNotFound)
	e.sdk(biz, http.MethodDelete, "/api/sdk/v2/push-token", map[string]any{"deviceId": "device-1"}, http.StatusOK)
	e.sdk(biz, http.MethodDelete, "/api/sdk/v2/push-token", map[string]any{"deviceId": "device-1"}, http.StatusNotFound)
	e.admin(http.MethodDelete, "/admin/v1/apps/"+biz.ID+"/webhook", nil, http.StatusNoContent)
	e.admin(http.MethodDelete, "/admin/v1/apps/"+biz.ID+"/fcm-credentials", nil, http.StatusNoContent)
	e.admin(http.MethodDelete, "/admin/v1/apps/"+free.ID, nil, http.StatusNoContent)
}
