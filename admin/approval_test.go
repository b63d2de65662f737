package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/webhook"
)

// approvalView is a push's admin record as the approval tests read it.
type approvalView struct {
	PushID, Status    string
	ScheduledAt       *time.Time
	ServerActions     float64
	ApprovalExpiresAt *time.Time
	Approvals         []struct {
		Action     string
		By, Reason *string
		At         time.Time
	}
	Counts struct{ Tokens, Sent int }
}

// approvalEnv is a node on a running clock the test moves, with an app
// whose every push to two users or more waits for approval, a webhook
// receiver, and three operators.
type approvalEnv struct {
	*env
	clk                             *testenv.Clock
	app                             testenv.App
	recv                            *testenv.Receiver
	secret                          string
	composer, approver              string // operator IDs
	composerTok, apprTok, viewerTok string
}

// approvalStart is 10:00 in Seoul: day time, no night rule.
var approvalStart = time.Date(2026, 12, 1, 10, 0, 0, 0, testenv.Seoul)

func newApprovalEnv(t *testing.T) *approvalEnv {
	clk := &testenv.Clock{}
	clk.Run(approvalStart)
	e := &approvalEnv{env: start(t, testenv.Clocked(clk)), clk: clk, recv: testenv.NewReceiver(t, 0)}
	e.app = e.NewApp(map[string]any{"approval": map[string]any{"mode": "all", "minUsers": 2}})
	e.secret = e.PutWebhook(e.app, e.recv.URL)
	e.Register(e.app, "ap-", "u1", "u2", "u3")
	e.composer, e.composerTok = e.newOperator("composer@example.com", "operator", nil)
	e.approver, e.apprTok = e.newOperator("approver@example.com", "operator", nil)
	_, e.viewerTok = e.newOperator("viewer@example.com", "viewer", nil)
	return e
}

// push sends a Server API push to users (scheduled at the app's local
// time at, when given) and returns its id.
func (e *approvalEnv) push(ctx context.Context, at string, users ...any) string {
	e.T.Helper()
	req := client.PushUsersRequest{UserIDs: users, Title: "Sale", Content: "Today only"}
	if at != "" {
		req.Options = &client.Options{ScheduleTime: at}
	}
	res, err := e.app.Client.PushUsers(ctx, req)
	if err != nil {
		e.T.Fatalf("push: %v", err)
	}
	return res.PushID
}

// view reads a push as the owner.
func (e *approvalEnv) view(id string) approvalView {
	e.T.Helper()
	var v approvalView
	if code := e.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &v); code != http.StatusOK {
		e.T.Fatalf("get push %s: got %d", id, code)
	}
	return v
}

// decide posts approve or reject of a push with token.
func (e *approvalEnv) decide(token, id, action string, body any) testenv.Response {
	e.T.Helper()
	return e.as(token, "POST", "/admin/v1/pushes/"+id+"/"+action, body)
}

// wantCode fails unless res is the spec's error with status and code.
func wantCode(t *testing.T, res testenv.Response, status int, code string) testenv.ErrorBody {
	t.Helper()
	var eb testenv.ErrorBody
	if res.Status != status || json.Unmarshal(res.Body, &eb) != nil || eb.Code != code || eb.StatusCode != status || eb.Message == "" {
		t.Errorf("got %d %s, want %d %s in the spec's error shape", res.Status, res.Body, status, code)
	}
	return eb
}

// sentTo counts the messages the emulator got for the app's users' tokens.
func (e *approvalEnv) sentTo(users ...string) int {
	n := 0
	for _, u := range users {
		n += len(e.Received("ap-" + u))
	}
	return n
}

