package admin_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// recipientLine is a line of a push's recipients export, as JSON has it.
type recipientLine struct {
	UserID      *string `json:"userId"`
	DeviceID    *string `json:"deviceId"`
	TokenSuffix *string `json:"tokenSuffix"`
	Outcome     string  `json:"outcome"`
	SentAt      *string `json:"sentAt"`
	ReceivedAt  *string `json:"receivedAt"`
	OpenedAt    *string `json:"openedAt"`
}

// recipientsPath is the export's path with its query.
func recipientsPath(pushID, query string) string {
	return "/admin/v1/pushes/" + pushID + "/recipients" + query
}

// hostileUser is a user id a spreadsheet would take for a formula, with
// the characters CSV must quote.
const hostileUser = `=HYPERLINK("x"),1;+2`

// recipientsPush sends a marketing push at 23:00 in the app's zone to
// users of every outcome and waits for its end: "all" sent (and its
// device reports it received and opened), "none" suppressed by consent,
// "day" suppressed by the night, "dead" (an UNREGISTERED token)
// unreachable, "bad" (APNS_AUTH_ERROR) failed, hostileUser sent, and
// "ghost" with no device at all.
func recipientsPush(t *testing.T, e *env) (testenv.App, string) {
	ctx := context.Background()
	a := testenv.ConsentApp(t, e.Harness, testenv.ZoneWithHour(t, time.Now(), 23))
	e.Device(a, "dev-dead", "unregistered-recipients-dead", "android", "1.6.0", "dead")
	e.Device(a, "dev-bad", "apnsauth-recipients-bad-token", "android", "1.6.0", "bad")
	e.Device(a, "dev-hostile", "-recipients-hostile-=token", "android", "1.6.0", hostileUser)
	on := true
	for _, u := range []string{"dead", "bad", hostileUser} {
		if _, err := a.Client.SetMarketing(ctx, u, client.MarketingState{Marketing: &on, MarketingNight: &on}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"all", "none", "day", "dead", "bad", hostileUser, "ghost"},
		Title: "(광고) Night sale", Content: "c", Options: &client.Options{IsMarketing: &on}})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(res.PushID, 20*time.Second)
	if _, err := a.Client.ReportEvents(ctx, "dev-all-2", []client.Event{{PushID: res.PushID, Type: "received"}, {PushID: res.PushID, Type: "opened"}}); err != nil {
		t.Fatal(err)
	}
	return a, res.PushID
}

