package emulator_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heraldpush/herald/fcm/emulator"
)

// sizedMessage returns a send body for token whose payload is 100 bytes plus
// the title's: the 45-byte envelope, "title" and "body" ("b") with
// "pushId" (27 characters) and 6 bytes for each pair after the first.
func sizedMessage(t *testing.T, token, title string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"message": map[string]any{
		"token":        token,
		"notification": map[string]string{"title": title, "body": "b"},
		"data":         map[string]string{"pushId": strings.Repeat("p", 27)},
	}})
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(body)
}

func TestSendPayloadSize(t *testing.T) {
	t.Parallel()
	h := setup(t, emulator.Options{})
	tests := []struct {
		name, token, title string
		escape             bool // send every A as the JSON escape \u0041
		wantStatus         int
	}{
		{"AtLimit", "size-at", strings.Repeat("a", 3996), false, 200},
		{"OverLimit", "size-over", strings.Repeat("a", 3997), false, 400},
		// 1,332 three-byte characters are 3,996 bytes: at the limit.
		{"MultiByteAtLimit", "size-mb-at", strings.Repeat("가", 1332), false, 200},
		{"MultiByteOverLimit", "size-mb-over", strings.Repeat("가", 1332) + "a", false, 400},
		// JSON escapes do not count: \u0041 is one byte, A.
		{"EscapesNotCounted", "size-esc", strings.Repeat("A", 3996), true, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := sizedMessage(t, tt.token, tt.title)
			if tt.escape {
				body = strings.ReplaceAll(body, "A", `\u0041`)
			}
			status, got := h.send(t, "proj", body, h.token)
			if status != tt.wantStatus {
				t.Fatalf("status: got %d %v, want %d", status, got, tt.wantStatus)
			}
			stored := len(h.emu.Messages(tt.token))
			if status == 200 {
				if stored != 1 {
					t.Errorf("stored messages: got %d, want 1", stored)
				}
				return
			}
			if stored != 0 {
				t.Errorf("stored messages: got %d, want 0", stored)
			}
			assertInvalidMessage(t, got)
		})
	}
}

// assertInvalidMessage checks FCM's answer to an oversized message: 400
// INVALID_ARGUMENT with errorCode INVALID_ARGUMENT, and nothing that a
// sender could read as a token problem (no "registration token" wording, no
// violation on message.token).
func assertInvalidMessage(t *testing.T, body map[string]any) {
	t.Helper()
	if status, code := errorOf(body); status != "INVALID_ARGUMENT" || code != "INVALID_ARGUMENT" {
		t.Errorf("error: got %s/%s, want INVALID_ARGUMENT/INVALID_ARGUMENT", status, code)
	}
	e, _ := body["error"].(map[string]any)
	if e["code"] != 400.0 || e["message"] != "Request contains an invalid argument." {
		t.Errorf("error: got code %v message %q, want 400 %q", e["code"], e["message"], "Request contains an invalid argument.")
	}
	raw, _ := json.Marshal(body)
	if s := string(raw); strings.Contains(strings.ToLower(s), "registration token") || strings.Contains(s, "message.token") {
		t.Errorf("error body speaks of the token: %s", s)
	}
}