func TestApprovalSetting(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewAppWithoutFCM(nil)
	var app struct {
		Approval struct {
			Mode     string
			MinUsers int
		}
		WebhookEvents []string
	}
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &app); app.Approval.Mode != "off" || app.Approval.MinUsers != 0 ||
		!slices.Equal(app.WebhookEvents, []string{"push.undeliverable", "consent.changed"}) {
		t.Errorf("default: got %+v %v, want off, 0, the default events", app.Approval, app.WebhookEvents)
	}
	for body, field := range map[string]string{
		`{"approval":{"mode":"some"}}`:                   "approval.mode",
		`{"approval":{"mode":"all","minUsers":1.5}}`:     "approval.minUsers",
		`{"approval":{"mode":"all","minUsers":-1}}`:      "approval.minUsers",
		`{"approval":{"mode":"all","minUsers":2000000}}`: "approval.minUsers",
		`{"approval":{"mode":5}}`:                        "approval.mode",
		`{"approval":{"mod":"all"}}`:                     "approval.mod",
	} {
		res := e.AdminDo(t, "PATCH", "/admin/v1/apps/"+a.ID, json.RawMessage(body))
		eb := wantCode(t, res, http.StatusBadRequest, herald.ErrInvalidRequest.Code)
		if len(eb.Details) == 0 || eb.Details[0].Field != field {
			t.Errorf("%s: got details %+v, want one naming %s", body, eb.Details, field)
		}
	}
	if code := e.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"approval": map[string]any{"mode": "broad"}}, &app); code != http.StatusOK ||
		app.Approval.Mode != "broad" || app.Approval.MinUsers != 0 {
		t.Errorf("PATCH mode broad: got %d %+v, want 200, broad, 0 (nothing of the refused ones kept)", code, app.Approval)
	}
	if e.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"approval": map[string]any{"minUsers": 10}}, &app); app.Approval.Mode != "broad" || app.Approval.MinUsers != 10 {
		t.Errorf("PATCH minUsers alone: got %+v, want broad kept, 10", app.Approval)
	}
	// With approval on, push.approval_requested joins the default events,
	// not a list the app set.
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &app); !slices.Equal(app.WebhookEvents, []string{"push.undeliverable", "consent.changed", "push.approval_requested"}) {
		t.Errorf("default events with approval on: got %v, want push.approval_requested added", app.WebhookEvents)
	}
	if e.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"webhookEvents": []string{"push.sent"}}, &app); !slices.Equal(app.WebhookEvents, []string{"push.sent"}) {
		t.Errorf("events set with approval on: got %v, want [push.sent]", app.WebhookEvents)
	}
}