// TestPushRecipients: a push's recipients export (DESIGN 15) has a line
// per planned device with the outcome the user export's judge gives it,
// and the users it found no device of; CSV and JSON lines say the same;
// the download is recorded with its reason before it streams; refusals
// answer before anything is read and record no download. It runs on the
// engine the tests run on.
func TestPushRecipients(t *testing.T) {
	t.Parallel()
	e := start(t)
	a, pushID := recipientsPush(t, e)
	cons := "cons-" + a.ID[len(a.ID)-6:] + "-"
	suffix := func(tok string) string { return tok[len(tok)-8:] }
	type want struct{ user, device, suffix, outcome string }
	wants := []want{
		{"all", "dev-all-2", suffix(cons + "all"), "sent"},
		{"none", "dev-none-0", suffix(cons + "none"), "suppressed_consent"},
		{"day", "dev-day-1", suffix(cons + "day"), "suppressed_night"},
		{"dead", "dev-dead", suffix("unregistered-recipients-dead"), "unreachable"},
		{"bad", "dev-bad", suffix("apnsauth-recipients-bad-token"), "failed"},
		{hostileUser, "dev-hostile", suffix("-recipients-hostile-=token"), "sent"},
		{"ghost", "", "", "unreachable"},
	}
	reason := "delivery complaint #7, \"quoted\""

	t.Run("JSONL", func(t *testing.T) {
		res := e.AdminDo(t, http.MethodGet, recipientsPath(pushID, "?format=jsonl&reason="+url.QueryEscape(reason)), nil)
		if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "application/jsonl; charset=utf-8" {
			t.Fatalf("got %d %q (%s), want 200 application/jsonl", res.Status, res.Header.Get("Content-Type"), res.Body)
		}
		if cd := res.Header.Get("Content-Disposition"); cd != `attachment; filename="herald-push-`+pushID+`-recipients.jsonl"` {
			t.Errorf("Content-Disposition: got %q", cd)
		}
		var got []recipientLine
		sc := bufio.NewScanner(bytes.NewReader(res.Body))
		for sc.Scan() {
			var l recipientLine
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			got = append(got, l)
		}
		if len(got) != len(wants) {
			t.Fatalf("got %d lines, want %d:\n%s", len(got), len(wants), res.Body)
		}
		str := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		for i, w := range wants {
			l := got[i]
			if str(l.UserID) != w.user || str(l.DeviceID) != w.device || str(l.TokenSuffix) != w.suffix || l.Outcome != w.outcome {
				t.Errorf("line %d: got %s %s %s %s, want %+v", i, str(l.UserID), str(l.DeviceID), str(l.TokenSuffix), l.Outcome, w)
			}
			if (w.device == "") != (l.DeviceID == nil) {
				t.Errorf("line %d: deviceId %v, want null only for the user with no device", i, l.DeviceID)
			}
			if sent := w.outcome == "sent"; (l.SentAt != nil) != sent {
				t.Errorf("line %d (%s): sentAt %v, want a time only when sent", i, w.outcome, l.SentAt)
			}
			for _, at := range []*string{l.SentAt, l.ReceivedAt, l.OpenedAt} {
				if at != nil {
					if _, err := time.Parse("2006-01-02T15:04:05.000Z", *at); err != nil {
						t.Errorf("line %d: time %q is not RFC 3339 UTC with milliseconds", i, *at)
					}
				}
			}
			if reported := i == 0; (l.ReceivedAt != nil && l.OpenedAt != nil) != reported || (!reported && (l.ReceivedAt != nil || l.OpenedAt != nil)) {
				t.Errorf("line %d: received %v opened %v, want both on dev-all-2 only", i, l.ReceivedAt, l.OpenedAt)
			}
		}
		for _, tok := range []string{cons + "all", "apnsauth-recipients-bad-token"} {
			if bytes.Contains(res.Body, []byte(tok)) {
				t.Errorf("the export holds the full token %s", tok)
			}
		}
		recs := e.records("appId=" + a.ID)
		last := recs[len(recs)-1]
		if last.Route != "GET /admin/v1/pushes/{pushId}/recipients" || last.Reason != reason || last.AppID != a.ID ||
			last.PushID != pushID || last.Status != http.StatusOK || !slices.Contains(last.UserIDs, hostileUser) || last.UserCount != 7 {
			t.Errorf("the download's access record: %+v, want its route, reason, app, push, users and 7 counted", last)
		}
	})

	t.Run("CSV", func(t *testing.T) {
		res := e.AdminDo(t, http.MethodGet, recipientsPath(pushID, "?reason=asked"), nil)
		if res.Status != http.StatusOK || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
			t.Fatalf("got %d %q (%s), want 200 text/csv (csv is the default)", res.Status, res.Header.Get("Content-Type"), res.Body)
		}
		rows, err := csv.NewReader(bytes.NewReader(res.Body)).ReadAll()
		if err != nil {
			t.Fatalf("CSV: %v\n%s", err, res.Body)
		}
		if header := []string{"userId", "deviceId", "tokenSuffix", "outcome", "sentAt", "receivedAt", "openedAt"}; !slices.Equal(rows[0], header) {
			t.Errorf("header: got %q, want %q", rows[0], header)
		}
		if len(rows) != len(wants)+1 {
			t.Fatalf("got %d rows, want %d", len(rows)-1, len(wants))
		}
		for i, w := range wants {
			r := rows[i+1]
			user, suf := w.user, w.suffix
			if user == hostileUser {
				user = "'" + user // kept from being read as a formula
			}
			if strings.HasPrefix(suf, "-") {
				suf = "'" + suf
			}
			if r[0] != user || r[1] != w.device || r[2] != suf || r[3] != w.outcome || (r[4] != "") != (w.outcome == "sent") {
				t.Errorf("row %d: got %q, want %+v", i, r, w)
			}
		}
	})

	t.Run("Refused", func(t *testing.T) {
		_, viewer := e.newOperator("viewer-recipients@example.com", "viewer", nil)
		before := len(e.records("appId=" + a.ID))
		res := e.as(viewer, http.MethodGet, recipientsPath(pushID, "?reason=asked"), nil)
		want := *herald.ErrForbidden
		want.Details = []herald.Detail{{Field: "role", Reason: "needs the operator role"}}
		testenv.WantError(t, res, recipientsPath(pushID, ""), &want)
		for _, q := range []string{"", "?reason=", "?reason=%20", "?reason=" + strings.Repeat("x", herald.MaxDownloadReason+1), "?format=xlsx&reason=asked"} {
			res := e.AdminDo(t, http.MethodGet, recipientsPath(pushID, q), nil)
			got := testenv.WantError(t, res, recipientsPath(pushID, ""), herald.ErrInvalidRequest)
			field := "reason"
			if strings.Contains(q, "format") {
				field = "format"
			}
			if len(got.Details) != 1 || got.Details[0].Field != field {
				t.Errorf("%q: details %+v, want one naming %s", q, got.Details, field)
			}
		}
		res = e.AdminDo(t, http.MethodGet, recipientsPath("psh_unknown", "?reason=asked"), nil)
		testenv.WantError(t, res, recipientsPath("psh_unknown", ""), herald.ErrNotFound)
		for _, r := range e.records("appId=" + a.ID)[before:] {
			if r.Reason != "" || r.Status == http.StatusOK || len(r.UserIDs) != 0 {
				t.Errorf("a refused download was recorded as one: %+v", r)
			}
		}
	})
}

