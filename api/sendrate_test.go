package api_test

import (
	"net/http"
	"testing"
)

// TestSendRateInvalid: a send rate that is not a whole number from 1 to
// 10,000,000 is refused with the spec's error body naming the member, on
// create and on patch, and the app keeps its rate.
func TestSendRateInvalid(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewAppWithoutFCM(nil)
	path := "/admin/v1/apps/" + a.ID
	e.PatchApp(a, map[string]any{"sendRatePerMinute": 1200})
	for _, bad := range []string{`0`, `-1`, `2.5`, `10000001`, `"fast"`, `[600]`} {
		for _, req := range []struct{ method, path, body string }{
			{"PATCH", path, `{"sendRatePerMinute":` + bad + `}`},
			{"POST", "/admin/v1/apps", `{"name":"x","sendRatePerMinute":` + bad + `}`},
		} {
			var body struct {
				StatusCode int
				Path, Code string
				Message    string
				Details    []struct{ Field, Reason string }
			}
			code := e.AdminJSON(req.method, req.path, []byte(req.body), &body)
			if code != http.StatusBadRequest || body.StatusCode != 400 || body.Path != req.path || body.Code != "ERR-AB-VAL-00" ||
				len(body.Details) != 1 || body.Details[0].Field != "sendRatePerMinute" {
				t.Errorf("%s %s: got %d %+v, want 400 ERR-AB-VAL-00 naming sendRatePerMinute", req.method, req.body, code, body)
			}
		}
	}
	var app struct{ SendRatePerMinute int }
	if e.AdminJSON("GET", path, nil, &app); app.SendRatePerMinute != 1200 {
		t.Errorf("after refused changes: got %d, want 1200", app.SendRatePerMinute)
	}
	var list struct{ Apps []any }
	if e.AdminJSON("GET", "/admin/v1/apps", nil, &list); len(list.Apps) != 1 {
		t.Errorf("apps after refused creates: got %d, want 1", len(list.Apps))
	}
}