// TestApprovalServerAPI: a Server API push the setting takes is answered
// as usual and waits, nothing sent or charged, announced to the webhook;
// a viewer may not approve it; another operator does, and it is sent and
// charged then; a rejected one is never sent nor charged.
func TestApprovalServerAPI(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t)
	ctx := context.Background()

	small := e.push(ctx, "", "u3") // below minUsers: sent at once
	if p := e.WaitFinal(small, 10*time.Second); p.Status != "done" || p.Counts.Sent != 1 {
		t.Fatalf("push to one user: got %+v, want done, sent 1", p)
	}
	usage := e.Usage(e.app)

	key := client.WithIdempotencyKey(ctx, "approval-1")
	id := e.push(key, "", "u1", "u2")
	if again := e.push(key, "", "u1", "u2"); again != id {
		t.Errorf("idempotent repeat: got push %s, want %s", again, id)
	}
	p := e.view(id)
	if p.Status != "awaiting_approval" || p.ServerActions != 0 || len(p.Approvals) != 1 || p.Approvals[0].Action != "requested" ||
		p.Approvals[0].By != nil || p.ApprovalExpiresAt == nil || !p.ApprovalExpiresAt.Equal(p.Approvals[0].At.Add(24*time.Hour)) {
		t.Fatalf("accepted: got %+v, want awaiting_approval, uncharged, requested by the Server API, lapsing in 24 h", p)
	}

	// The webhook message: signed, with the push's data.
	var ev struct {
		Type, Timestamp string
		Data            struct {
			AppID, PushID, Kind        string
			RequestGroupID, ComposedBy *string
			Users                      *int
			RequestedAt, ExpiresAt     time.Time
		}
	}
	testenv.WaitFor(t, "the push.approval_requested message", 10*time.Second, func() bool {
		for _, h := range e.recv.Hooks() {
			if json.Unmarshal(h.Body, &ev) == nil && ev.Type == "push.approval_requested" && ev.Data.PushID == id {
				if err := webhook.Verify(e.secret, h.Header, h.Body, time.Now(), 0); err != nil {
					t.Errorf("signature: got %v, want it to verify", err)
				}
				return true
			}
		}
		return false
	})
	if d := ev.Data; d.AppID != e.app.ID || d.Kind != "users" || d.Users == nil || *d.Users != 2 || d.ComposedBy != nil || d.RequestGroupID != nil ||
		!d.ExpiresAt.Equal(d.RequestedAt.Add(24*time.Hour)) || !d.RequestedAt.Equal(p.Approvals[0].At) {
		t.Errorf("webhook data: got %+v, want the app, users, 2 users, no composer, lapsing 24 h after the request", d)
	}
	// The webhook job ran, so River works: the push's own job is its lapse.
	if n := e.sentTo("u1", "u2"); n != 0 || e.view(id).Counts.Tokens != 0 {
		t.Errorf("before approval: got %d messages, %d tokens planned, want none", n, e.view(id).Counts.Tokens)
	}
	if got := e.Usage(e.app); got != usage {
		t.Errorf("usage before approval: got %v, want %v (nothing charged)", got, usage)
	}

	wantCode(t, e.decide(e.viewerTok, id, "approve", nil), http.StatusForbidden, herald.ErrForbidden.Code)
	res := e.decide(e.apprTok, id, "approve", map[string]any{"reason": "checked the copy"})
	var approved approvalView
	if res.Status != http.StatusOK {
		t.Fatalf("approve: got %d %s, want 200", res.Status, res.Body)
	}
	res.Decode(t, &approved)
	if approved.Status != "sending" || len(approved.Approvals) != 2 || *approved.Approvals[1].By != e.approver ||
		*approved.Approvals[1].Reason != "checked the copy" || approved.ApprovalExpiresAt != nil || approved.ServerActions != 1 {
		t.Errorf("approved: got %+v, want sending, approved by %s with its reason, charged 1", approved, e.approver)
	}
	if done := e.WaitFinal(id, 10*time.Second); done.Counts.Sent != 2 || e.sentTo("u1", "u2") != 2 {
		t.Errorf("after approval: got %+v and %d messages, want sent 2", done, e.sentTo("u1", "u2"))
	}
	if got := e.Usage(e.app); got != usage+1 {
		t.Errorf("usage after approval: got %v, want %v", got, usage+1)
	}
	wantCode(t, e.decide(e.apprTok, id, "reject", map[string]any{"reason": "late"}), http.StatusConflict, herald.ErrNotAwaitingApproval.Code)

	t.Run("Reject", func(t *testing.T) {
		id := e.push(ctx, "", "u1", "u2")
		wantCode(t, e.decide(e.apprTok, id, "reject", nil), http.StatusBadRequest, herald.ErrInvalidRequest.Code)
		wantCode(t, e.decide(e.apprTok, id, "reject", map[string]any{"reason": "  "}), http.StatusBadRequest, herald.ErrInvalidRequest.Code)
		wantCode(t, e.decide(e.apprTok, id, "approve", map[string]any{"reason": strings.Repeat("x", 501)}), http.StatusBadRequest, herald.ErrInvalidRequest.Code)
		if p := e.view(id); p.Status != "awaiting_approval" {
			t.Fatalf("after refused decisions: got %s, want awaiting_approval", p.Status)
		}
		res := e.decide(e.apprTok, id, "reject", map[string]any{"reason": "wrong audience"})
		var p approvalView
		res.Decode(t, &p)
		if res.Status != http.StatusOK || p.Status != "rejected" || *p.Approvals[1].Reason != "wrong audience" || p.ServerActions != 0 {
			t.Errorf("reject: got %d %+v, want 200 rejected with its reason, uncharged", res.Status, p)
		}
		wantCode(t, e.decide(e.apprTok, id, "approve", nil), http.StatusConflict, herald.ErrNotAwaitingApproval.Code)
		if got := e.Usage(e.app); got != usage+1 {
			t.Errorf("usage: got %v, want %v (the rejected push uncharged)", got, usage+1)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		id := e.push(ctx, "", "u1", "u2")
		var p approvalView
		if code := e.AdminJSON("POST", "/admin/v1/pushes/"+id+"/cancel", nil, &p); code != http.StatusOK || p.Status != "cancelled" {
			t.Errorf("cancel: got %d %s, want 200 cancelled", code, p.Status)
		}
		wantCode(t, e.decide(e.apprTok, id, "approve", nil), http.StatusConflict, herald.ErrNotAwaitingApproval.Code)
	})
	t.Run("OwnerMayApprove", func(t *testing.T) {
		id := e.push(ctx, "", "u1", "u2")
		var p approvalView
		if code := e.AdminJSON("POST", "/admin/v1/pushes/"+id+"/approve", nil, &p); code != http.StatusOK || *p.Approvals[1].By != herald.OwnerID {
			t.Errorf("owner's approval: got %d %+v, want 200 by owner", code, p)
		}
	})
	t.Run("AccessRecords", func(t *testing.T) {
		var recs struct {
			Records []struct{ Route, PushID string }
		}
		e.AdminJSON("GET", "/admin/v1/access-records?actor="+e.approver, nil, &recs)
		found := map[string]bool{}
		for _, r := range recs.Records {
			if r.PushID == id {
				found[r.Route] = true
			}
		}
		if !found["POST /admin/v1/pushes/{pushId}/approve"] || !found["POST /admin/v1/pushes/{pushId}/reject"] {
			t.Errorf("the approver's records of push %s: got %v, want its approve and its refused reject", id, found)
		}
	})
	t.Run("Listed", func(t *testing.T) {
		var list struct{ Pushes []approvalView }
		e.AdminJSON("GET", "/admin/v1/apps/"+e.app.ID+"/pushes?status=rejected", nil, &list)
		if len(list.Pushes) != 1 || list.Pushes[0].Status != "rejected" {
			t.Errorf("pushes?status=rejected: got %+v, want the rejected one", list.Pushes)
		}
	})
}