// TestDashboardPushRecipients: the push page offers an operator the
// recipients export (a reason and a format) and downloads it; a blank
// reason shows the page again naming it; a viewer sees no form and is
// refused the download.
func TestDashboardPushRecipients(t *testing.T) {
	t.Parallel()
	e := start(t)
	a, pushID := recipientsPush(t, e)
	opID, _ := e.newOperator("op-recipients@example.com", "operator", nil)
	viewerID, _ := e.newOperator("viewer-recipients@example.com", "viewer", nil)
	op, viewer := e.signIn(t, opID), e.signIn(t, viewerID)
	pushPage := "/apps/" + a.ID + "/pushes/" + pushID
	got := op.get(pushPage)
	wantIn(t, "operator's push page", got.body, `id="recipients-export"`, `action="`+pushPage+`/recipients"`, `name="reason"`, `name="format"`)

	got = op.get(pushPage + "/recipients?format=jsonl&reason=" + url.QueryEscape("complaint"))
	if got.status != http.StatusOK || strings.Count(got.body, "\n") != 7 || !strings.Contains(got.body, `"outcome":"suppressed_night"`) {
		t.Errorf("download: got %d\n%s\nwant 200 with 7 lines", got.status, got.body)
	}
	recs := e.records("appId=" + a.ID)
	if last := recs[len(recs)-1]; last.Route != "GET /apps/{appId}/pushes/{pushId}/recipients" || last.Reason != "complaint" || last.PushID != pushID {
		t.Errorf("the download's record: %+v, want its route, reason and push", last)
	}
	got = op.get(pushPage + "/recipients?format=csv&reason=+")
	if got.status != http.StatusBadRequest {
		t.Errorf("blank reason: got %d, want 400", got.status)
	}
	wantIn(t, "refused reason", got.body, "<code>reason</code>", `id="recipients-export"`)

	if got = viewer.get(pushPage); strings.Contains(got.body, `id="recipients-export"`) {
		t.Errorf("a viewer's push page offers the recipients export")
	}
	if got = viewer.get(pushPage + "/recipients?reason=asked"); got.status != http.StatusForbidden {
		t.Errorf("a viewer's download: got %d, want 403", got.status)
	}
}
