package herald

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is the one error type of the domain. It carries the code of the
// specification (ERR-AB-…), the HTTP status that code answers with and the
// message of the specification, to the letter.
type Error struct {
	Code    string
	Status  int
	Message string
	// Details names each problem of an invalid request (ERR-AB-VAL-00),
	// what a test push found no device for (ERR-AB-VAL-02), what to change
	// (the app-user gate's 403) or what to do next (503).
	Details []Detail
}

// Detail is one problem found in a request body: the field, as a JSON path,
// and why it was refused.
type Detail struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// ReasonInvalidUTF8 is the reason a text that is not valid UTF-8 is
// refused, in a JSON body (see package request) or anywhere else.
const ReasonInvalidUTF8 = "must be valid UTF-8"

func (e *Error) Error() string {
	if len(e.Details) > 0 {
		return fmt.Sprintf("%s: %s (%s: %s)", e.Code, e.Message, e.Details[0].Field, e.Details[0].Reason)
	}
	return e.Code + ": " + e.Message
}

// Is makes errors.Is match two errors with the same code, so callers can test
// against the sentinels below whatever details a copy carries.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func newError(code string, status int, message string) *Error {
	return &Error{Code: code, Status: status, Message: message}
}

// The errors of the specification (section 7) and the few DESIGN.md adds.
var (
	ErrInvalidRequest = newError("ERR-AB-VAL-00", http.StatusBadRequest, "Incorrect request. Server cannot understand request.")
	// The authentication errors keep the specification's messages and
	// name the header at fault in details.
	ErrNoSecretKey   = newError("ERR-AB-SGK-11", http.StatusBadRequest, "Secret key not found.").With(MissingHeader("x-secret-key"))
	ErrBadSecretKey  = newError("ERR-AB-SGK-13", http.StatusUnauthorized, "Incorrect secret key.")
	ErrNoKeys        = newError("ERR-AB-KSY-11", http.StatusBadRequest, "Required parameters missing.").With(MissingHeader("x-api-key"), MissingHeader("x-secret-key"))
	ErrUnknownAPIKey = newError("ERR-AB-KSY-13", http.StatusNotFound, "Provided key information not found. Please check your key again.")
	ErrNoAPIKey      = newError("ERR-AB-AGK-11", http.StatusBadRequest, "Api key not found.").With(MissingHeader("x-api-key"))
	ErrBadAPIKeyType = newError("ERR-AB-AGK-12", http.StatusBadRequest, "Invalid api key type.").
				With(Detail{Field: "x-api-key", Reason: "must be hk_ followed by 32 letters and digits (the app's API key)"})

	ErrMarketingUnavailable = newError("ERR-AB-ACS-31", http.StatusForbidden, "This app is unable to handle user preference.")
	ErrMarketingWithdrawn   = newError("ERR-AB-ACS-32", http.StatusGone, "User withdrawn. Please re-register.")
	ErrMarketingNoUser      = newError("ERR-AB-ACS-33", http.StatusNotFound, "User not found.")
	ErrWithdrawUnavailable  = newError("ERR-AB-ACS-21", http.StatusForbidden, "This app is unable to handle user preference.")
	ErrWithdrawWithdrawn    = newError("ERR-AB-ACS-22", http.StatusGone, "User already withdrawn.")
	ErrWithdrawNoUser       = newError("ERR-AB-ACS-23", http.StatusNotFound, "User not found.")
	// The tag update of DESIGN 13 (PUT /api/app-user/v2/tags) answers as
	// the consent switch of 4.1 does, under codes of its own.
	ErrTagsUnavailable = newError("ERR-AB-ACS-41", http.StatusForbidden, "This app is unable to handle user preference.")
	ErrTagsWithdrawn   = newError("ERR-AB-ACS-42", http.StatusGone, "User withdrawn. Please re-register.")
	ErrTagsNoUser      = newError("ERR-AB-ACS-43", http.StatusNotFound, "User not found.")
	// ErrTagsUnmapped refuses the SDK's tag update of a device no user is
	// mapped to: tags are a user's.
	ErrTagsUnmapped = newError("ERR-AB-ACS-44", http.StatusConflict, "The device has no user; map it with setUserId first.")

	ErrAppNotFound = newError("ERR-AB-PSS-91", http.StatusNotFound, "App data not found.")
	// ErrNoFCM keeps the specification's message and says in details how
	// the file is uploaded.
	ErrNoFCM = newError("ERR-AB-PSS-92", http.StatusNotFound, "FCM Account data not found.").
			With(Detail{Field: "hasFcmCredentials", Reason: "is false: the app has no FCM service-account file; upload it with " +
			"the admin API (PUT /admin/v1/apps/{appId}/fcm-credentials, the file as the body), " +
			"herald app credentials <appId> --file FILE, or the dashboard's app page"})

	ErrTooManyRequests  = newError("ERR-AB-RTL-01", http.StatusTooManyRequests, "Too many requests.")
	ErrIdempotencyReuse = newError("ERR-AB-IDM-01", http.StatusConflict, "Idempotency key reused with a different request.")
	ErrScheduleLocked   = newError("ERR-AB-SCH-01", http.StatusConflict, "Scheduled push can no longer be changed.")
	ErrFeatureOff       = newError("ERR-AB-CFG-01", http.StatusConflict, "Feature not enabled for this app.")
	// ErrReconfirmationOff is ErrFeatureOff for a re-confirmation run of an
	// app whose re-confirmation is off, naming the setting that turns it on.
	ErrReconfirmationOff = ErrFeatureOff.With(Detail{Field: "reconfirmation.enabled", Reason: "is false: turn re-confirmation on " +
		`with the admin API, PATCH /admin/v1/apps/{appId} {"reconfirmation":{"enabled":true}}, or the dashboard's consent page`})
	ErrInternal = newError("ERR-AB-SYS-00", http.StatusInternalServerError, "Internal server error.")
	// ErrUnavailable answers a request the store could not serve in time:
	// unreachable, frozen, full or read-only (DESIGN.md section 4). Its
	// details say how to retry a push safely.
	ErrUnavailable = &Error{Code: "ERR-AB-SYS-01", Status: http.StatusServiceUnavailable, Message: "Service temporarily unavailable.",
		Details: []Detail{{Field: "Idempotency-Key", Reason: "a push answered 503 may or may not have been stored; " +
			"retry it with the same Idempotency-Key header and it is sent at most once"}}}

	// Routing and admin errors, in the same body shape.
	ErrRouteNotFound    = newError("ERR-AB-NTF-00", http.StatusNotFound, "Resource not found.")
	ErrMethodNotAllowed = newError("ERR-AB-MTH-00", http.StatusMethodNotAllowed, "Method not allowed.")
	ErrUnauthorized     = newError("ERR-AB-ADM-01", http.StatusUnauthorized, "Admin token missing or invalid.")
	ErrNotFound         = newError("ERR-AB-NTF-01", http.StatusNotFound, "Not found.")
	// ErrNoDevice refuses a test push that no device would receive.
	ErrNoDevice = newError("ERR-AB-VAL-02", http.StatusNotFound, "No device to send to.")
)