// TestApprovalScheduled: an approved scheduled push keeps its time; one
// whose time passed while it waited is sent at once; one left unanswered
// lapses after 24 hours, uncharged.
func TestApprovalScheduled(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t)
	ctx := context.Background()
	usage := e.Usage(e.app)

	keeps := e.push(ctx, "2026-12-01T10:30", "u1", "u2")
	passed := e.push(ctx, "2026-12-01T10:05", "u1", "u2")
	lapses := e.push(ctx, "", "u1", "u2")
	var p approvalView
	if code := e.as(e.apprTok, "POST", "/admin/v1/pushes/"+keeps+"/approve", nil); code.Status != http.StatusOK {
		t.Fatalf("approve: got %d %s", code.Status, code.Body)
	}
	p = e.view(keeps)
	want := time.Date(2026, 12, 1, 10, 30, 0, 0, testenv.Seoul)
	if p.Status != "scheduled" || p.ScheduledAt == nil || !p.ScheduledAt.Equal(want) || p.ServerActions != 1 {
		t.Errorf("approved scheduled push: got %+v, want scheduled at %v, charged 1", p, want)
	}
	e.clk.Run(approvalStart.Add(10 * time.Minute)) // past the second push's time, still awaiting
	if p := e.view(passed); p.Status != "awaiting_approval" || e.sentTo("u1", "u2") != 0 {
		t.Fatalf("a waiting push past its time: got %s and %d messages, want awaiting_approval, nothing sent", p.Status, e.sentTo("u1", "u2"))
	}
	if res := e.decide(e.apprTok, passed, "approve", nil); res.Status != http.StatusOK {
		t.Fatalf("approve: got %d %s", res.Status, res.Body)
	}
	if done := e.WaitFinal(passed, 10*time.Second); done.Counts.Sent != 2 {
		t.Errorf("approved past its time: got %+v, want sent at once to 2", done)
	}
	if p := e.view(keeps); p.Status != "scheduled" {
		t.Errorf("the approved push before its time: got %s, want scheduled", p.Status)
	}
	e.clk.Run(approvalStart.Add(30 * time.Minute))
	if done := e.WaitFinal(keeps, 10*time.Second); done.Counts.Sent != 2 {
		t.Errorf("approved scheduled push at its time: got %+v, want sent to 2", done)
	}

	e.clk.Run(approvalStart.Add(24*time.Hour + time.Second))
	testenv.WaitFor(t, "the unanswered push to lapse", 10*time.Second, func() bool { return e.view(lapses).Status == "approval_expired" })
	if p := e.view(lapses); p.ServerActions != 0 || p.Counts.Tokens != 0 {
		t.Errorf("lapsed: got %+v, want uncharged, nothing sent", p)
	}
	wantCode(t, e.decide(e.apprTok, lapses, "approve", nil), http.StatusConflict, herald.ErrNotAwaitingApproval.Code)
	if got := e.Usage(e.app); got != usage+2 {
		t.Errorf("usage: got %v, want %v (the two approved pushes only)", got, usage+2)
	}
}

