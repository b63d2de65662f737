package fcm

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name       string
		status     int
		retryAfter string
		body       string
		wantClass  herald.SendClass
		wantCode   string
		wantRetry  time.Duration
	}{
		{"Unregistered", 404, "", fcmBody(404, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found."),
			herald.SendUnregistered, "UNREGISTERED", 0},
		// Without FCM's UNREGISTERED code a 404 does not delete the token.
		{"NotFoundWithoutDetails", 404, "", googleBody(404, "NOT_FOUND", "Requested entity was not found.", ""),
			herald.SendRejected, "NOT_FOUND", 0},
		{"BareNotFound", 404, "", "404 page not found", herald.SendRejected, "", 0},
		{"InvalidTokenByMessage", 400, "", fcmBody(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT",
			"The registration token is not a valid FCM registration token"), herald.SendInvalidToken, "INVALID_ARGUMENT", 0},
		{"InvalidTokenByField", 400, "", googleBody(400, "INVALID_ARGUMENT", "Request contains an invalid argument.",
			`,"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token","description":"bad"}]}]`),
			herald.SendInvalidToken, "INVALID_ARGUMENT", 0},
		{"InvalidMessage", 400, "", fcmBody(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT",
			"Invalid value at 'message.data[0].value' (TYPE_STRING), 1"), herald.SendRejected, "INVALID_ARGUMENT", 0},
		{"SenderMismatch", 403, "", fcmBody(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH", "SenderId mismatch"),
			herald.SendInvalidToken, "SENDER_ID_MISMATCH", 0},
		{"PermissionDenied", 403, "", googleBody(403, "PERMISSION_DENIED", "Permission denied.", ""),
			herald.SendAuth, "PERMISSION_DENIED", 0},
		{"ThirdPartyAuth", 401, "", fcmBody(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR", "Auth error"),
			herald.SendThirdPartyAuth, "THIRD_PARTY_AUTH_ERROR", 0},
		// THIRD_PARTY_AUTH_ERROR under its legacy name: the same error, FCM's
		// spelling kept in the code so history shows what FCM said.
		{"ApnsAuthLegacy", 401, "", fcmBody(401, "UNAUTHENTICATED", "APNS_AUTH_ERROR", "Auth error from APNS"),
			herald.SendThirdPartyAuth, "APNS_AUTH_ERROR", 0},
		{"Unauthenticated", 401, "", googleBody(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", ""),
			herald.SendAuth, "UNAUTHENTICATED", 0},
		{"QuotaWithSeconds", 429, "7", fcmBody(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded."),
			herald.SendRetry, "QUOTA_EXCEEDED", 7 * time.Second},
		{"QuotaWithDate", 429, "Thu, 02 Jan 2025 03:05:05 GMT", fcmBody(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded."),
			herald.SendRetry, "QUOTA_EXCEEDED", time.Minute},
		{"QuotaWithoutRetryAfter", 429, "", fcmBody(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded."),
			herald.SendRetry, "QUOTA_EXCEEDED", 60 * time.Second},
		{"QuotaWithPastDate", 429, "Thu, 02 Jan 2025 03:00:00 GMT", "", herald.SendRetry, "", 60 * time.Second},
		{"Unavailable", 503, "", fcmBody(503, "UNAVAILABLE", "UNAVAILABLE", "The service is currently unavailable."),
			herald.SendRetry, "UNAVAILABLE", 0},
		{"UnavailableWithRetryAfter", 503, "3", "", herald.SendRetry, "", 3 * time.Second},
		{"Internal", 500, "", fcmBody(500, "INTERNAL", "INTERNAL", "Internal error."), herald.SendRetry, "INTERNAL", 0},
		{"BadGateway", 502, "", "<html>bad gateway</html>", herald.SendRetry, "", 0},
		{"RequestTimeout", 408, "", "", herald.SendRetry, "", 0},
		{"OtherClientError", 413, "", "", herald.SendRejected, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := classify(tt.status, tt.retryAfter, []byte(tt.body), now)
			if got.Class != tt.wantClass {
				t.Errorf("class: got %q, want %q", got.Class, tt.wantClass)
			}
			if got.Code != tt.wantCode {
				t.Errorf("error code: got %q, want %q", got.Code, tt.wantCode)
			}
			if got.RetryAfter != tt.wantRetry {
				t.Errorf("retry after: got %v, want %v", got.RetryAfter, tt.wantRetry)
			}
			if got.Status != tt.status {
				t.Errorf("status: got %d, want %d", got.Status, tt.status)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-5", 0},
		{"120", 120 * time.Second},
		{" 2 ", 2 * time.Second},
		{"99999999", 24 * time.Hour},
		{"Thu, 02 Jan 2025 03:04:15 GMT", 10 * time.Second},
		{"Thu, 02 Jan 2025 03:04:05 GMT", 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q): got %v, want %v", tt.in, got, tt.want)
		}
	}
}

// googleBody returns a Google error body; details is raw JSON starting with a comma, or "".
func googleBody(code int, status, message, details string) string {
	return `{"error":{"code":` + strconv.Itoa(code) + `,"message":"` + message + `","status":"` + status + `"` + details + `}}`
}

// fcmBody returns a Google error body with an FcmError detail.
func fcmBody(code int, status, errorCode, message string) string {
	return googleBody(code, status, message,
		`,"details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"`+errorCode+`"}]`)
}
