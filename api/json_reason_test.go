package api_test

import (
	"net/http"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// TestNotJSONReason checks over HTTP that a body that is not valid JSON
// (a trailing comma, the newcomer's classic) is refused as such, with the
// byte the parser stopped at, and one of another kind as not an object.
func TestNotJSONReason(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	tests := []struct {
		name, body, reason string
	}{
		{"TrailingComma", `{"userId":"u1","state":{"marketing":true},}`,
			"is not valid JSON: invalid character '}' looking for beginning of object key string at byte 43"},
		{"TwoObjects", `{"userId":"u1"}{}`, "is not valid JSON: invalid character '{' after top-level value at byte 16"},
		{"Truncated", `{"userId":"u1"`, "is not valid JSON: unexpected end of JSON input at byte 14"},
		{"Empty", ``, "must be a JSON object; the body is empty"},
		{"Array", `[]`, "must be a JSON object"},
		{"Null", `null`, "must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{marketingPath, subscribePath} {
				method := http.MethodPost
				if path == marketingPath {
					method = http.MethodPatch
				}
				got := testenv.WantError(t, env.Server(t, app, method, path, tt.body), path, herald.ErrInvalidRequest)
				want := herald.Detail{Field: "body", Reason: tt.reason}
				if len(got.Details) != 1 || got.Details[0] != want {
					t.Errorf("%s: details %+v, want [%+v]", path, got.Details, want)
				}
			}
		})
	}
}
