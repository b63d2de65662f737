package emulator

import (
	"fmt"
	"net/http"
)

const (
	fcmErrorType   = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
	badRequestType = "type.googleapis.com/google.rpc.BadRequest"
)

// fcmError is one error answer of FCM.
type fcmError struct {
	status     int    // HTTP status
	code       string // Google status, e.g. INVALID_ARGUMENT
	errorCode  string // FcmError errorCode; "" for none
	message    string
	field      string // the field at fault, reported as a BadRequest violation
	retryAfter string // Retry-After header value
}

// errorBody is Google's error body.
type errorBody struct {
	Error errorStatus `json:"error"`
}

type errorStatus struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Status  string        `json:"status"`
	Details []errorDetail `json:"details,omitempty"`
}

type errorDetail struct {
	Type            string           `json:"@type"`
	ErrorCode       string           `json:"errorCode,omitempty"`
	FieldViolations []fieldViolation `json:"fieldViolations,omitempty"`
}

type fieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// write writes f in Google's error shape.
func (f *fcmError) write(w http.ResponseWriter) {
	body := errorBody{Error: errorStatus{Code: f.status, Message: f.message, Status: f.code}}
	if f.errorCode != "" {
		body.Error.Details = append(body.Error.Details, errorDetail{Type: fcmErrorType, ErrorCode: f.errorCode})
	}
	if f.field != "" {
		body.Error.Details = append(body.Error.Details, errorDetail{
			Type:            badRequestType,
			FieldViolations: []fieldViolation{{Field: f.field, Description: f.message}},
		})
	}
	if f.retryAfter != "" {
		w.Header().Set("Retry-After", f.retryAfter)
	}
	writeJSON(w, f.status, body)
}

// errInvalidArgument is FCM's answer to a malformed message.
func errInvalidArgument(message, field string) *fcmError {
	return &fcmError{status: http.StatusBadRequest, code: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT",
		message: message, field: field}
}

// errUnknownField is FCM's answer to a field its schema does not have.
func errUnknownField(name, path string) *fcmError {
	if path == "" {
		return errInvalidArgument(fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", name), "")
	}
	return errInvalidArgument(fmt.Sprintf("Invalid JSON payload received. Unknown name %q at '%s': Cannot find field.", name, path), path)
}

// errInvalidToken is FCM's answer to a token that is not a registration token.
func errInvalidToken() *fcmError {
	return errInvalidArgument("The registration token is not a valid FCM registration token", "message.token")
}

// errUnauthenticated is Google's answer to a missing or unknown access token.
func errUnauthenticated() *fcmError {
	return &fcmError{status: http.StatusUnauthorized, code: "UNAUTHENTICATED",
		message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."}
}

// errPermissionDenied is Google's answer to an access token of another project.
func errPermissionDenied(project string) *fcmError {
	return &fcmError{status: http.StatusForbidden, code: "PERMISSION_DENIED", message: fmt.Sprintf(
		"Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/%s' (or it may not exist).", project)}
}