// NoDevice returns ErrNoDevice naming the member (token or userId) that
// found no device, and why.
func NoDevice(field, reason string) *Error {
	e := *ErrNoDevice
	e.Details = []Detail{{Field: field, Reason: reason}}
	return &e
}

// Unavailable marks cause, a store failure that says nothing about the
// request (the database cannot be reached, did not answer in time, is
// full or read-only), as ErrUnavailable; errors.Is(err, ErrUnavailable)
// finds it and errors.Unwrap chains reach cause.
func Unavailable(cause error) error {
	return unavailableError{cause}
}

// unavailableError is ErrUnavailable with its cause; its text is the
// cause's, for the log, without the advice meant for clients.
type unavailableError struct{ cause error }

func (e unavailableError) Error() string   { return "store unavailable: " + e.cause.Error() }
func (e unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// With returns a copy of e carrying details instead of its own.
func (e *Error) With(details ...Detail) *Error {
	c := *e
	c.Details = details
	return &c
}

// MissingHeader is the detail of an authentication error for a header the
// request did not send.
func MissingHeader(name string) Detail {
	return Detail{Field: name, Reason: "header is missing"}
}

// Invalid returns ErrInvalidRequest carrying the given problems.
func Invalid(details ...Detail) *Error {
	e := *ErrInvalidRequest
	e.Details = details
	return &e
}

// Domain sentinels that a store returns and an endpoint turns into its own
// code: the same missing user is ACS-33 on PATCH and ACS-23 on DELETE.
var (
	ErrUserNotFound  = errors.New("herald: user not found")
	ErrUserWithdrawn = errors.New("herald: user withdrawn")
	// ErrDeviceUnmapped: a device no user is mapped to, asked for its
	// user's tags (the SDK's tag update).
	ErrDeviceUnmapped = errors.New("herald: device has no user")
)

// AsError returns err as an *Error, or nil when it carries no code.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