// TestApprovalRace: approvals, rejections and cancels of one push sent at
// once over HTTP: exactly one is taken.
func TestApprovalRace(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t)
	id := e.push(context.Background(), "", "u1", "u2")
	const n = 12
	var mu sync.Mutex
	taken := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var res testenv.Response
			switch i % 3 {
			case 0:
				res = testenv.Send(t, http.DefaultClient, e.Admin.URL, testenv.Request{Method: "POST", URL: "/admin/v1/pushes/" + id + "/approve",
					Header: map[string]string{"Authorization": "Bearer " + e.apprTok}})
			case 1:
				res = testenv.Send(t, http.DefaultClient, e.Admin.URL, testenv.Request{Method: "POST", URL: "/admin/v1/pushes/" + id + "/reject",
					Body: map[string]any{"reason": "no"}, Header: map[string]string{"Authorization": "Bearer " + testenv.AdminToken}})
			default:
				res = testenv.Send(t, http.DefaultClient, e.Admin.URL, testenv.Request{Method: "POST", URL: "/admin/v1/pushes/" + id + "/cancel",
					Header: map[string]string{"Authorization": "Bearer " + e.apprTok}})
			}
			mu.Lock()
			defer mu.Unlock()
			switch res.Status {
			case http.StatusOK:
				taken[[]string{"approve", "reject", "cancel"}[i%3]]++
			case http.StatusConflict:
			default:
				t.Errorf("got %d %s, want 200 or 409", res.Status, res.Body)
			}
		})
	}
	wg.Wait()
	total := 0
	for _, c := range taken {
		total += c
	}
	want := map[string]string{"approve": "sending", "reject": "rejected", "cancel": "cancelled"}
	if total != 1 {
		t.Fatalf("taken: got %v, want exactly one", taken)
	}
	for step := range taken {
		if got := e.view(id).Status; got != want[step] && !(step == "approve" && got == "done") {
			t.Errorf("after the %s won: got %s, want %s", step, got, want[step])
		}
	}
}

