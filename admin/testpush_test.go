package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// TestTestPushProblems: a test push names a user or a token, never both,
// and the token is a non-empty string of at most 4,096 characters.
func TestTestPushProblems(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	user := json.RawMessage(`"u1"`)
	tests := []struct {
		name       string
		token      *string
		userID     json.RawMessage
		wantField  string // "" for none
		wantToken  string
		wantUserID string
	}{
		{"Token", str("fcm-token"), nil, "", "fcm-token", ""},
		{"TokenAtLimit", str(strings.Repeat("t", maxTokenLen)), nil, "", strings.Repeat("t", maxTokenLen), ""},
		{"TokenMultiByteAtLimit", str(strings.Repeat("토", maxTokenLen)), nil, "", strings.Repeat("토", maxTokenLen), ""},
		{"TokenTooLong", str(strings.Repeat("t", maxTokenLen+1)), nil, "token", "", ""},
		{"TokenEmpty", str(""), nil, "token", "", ""},
		{"TokenBlank", str(" \t"), nil, "token", "", ""},
		{"TokenNullUserID", str("fcm-token"), json.RawMessage(`null`), "", "fcm-token", ""},
		{"Both", str("fcm-token"), user, "token", "", ""},
		{"UserID", nil, user, "", "", "u1"},
		{"Neither", nil, nil, "userId", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := testPushRequest{Token: tt.token, UserID: tt.userID, Title: str("title"), Content: str("content")}
			got, details := q.problems()
			if tt.wantField != "" {
				if len(details) != 1 || details[0].Field != tt.wantField {
					t.Errorf("details: got %+v, want one naming %s", details, tt.wantField)
				}
				return
			}
			if len(details) != 0 || got.Token != tt.wantToken || got.UserID != tt.wantUserID ||
				got.Content != (herald.Content{Title: "title", Content: "content"}) {
				t.Errorf("got %+v %+v, want token %q, user %q and the content", got, details, tt.wantToken, tt.wantUserID)
			}
		})
	}
}
