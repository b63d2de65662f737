package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// TestNightPolicy: options.nightPolicy on every push endpoint is "skip" or
// "defer" (null is absent, skip); any other value or type is refused
// naming it, with nothing asked of the next layer.
func TestNightPolicy(t *testing.T) {
	t.Parallel()
	endpoints := []struct{ path, body string }{
		{usersPath, `{"userIds":["u1"],"title":"(광고) t","content":"c","options":{%s}}`},
		{messagesPath, `{"messages":[{"userId":"u1","title":"(광고) t","content":"c"}],"options":{%s}}`},
		{topicsPath, `{"topic":"news","title":"(광고) t","content":"c","options":{%s}}`},
		{allPath, `{"title":"(광고) t","content":"c","options":{%s}}`},
	}
	for _, ep := range endpoints {
		t.Run(strings.TrimPrefix(ep.path, "/api/push/v2/"), func(t *testing.T) {
			t.Parallel()
			a := newFakeAPI()
			a.app.AdSenderName, a.app.AdSenderContact, a.app.AdOptOut = "Co", "080", "opt out" // ads need the footer
			for _, tc := range []struct {
				option string
				want   herald.NightPolicy
			}{{`"nightPolicy":"defer"`, herald.NightDefer}, {`"nightPolicy":"skip"`, herald.NightSkip}, {`"isUsingBadge":true`, ""},
				{`"nightPolicy":null`, ""}} { // null is absent, as for every option
				res := a.do(http.MethodPost, ep.path, strings.Replace(ep.body, "%s", tc.option, 1))
				calls := a.take()
				if res.Status != http.StatusOK || len(calls) != 1 || calls[0].Push.NightPolicy != tc.want {
					t.Errorf("%s: got %d %s, calls %+v; want 200 and policy %q", tc.option, res.Status, res.Body, calls, tc.want)
				}
			}
			for _, bad := range []string{`"later"`, `"DEFER"`, `""`, `true`, `1`, `["defer"]`, `{"policy":"defer"}`} {
				res := a.do(http.MethodPost, ep.path, strings.Replace(ep.body, "%s", `"nightPolicy":`+bad, 1))
				if res.Status != http.StatusBadRequest || res.Err.Code != herald.ErrInvalidRequest.Code ||
					len(res.Err.Details) != 1 || res.Err.Details[0].Field != "options.nightPolicy" {
					t.Errorf("nightPolicy %s: got %d %s, want 400 naming options.nightPolicy", bad, res.Status, res.Body)
				}
				if calls := a.take(); len(calls) > 0 {
					t.Errorf("nightPolicy %s: a refused request asked for %+v", bad, calls)
				}
			}
		})
	}
}
