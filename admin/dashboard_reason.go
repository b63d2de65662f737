package admin

import (
	"regexp"
	"strings"

	"github.com/heraldpush/herald"
)

// failureWords are plain words for the failures FCM, Google's token
// endpoint and the network give, found by the code in the error text.
// The first match wins, so the more specific codes come first.
var failureWords = []struct{ code, words string }{
	{"THIRD_PARTY_AUTH_ERROR", "FCM could not pass the message on: the Firebase project's APNs (iOS) or web-push credentials were refused. Fix them in the Firebase console."},
	{"APNS_AUTH_ERROR", "FCM could not pass the message on: the Firebase project's APNs (iOS) or web-push credentials were refused. Fix them in the Firebase console."},
	{"SENDER_ID_MISMATCH", "The token belongs to another Firebase project than this app's credentials; the token was removed."},
	{"UNREGISTERED", "The app was uninstalled from the device or its token expired; the token was removed."},
	{"invalid_grant", "Google refused the service account (invalid_grant): its key was deleted or disabled, or the file is not the project's. Upload a current service-account file."},
	{"invalid_client", "Google refused the service account (invalid_client). Upload a current service-account file."},
	{"UNAUTHENTICATED", "FCM refused the access token of the app's credentials, even a fresh one: the service account lacks permission to send, or its key was revoked."},
	{"PERMISSION_DENIED", "FCM refused: the service account has no permission to send messages for this project."},
	{"QUOTA_EXCEEDED", "FCM's sending quota for the project was exceeded; it was retried until the retry window ran out."},
	{"UNAVAILABLE", "FCM was unavailable; it was retried until the retry window ran out."},
	{"INTERNAL", "FCM had an internal error; it was retried until the retry window ran out."},
	{"INVALID_ARGUMENT", "FCM refused the token or the message as invalid."},
	{"without an FCM access token", "Google's token endpoint could not be reached or kept failing, so no access token was had."},
	{"FCM credentials were removed", "The app's FCM credentials were removed before the push was sent."},
	{"FCM credentials cannot be opened", "The app's FCM credentials cannot be opened with this server's master key; upload them again."},
	{"context deadline exceeded", "FCM did not answer in time; it was retried until the retry window ran out."},
	{"connection refused", "FCM could not be reached (connection refused); it was retried until the retry window ran out."},
	{"no such host", "FCM could not be reached (its name did not resolve); it was retried until the retry window ran out."},
}

var gaveUp = regexp.MustCompile(`^gave up retrying after (\S+): `)

// plainFailure says in plain words why a send or a push failed; the raw
// text stays available beside it. An error it does not know is its text.
func plainFailure(raw string) string {
	if raw == "" {
		return ""
	}
	words := ""
	for _, f := range failureWords {
		if strings.Contains(raw, f.code) {
			words = f.words
			break
		}
	}
	if words == "" {
		return raw
	}
	if m := gaveUp.FindStringSubmatch(raw); m != nil {
		words = strings.Replace(words, "until the retry window ran out", "for "+m[1]+", then given up", 1)
	}
	return words
}

// unreachableReason says in plain words why a user could not be reached.
func unreachableReason(reason string) string {
	switch reason {
	case herald.ReasonNoToken:
		return "No device to send to: the user is unknown, withdrawn, or has no push token."
	case herald.ReasonTokenExpired:
		return "The token expired or was refused as invalid; it was removed."
	case herald.ReasonAppDeleted:
		return "The app was uninstalled from every device of the user; the tokens were removed."
	}
	return reason
}