// TestApprovalDashboard: a push composed on the dashboard waits; its
// composer can approve it neither there nor through the API; another
// operator approves it on the Approvals page, and its page shows the
// steps.
func TestApprovalDashboard(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t)
	composer, approver := e.signInAt(t, e.composer, e.clk.Now()), e.signInAt(t, e.approver, e.clk.Now()) // on the node's clock
	appPath := "/apps/" + e.app.ID

	p := composer.do("POST", appPath+"/compose", url.Values{"confirmed": {"yes"}, "target": {"users"}, "userIds": {"u1\nu2"},
		"title": {"Hello"}, "content": {"World"}})
	id, ok := strings.CutPrefix(p.location, appPath+"/pushes/")
	if p.status != http.StatusSeeOther || !ok {
		t.Fatalf("compose: got %d to %q, want 303 to the push's page:\n%s", p.status, p.location, p.body)
	}
	if page := composer.get(p.location); !strings.Contains(page.body, "Push awaiting approval") || !strings.Contains(page.body, `id="awaiting"`) {
		t.Errorf("the push's page after compose lacks the notice or the awaiting warning:\n%s", page.body)
	}
	if v := e.view(id); v.Status != "awaiting_approval" || v.Approvals[0].By == nil || *v.Approvals[0].By != e.composer {
		t.Fatalf("composed: got %+v, want awaiting_approval requested by %s", v, e.composer)
	}
	eb := wantCode(t, e.decide(e.composerTok, id, "approve", nil), http.StatusForbidden, herald.ErrForbidden.Code)
	if len(eb.Details) == 0 || eb.Details[0].Field != "operator" {
		t.Errorf("the composer's refusal: got details %+v, want one naming the operator", eb.Details)
	}
	wantCode(t, e.decide(e.composerTok, id, "reject", map[string]any{"reason": "mine"}), http.StatusForbidden, herald.ErrForbidden.Code)

	page := composer.get(appPath + "/approvals")
	if !strings.Contains(page.body, `id="own-`+id+`"`) || strings.Contains(page.body, `id="approve-`+id+`"`) {
		t.Errorf("the composer's Approvals page: want the push without its approve form:\n%s", page.body)
	}
	refused := composer.do("POST", appPath+"/pushes/"+id+"/approve", url.Values{})
	if refused.status != http.StatusForbidden || e.view(id).Status != "awaiting_approval" {
		t.Errorf("the composer's approve form posted: got %d, want 403 and the push still waiting", refused.status)
	}
	page = approver.get(appPath + "/approvals")
	if !strings.Contains(page.body, `id="approve-`+id+`"`) || !strings.Contains(page.body, `id="reject-`+id+`"`) {
		t.Fatalf("the approver's Approvals page lacks the push's forms:\n%s", page.body)
	}
	if p := approver.post(appPath+"/pushes/"+id+"/reject", url.Values{"reason": {""}}); p.status != http.StatusBadRequest {
		t.Errorf("reject without a reason: got %d, want 400", p.status)
	}
	done := approver.post(appPath+"/pushes/"+id+"/approve", url.Values{"reason": {"fine"}})
	if !strings.Contains(done.body, "approved") || strings.Contains(done.body, `id="row-`+id+`"`) {
		t.Errorf("after approving: want the notice and the push gone from the list:\n%s", done.body)
	}
	if v := e.WaitFinal(id, 10*time.Second); v.Counts.Sent != 2 {
		t.Errorf("approved on the dashboard: got %+v, want sent to 2", v)
	}
	page = approver.get(appPath + "/pushes/" + id)
	if !strings.Contains(page.body, `id="push-approvals"`) || !strings.Contains(page.body, "fine") || !strings.Contains(page.body, e.approver) {
		t.Errorf("the push's page lacks its approval steps:\n%s", page.body)
	}

	// Its composer may cancel a push that waits, from the Approvals page
	// or the push's: it ends uncharged, and nobody can approve it then.
	p = composer.do("POST", appPath+"/compose", url.Values{"confirmed": {"yes"}, "target": {"users"}, "userIds": {"u1\nu2"},
		"title": {"Second"}, "content": {"thoughts"}})
	second, _ := strings.CutPrefix(p.location, appPath+"/pushes/")
	if page := composer.get(appPath + "/approvals"); !strings.Contains(page.body, `id="cancel-`+second+`"`) {
		t.Errorf("the composer's Approvals page lacks the cancel of its push:\n%s", page.body)
	}
	if page := composer.get(appPath + "/pushes/" + second); !strings.Contains(page.body, `id="cancel-awaiting"`) {
		t.Errorf("the waiting push's page lacks its cancel:\n%s", page.body)
	}
	ask := composer.get(appPath + "/scheduled/" + second + "/cancel")
	if !strings.Contains(ask.body, "Cancel this push awaiting approval?") || !strings.Contains(ask.body, `id="confirm-cancel"`) {
		t.Errorf("the cancel's confirmation page:\n%s", ask.body)
	}
	cancelled := composer.do("POST", appPath+"/scheduled/"+second+"/cancel", url.Values{"confirmed": {"yes"}})
	if cancelled.status != http.StatusSeeOther || cancelled.location != appPath+"/approvals" {
		t.Fatalf("cancel: got %d to %q, want 303 to the Approvals page:\n%s", cancelled.status, cancelled.location, cancelled.body)
	}
	if v := e.view(second); v.Status != "cancelled" || v.ServerActions != 0 {
		t.Errorf("cancelled while waiting: got %+v, want cancelled and nothing charged", v)
	}
	wantCode(t, e.decide(e.apprTok, second, "approve", nil), http.StatusConflict, herald.ErrNotAwaitingApproval.Code)
}
