package emulator

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxSendBody bounds a messages:send body; FCM's own limit is far lower.
const maxSendBody = 1 << 20

// sendBody is the decoded body of messages:send.
type sendBody struct {
	validateOnly bool
	message      json.RawMessage
}

// handleSend answers POST /v1/projects/{project}/messages:send like FCM.
func (e *Emulator) handleSend(w http.ResponseWriter, r *http.Request) {
	project := r.PathValue("project")
	rec := Received{ReceivedAt: e.now(), Project: project, Proto: r.Proto}
	ferr := e.send(r, project, &rec)
	if e.beforeAnswer != nil && rec.token != "" {
		e.beforeAnswer(rec.token)
	}
	wait(r.Context(), e.latency)
	e.record(ferr == nil, rec)
	if ferr != nil {
		ferr.write(w)
		return
	}
	id := "fake_message_id"
	if rec.Message != nil {
		id = "0:" + strconv.FormatUint(e.nextID.Add(1), 10)
	}
	writeJSON(w, http.StatusOK, map[string]string{"name": "projects/" + project + "/messages/" + id})
}

// send authenticates, decodes and validates one send request, then picks the
// answer for its token. On success rec holds the message to store (nil
// Message for validate_only).
func (e *Emulator) send(r *http.Request, project string, rec *Received) *fcmError {
	tokenProject, ok := e.tokenProject(r)
	if !ok {
		return errUnauthenticated()
	}
	if tokenProject != "" && tokenProject != project {
		return errPermissionDenied(project)
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxSendBody+1))
	if err != nil || len(data) > maxSendBody {
		return errInvalidArgument("Request payload size exceeds the limit or could not be read.", "")
	}
	body, ferr := decodeSendBody(data)
	if ferr != nil {
		return ferr
	}
	token, ferr := validateMessage(body.message)
	if ferr != nil {
		return ferr
	}
	rec.token = token
	if ferr := e.tokenOutcome(token); ferr != nil {
		return ferr
	}
	if !body.validateOnly {
		rec.Message = body.message
	}
	return nil
}

// decodeSendBody checks the body is valid JSON, once for all the
// validation that follows, and decodes the request object, refusing unknown
// fields as FCM does. FCM accepts both spellings of validate_only, as proto JSON does.
func decodeSendBody(data []byte) (sendBody, *fcmError) {
	if !json.Valid(data) {
		return sendBody{}, errInvalidArgument("Invalid JSON payload received. Expected a JSON object.", "")
	}
	obj, ferr := decodeObject(data, "", isRequestField)
	if ferr != nil {
		return sendBody{}, ferr
	}
	validateOnly, ferr := boolValue(obj.either("validate_only", "validateOnly"), "validate_only")
	if ferr != nil {
		return sendBody{}, ferr
	}
	return sendBody{validateOnly: validateOnly, message: obj["message"]}, nil
}

// isRequestField reports whether k is a field of the messages:send request.
func isRequestField(k string) bool {
	switch k {
	case "validate_only", "validateOnly", "message":
		return true
	}
	return false
}

// tokenOutcome picks FCM's answer from the token's prefix; nil means 200.
// quota- and unavailable- tokens fail only on their first attempt; down-
// tokens always answer 503 (an outage that outlasts the retries).
func (e *Emulator) tokenOutcome(token string) *fcmError {
	switch {
	case strings.HasPrefix(token, "unregistered-"):
		return &fcmError{status: http.StatusNotFound, code: "NOT_FOUND", errorCode: "UNREGISTERED",
			message: "Requested entity was not found."}
	case strings.HasPrefix(token, "invalid-"):
		return errInvalidToken()
	case strings.HasPrefix(token, "mismatch-"):
		return &fcmError{status: http.StatusForbidden, code: "PERMISSION_DENIED", errorCode: "SENDER_ID_MISMATCH",
			message: "SenderId mismatch"}
	case strings.HasPrefix(token, "apnsauth-"):
		// THIRD_PARTY_AUTH_ERROR under its legacy name.
		return &fcmError{status: http.StatusUnauthorized, code: "UNAUTHENTICATED", errorCode: "APNS_AUTH_ERROR",
			message: "Auth error from APNS or Web Push Service"}
	case strings.HasPrefix(token, "auth-"):
		return &fcmError{status: http.StatusUnauthorized, code: "UNAUTHENTICATED", errorCode: "THIRD_PARTY_AUTH_ERROR",
			message: "Auth error from APNS or Web Push Service"}
	case strings.HasPrefix(token, "quota-") && e.firstAttempt(token):
		return &fcmError{status: http.StatusTooManyRequests, code: "RESOURCE_EXHAUSTED", errorCode: "QUOTA_EXCEEDED",
			message: "Quota exceeded for this device.", retryAfter: "1"}
	case strings.HasPrefix(token, "down-") || strings.HasPrefix(token, "unavailable-") && e.firstAttempt(token):
		return &fcmError{status: http.StatusServiceUnavailable, code: "UNAVAILABLE", errorCode: "UNAVAILABLE",
			message: "The service is currently unavailable."}
	}
	return nil
}

// wait pauses for d, or until ctx is done.
func wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
