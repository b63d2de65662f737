package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/client"
)

func schedule(a testenv.App, users []any, at string) (client.PushResult, error) {
	return a.Client.PushUsers(context.Background(), client.PushUsersRequest{
		UserIDs: users, Title: "Scheduled", Content: "at " + at, Options: &client.Options{ScheduleTime: at},
	})
}

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != status || ce.Code != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
}

func TestScheduleTimeRules(t *testing.T) {
	clk := &testenv.Clock{}
	clk.Freeze(time.Date(2026, 12, 1, 22, 4, 30, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	users := []any{"u1"}

	t.Run("SpecExample", func(t *testing.T) {
		_, err := schedule(a, users, "2026-12-01T22:05")
		wantCode(t, err, http.StatusBadRequest, "ERR-AB-VAL-00")
		res, err := schedule(a, users, "2026-12-01T22:06")
		if err != nil {
			t.Fatal(err)
		}
		if res.Message != "Push has been scheduled successfully." || res.PushID == "" {
			t.Fatalf("got %+v, want the scheduled answer with a push id", res)
		}
	})
	t.Run("ExactlySixtySeconds", func(t *testing.T) {
		clk.Freeze(time.Date(2026, 12, 1, 22, 5, 0, 0, testenv.Seoul))
		if _, err := schedule(a, users, "2026-12-01T22:06"); err != nil {
			t.Fatalf("exactly 60 s ahead: got %v, want accepted", err)
		}
		clk.Freeze(time.Date(2026, 12, 1, 22, 5, 0, int(time.Millisecond), testenv.Seoul))
		_, err := schedule(a, users, "2026-12-01T22:06")
		wantCode(t, err, http.StatusBadRequest, "ERR-AB-VAL-00")
	})
	t.Run("IdempotentReplayAfterLead", func(t *testing.T) {
		clk.Freeze(time.Date(2026, 12, 1, 22, 10, 0, 0, testenv.Seoul))
		ctx := client.WithIdempotencyKey(context.Background(), "sched-1")
		req := client.PushUsersRequest{UserIDs: users, Title: "t", Content: "c", Options: &client.Options{ScheduleTime: "2026-12-01T22:12"}}
		first, err := a.Client.PushUsers(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		// 90 s later the time is under 60 s away; the repeat still replays.
		clk.Freeze(time.Date(2026, 12, 1, 22, 11, 30, 0, testenv.Seoul))
		again, err := a.Client.PushUsers(ctx, req)
		if err != nil || again != first {
			t.Fatalf("repeat: got %+v %v, want the first answer %+v", again, err, first)
		}
		req.Title = "other"
		_, err = a.Client.PushUsers(ctx, req)
		wantCode(t, err, http.StatusConflict, "ERR-AB-IDM-01")
	})
	t.Run("NotACalendarTime", func(t *testing.T) {
		for _, at := range []string{"2027-02-30T10:00", "2027-01-01T24:00", "2027-01-01T10:60", "2027-01-01 10:00", "2027-01-01T10:00:00", "27-01-01T10:00"} {
			_, err := schedule(a, users, at)
			wantCode(t, err, http.StatusBadRequest, "ERR-AB-VAL-00")
		}
	})
	t.Run("DSTGap", func(t *testing.T) {
		b := e.NewApp(map[string]any{"timeZone": "America/New_York"})
		e.Register(b, "ny-", "u1")
		// Clocks jump from 02:00 to 03:00 on 2027-03-14 in New York.
		_, err := schedule(b, users, "2027-03-14T02:30")
		wantCode(t, err, http.StatusBadRequest, "ERR-AB-VAL-00")
		if _, err := schedule(b, users, "2027-03-14T03:30"); err != nil {
			t.Fatalf("after the gap: got %v, want accepted", err)
		}
	})
	t.Run("NotOnMessages", func(t *testing.T) {
		_, err := a.Client.PushMessages(context.Background(), client.PushMessagesRequest{
			Messages: []client.Message{{UserID: "u1", Title: "t", Content: "c"}},
			Options:  &client.Options{ScheduleTime: "2026-12-02T10:00"},
		})
		wantCode(t, err, http.StatusBadRequest, "ERR-AB-VAL-00")
	})
}

func TestScheduledEditAndCancel(t *testing.T) {
	clk := &testenv.Clock{}
	sendAt := time.Date(2026, 12, 1, 23, 0, 0, 0, testenv.Seoul)
	clk.Freeze(sendAt.Add(-time.Hour))
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1", "u2")
	edited, err := schedule(a, []any{"u1"}, "2026-12-01T23:00")
	if err != nil {
		t.Fatal(err)
	}
	cancelled, err := schedule(a, []any{"u2"}, "2026-12-01T23:00")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("ListSoonestFirst", func(t *testing.T) {
		later, err := schedule(a, []any{"u1"}, "2026-12-01T23:30")
		if err != nil {
			t.Fatal(err)
		}
		var l struct{ Pushes []testenv.PushView }
		e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/scheduled-pushes", nil, &l)
		var ids []string
		for _, p := range l.Pushes {
			ids = append(ids, p.PushID)
		}
		if len(ids) != 3 || ids[2] != later.PushID {
			t.Fatalf("got %v, want the 23:30 push (%s) last", ids, later.PushID)
		}
		if code := e.AdminJSON("POST", "/admin/v1/pushes/"+later.PushID+"/cancel", nil, nil); code != http.StatusOK {
			t.Fatalf("cancel: got %d", code)
		}
	})
	t.Run("EditRefusesBadTemplate", func(t *testing.T) {
		var body testenv.ErrorBody
		code := e.AdminJSON("PATCH", "/admin/v1/pushes/"+edited.PushID, map[string]any{"content": "Hi {{tag.name"}, &body)
		if code != http.StatusBadRequest || len(body.Details) != 1 || body.Details[0].Field != "content" {
			t.Errorf("edit with an unbalanced placeholder: got %d %+v, want 400 naming content", code, body)
		}
	})
	t.Run("EditAtExactlyFiveMinutes", func(t *testing.T) {
		clk.Freeze(sendAt.Add(-5 * time.Minute))
		var p struct {
			Title string
			Edits []struct{ Changes map[string]string }
		}
		if code := e.AdminJSON("PATCH", "/admin/v1/pushes/"+edited.PushID, map[string]any{"title": "Edited", "isUsingBadge": true}, &p); code != http.StatusOK {
			t.Fatalf("edit 5 min before: got %d, want 200", code)
		}
		if p.Title != "Edited" || len(p.Edits) != 1 || p.Edits[0].Changes["title"] != "Edited" {
			t.Fatalf("got %+v, want the new title and one edit in the trail", p)
		}
	})
	t.Run("CancelRefunds", func(t *testing.T) {
		var p testenv.PushView
		if code := e.AdminJSON("POST", "/admin/v1/pushes/"+cancelled.PushID+"/cancel", nil, &p); code != http.StatusOK || p.Status != "cancelled" {
			t.Fatalf("cancel: got %d %q, want 200 cancelled", code, p.Status)
		}
		var u struct{ TotalServerActions float64 }
		e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/usage?from=2026-12-01&to=2026-12-01", nil, &u)
		if u.TotalServerActions != 0.5 {
			t.Fatalf("usage after refunds: got %v, want 0.5 (only the edited push)", u.TotalServerActions)
		}
	})
	t.Run("TooLate", func(t *testing.T) {
		clk.Freeze(sendAt.Add(-5*time.Minute + time.Millisecond))
		var body struct{ Code string }
		if code := e.AdminJSON("PATCH", "/admin/v1/pushes/"+edited.PushID, map[string]any{"title": "Late"}, &body); code != http.StatusConflict || body.Code != "ERR-AB-SCH-01" {
			t.Fatalf("late edit: got %d %s, want 409 ERR-AB-SCH-01", code, body.Code)
		}
		if code := e.AdminJSON("POST", "/admin/v1/pushes/"+edited.PushID+"/cancel", nil, &body); code != http.StatusConflict || body.Code != "ERR-AB-SCH-01" {
			t.Fatalf("late cancel: got %d %s, want 409 ERR-AB-SCH-01", code, body.Code)
		}
	})
	t.Run("JobsFollowEdits", func(t *testing.T) {
		// The cancelled push's job is cancelled, so it is never sent; the
		// edited push keeps one live job for its time.
		if state := e.jobState(cancelled.PushID); state != "cancelled" {
			t.Fatalf("cancelled push's job: got %q, want cancelled", state)
		}
		if state := e.jobState(edited.PushID); state != "scheduled" {
			t.Fatalf("edited push's job: got %q, want scheduled", state)
		}
	})
}

// jobState reads the state of a push's River job from the database.
func (e *env) jobState(pushID string) string {
	e.T.Helper()
	var state string
	err := e.QueryRow(`SELECT state FROM river_job WHERE id = (SELECT job_id FROM pushes WHERE id = ?)`, pushID).Scan(&state)
	if err != nil {
		e.T.Fatalf("job of %s: %v", pushID, err)
	}
	return state
}

// nextSlot is a send time 61 s ahead of the clock, the shortest wait a
// real scheduled send allows (the lead is 60 s). The clock stands still
// there while the test sets up and schedules (on a slow machine that takes
// more than the second of slack), until the test starts it (startSlot).
func nextSlot(clk *testenv.Clock) (time.Time, string) {
	at := time.Date(2026, 12, 1, 23, 0, 0, 0, testenv.Seoul)
	clk.Freeze(at.Add(-61 * time.Second))
	return at, "2026-12-01T23:00"
}

// slotRunUp is how long before the send time startSlot starts the clock:
// room for River to make the job due (its scheduler passes every 5 s, and
// the jump of the clock may cost River's leader a term of 5 s) and for
// the job to start and wait in-process for the exact time, as a real
// scheduled send's job does.
const slotRunUp = 15 * time.Second

// startSlot lets the clock of nextSlot run, skipping all but slotRunUp of
// the minute of lead: the node's clock, River's included, from slotRunUp
// before the send time, so that the job River holds until shortly before
// it is due as a real scheduled send's job is by then.
func startSlot(clk *testenv.Clock, at time.Time) {
	clk.Run(at.Add(-slotRunUp))
}

func TestScheduledPushPunctual(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a scheduled send (about 15 s)")
	}
	t.Parallel()
	clk := &testenv.Clock{}
	sendAt, slot := nextSlot(clk)
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(nil)
	const pushes = 20
	var ids []string
	for i := range pushes {
		u := fmt.Sprintf("u%d", i)
		if i < pushes-1 {
			e.Register(a, "tok-", u)
		}
		res, err := schedule(a, []any{u}, slot)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.PushID)
	}
	// Recipients are resolved at send time: a user registered after the
	// request still gets the push.
	e.Register(a, "tok-", fmt.Sprintf("u%d", pushes-1))
	startSlot(clk, sendAt)
	testenv.WaitFor(t, "every scheduled push", 90*time.Second, func() bool { return e.Emulator.Stats().Accepted == pushes })
	var delays []time.Duration
	for _, m := range e.Emulator.Messages("") {
		d := clk.Fake(m.ReceivedAt).Sub(sendAt)
		if d < 0 {
			t.Fatalf("a message arrived %v before its time", -d)
		}
		delays = append(delays, d)
	}
	slices.Sort(delays)
	t.Logf("delay from scheduled time to FCM message over %d pushes: p50 %v, max %v", len(delays), delays[len(delays)/2], delays[len(delays)-1])
	// The job waits in-process for the exact time; what this checks is
	// that no push waited for a later pass of River's scheduler (every
	// 5 s), not how fast the machine is: the delays above are the figure.
	if max := delays[len(delays)-1]; max >= 5*time.Second {
		t.Fatalf("got a message %v after its time: it waited for another pass of the scheduler", max)
	}
	for _, id := range ids {
		testenv.WaitFor(t, "push done", 10*time.Second, func() bool { return e.Push(id).Status == "done" })
	}
}

// TestScheduledEditLocalized: an edit replaces a scheduled push's
// localized entries (null removes them) under the accept's rules: each
// entry's templates, the (광고) prefix on every title of a push marked
// options.isMarketing, FCM's limit with the push's links. A push that is
// an ad in one language stays an ad whatever else an edit changes.
func TestScheduledEditLocalized(t *testing.T) {
	clk := &testenv.Clock{}
	clk.Freeze(time.Date(2026, 12, 1, 22, 0, 0, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	scheduled := func(body map[string]any) string {
		t.Helper()
		body["userIds"] = []any{"u1"}
		opts, _ := body["options"].(map[string]any)
		if opts == nil {
			opts = map[string]any{}
		}
		opts["scheduleTime"] = "2026-12-01T23:00"
		body["options"] = opts
		r := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), body)
		if r.Status != http.StatusOK {
			t.Fatalf("schedule: got %d %s", r.Status, r.Body)
		}
		return r.Header.Get("X-Push-Id")
	}
	type entry struct{ Title, Content string }
	type view struct {
		Title     string
		Marketing bool
		Localized map[string]entry
		Edits     []struct{ Changes, From map[string]string }
	}
	patch := func(id string, body map[string]any) (int, view, testenv.ErrorBody) {
		t.Helper()
		var raw json.RawMessage
		code := e.AdminJSON("PATCH", "/admin/v1/pushes/"+id, body, &raw)
		var v view
		var eb testenv.ErrorBody
		json.Unmarshal(raw, &v)
		json.Unmarshal(raw, &eb)
		return code, v, eb
	}

	id := scheduled(map[string]any{"title": "Hello", "content": "c", "localized": map[string]any{"ko": map[string]any{"title": "안녕", "content": "내용"}}})
	code, p, _ := patch(id, map[string]any{"localized": map[string]any{"ko": map[string]any{"title": "안녕하세요 {{tag.name | \"고객\"}}님", "content": "새 내용"},
		"ja": map[string]any{"title": "こんにちは", "content": "内容"}}})
	if code != http.StatusOK || len(p.Localized) != 2 || p.Localized["ko"].Content != "새 내용" || p.Localized["ja"].Title != "こんにちは" {
		t.Fatalf("edit of the entries: got %d %+v, want both entries", code, p)
	}
	if len(p.Edits) != 1 || !strings.Contains(p.Edits[0].Changes["localized"], "새 내용") || !strings.Contains(p.Edits[0].From["localized"], "내용") {
		t.Errorf("edit trail: got %+v, want the entries before and after", p.Edits)
	}
	if got := e.Push(id); got.Status != "scheduled" {
		t.Errorf("after the edit: status %s", got.Status)
	}
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"a bad template", map[string]any{"localized": map[string]any{"ko": map[string]any{"title": "{{tag.name", "content": "c"}}}, "localized.ko.title"},
		{"no content", map[string]any{"localized": map[string]any{"ko": map[string]any{"title": "t"}}}, "localized.ko.content"},
		{"a bad tag", map[string]any{"localized": map[string]any{"not a tag": map[string]any{"title": "t", "content": "c"}}}, "localized.not a tag"},
		{"over FCM's limit", map[string]any{"localized": map[string]any{"ko": map[string]any{"title": "t", "content": strings.Repeat("가", 1400)}}}, "localized.ko.content"},
		{"a link that makes an entry too large", map[string]any{"linkURL": "https://a.example/" + strings.Repeat("x", 200),
			"localized": map[string]any{"ko": map[string]any{"title": "t", "content": strings.Repeat("가", 1290)}}}, "localized.ko.content"},
	} {
		code, _, eb := patch(id, c.body)
		if code != http.StatusBadRequest || len(eb.Details) == 0 || eb.Details[0].Field != c.field {
			t.Errorf("%s: got %d %+v, want 400 naming %s", c.name, code, eb, c.field)
		}
	}
	var after view
	if e.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &after); len(after.Edits) != 1 || len(after.Localized) != 2 {
		t.Errorf("after refused edits: %d edits, %d entries; want 1 and 2", len(after.Edits), len(after.Localized))
	}
	if code, p, _ = patch(id, map[string]any{"localized": nil}); code != http.StatusOK || len(p.Localized) != 0 {
		t.Errorf("removing the entries: got %d %+v, want none", code, p.Localized)
	}

	t.Run("AdPrefixOnEveryEntry", func(t *testing.T) {
		id := scheduled(map[string]any{"title": "(광고) Sale", "content": "c", "options": map[string]any{"isMarketing": true}})
		code, _, eb := patch(id, map[string]any{"localized": map[string]any{"ko": map[string]any{"title": "세일", "content": "c"}}})
		if code != http.StatusBadRequest || len(eb.Details) != 1 || eb.Details[0].Field != "localized.ko.title" {
			t.Errorf("an entry without the prefix: got %d %+v, want 400 naming localized.ko.title", code, eb)
		}
		if code, p, _ := patch(id, map[string]any{"localized": map[string]any{"ko": map[string]any{"title": "(광고) 세일", "content": "c"}}}); code != http.StatusOK || !p.Marketing {
			t.Errorf("an entry with the prefix: got %d %+v, want 200, marketing", code, p)
		}
	})
	t.Run("AnAdInOneLanguageStaysAnAd", func(t *testing.T) {
		id := scheduled(map[string]any{"title": "Weekend", "content": "c", "localized": map[string]any{"ko": map[string]any{"title": "(광고) 주말 세일", "content": "c"}}})
		if p := e.Push(id); !p.Marketing {
			t.Fatalf("accepted: got marketing %v, want an ad", p.Marketing)
		}
		if code, p, _ := patch(id, map[string]any{"linkURL": "https://a.example/sale"}); code != http.StatusOK || !p.Marketing {
			t.Errorf("after an edit of the link: got %d marketing %v, want still an ad", code, p.Marketing)
		}
		if code, p, _ := patch(id, map[string]any{"localized": map[string]any{"ko": map[string]any{"title": "주말", "content": "c"}}}); code != http.StatusOK || p.Marketing {
			t.Errorf("after the ad's title went: got %d marketing %v, want no longer an ad", code, p.Marketing)
		}
	})
}
