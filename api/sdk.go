package api

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"regexp"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/render"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// deviceAnswer is the SDK's answer for push-token and user calls.
type deviceAnswer struct {
	DeviceID       string  `json:"deviceId"`
	UserID         *string `json:"userId"`
	Marketing      bool    `json:"marketing"`
	MarketingNight bool    `json:"marketingNight"`
}

func answerDevice(w http.ResponseWriter, d herald.Device) {
	web.JSON(w, http.StatusOK, deviceAnswer{DeviceID: d.ID, UserID: d.UserID, Marketing: d.Consent.Marketing, MarketingNight: d.Consent.MarketingNight})
}

var semver = regexp.MustCompile(`^\d{1,6}\.\d{1,6}\.\d{1,6}([-+][0-9A-Za-z.-]{1,64})?$`)

// sdkObject reads an SDK body and its deviceId.
func sdkObject(r *http.Request) (request.Object, *[]herald.Detail, string, error) {
	body, err := readBody(r, request.DefaultBodyLimit)
	if err != nil {
		return request.Object{}, nil, "", err
	}
	o, details := request.ParseLenient(body)
	deviceID, _ := o.Str("deviceId", true, 255)
	return o, details, deviceID, nil
}

// optionalUserID reads a userId that may be absent or null (nil then).
func optionalUserID(o request.Object, name string) *string {
	raw, ok := o.Raw(name)
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	id, ok := o.UserID(name)
	if !ok {
		return nil
	}
	return &id
}

// registerPushToken is POST /api/sdk/v2/push-token.
func (s *server) registerPushToken(w http.ResponseWriter, r *http.Request) {
	o, details, deviceID, err := sdkObject(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	token, _ := o.Str("token", true, 4096)
	platform, ok := o.Str("platform", true, 0)
	if ok && !herald.Platform(platform).Valid() {
		o.Fail("platform", "must be android, ios or web")
	}
	version, ok := o.Str("appSourceVersion", true, 0)
	if ok && !semver.MatchString(version) {
		o.Fail("appSourceVersion", "must be a semantic version such as 1.6.0")
	}
	userID := optionalUserID(o, "userId")
	locale, timeZone := deviceLocale(o)
	err = request.Invalid(details)
	var identity *herald.IdentityProof
	switch {
	case err != nil:
	case userID != nil:
		err = s.checkIdentity(r, o, *userID)
	default:
		// A new token on a mapped device is checked by the store against
		// the device's user (DeviceRegistration.Identity).
		identity, err = s.identityProof(r, o)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	d, err := s.store.RegisterDevice(r.Context(), appFrom(r.Context()).ID, herald.DeviceRegistration{
		DeviceID: deviceID, Token: token, Platform: herald.Platform(platform), AppSourceVersion: version, UserID: userID,
		Locale: locale, TimeZone: timeZone, Identity: identity,
	})
	if errors.Is(err, herald.ErrIdentityRefused) {
		err = s.refuseIdentity(r)
	}
	if err != nil {
		web.Error(w, r, s.sdkError(r, err))
		return
	}
	answerDevice(w, d)
}

// deviceLocale reads a registration's optional locale and timeZone
// (DESIGN 13); nil for one absent or null, which keeps what the device
// reported before.
func deviceLocale(o request.Object) (locale, timeZone *string) {
	o.DropNulls("locale", "timeZone")
	if v, ok := o.Str("locale", false, 0); ok {
		if len(v) > render.MaxLanguageTag || !render.WellFormedTag(v) {
			o.Fail("locale", fmt.Sprintf("must be a BCP 47 language tag of at most %d characters, such as ko-KR", render.MaxLanguageTag))
		}
		locale = &v
	}
	if v, ok := o.Str("timeZone", false, 0); ok {
		if !herald.ValidTimeZone(v) {
			o.Fail("timeZone", "must be an IANA time zone name such as Asia/Seoul")
		}
		timeZone = &v
	}
	return locale, timeZone
}

// setUserID is POST /api/sdk/v2/user: maps the device to a user (userId
// null unmaps it).
func (s *server) setUserID(w http.ResponseWriter, r *http.Request) {
	o, details, deviceID, err := sdkObject(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if _, present := o.Raw("userId"); !present {
		o.Fail("userId", "is required (null unmaps the device)")
	}
	userID := optionalUserID(o, "userId")
	err = request.Invalid(details)
	if err == nil && userID != nil { // unmapping binds no one: it needs no token
		err = s.checkIdentity(r, o, *userID)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	d, err := s.store.SetDeviceUser(r.Context(), appFrom(r.Context()).ID, deviceID, userID)
	if err != nil {
		web.Error(w, r, deviceError(s.sdkError(r, err)))
		return
	}
	answerDevice(w, d)
}

// setDeviceConsent is PATCH /api/sdk/v2/consent, the in-app consent switch.
func (s *server) setDeviceConsent(w http.ResponseWriter, r *http.Request) {
	o, details, deviceID, err := sdkObject(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	change := herald.ConsentChange{Marketing: o.Boolean("marketing"), MarketingNight: o.Boolean("marketingNight")}
	if len(*details) == 0 {
		*details = append(*details, change.Shape("")...)
	}
	err = request.Invalid(details)
	if err == nil {
		// The token is checked against the device's user by the store, in
		// the transaction that changes the pair.
		change.Identity, err = s.identityProof(r, o)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	d, err := s.store.SetDeviceConsent(r.Context(), appFrom(r.Context()).ID, deviceID, change)
	if errors.Is(err, herald.ErrIdentityRefused) {
		err = s.refuseIdentity(r)
	}
	if err != nil {
		web.Error(w, r, deviceError(s.sdkError(r, err)))
		return
	}
	web.JSON(w, http.StatusOK, map[string]any{"deviceId": d.ID, "marketing": d.Consent.Marketing, "marketingNight": d.Consent.MarketingNight})
}

// deleteDevice is DELETE /api/sdk/v2/push-token.
func (s *server) deleteDevice(w http.ResponseWriter, r *http.Request) {
	_, details, deviceID, err := sdkObject(r)
	if err == nil {
		err = request.Invalid(details)
	}
	if err == nil {
		err = s.sdkError(r, s.store.DeleteDevice(r.Context(), appFrom(r.Context()).ID, deviceID))
	}
	if err != nil {
		web.Error(w, r, deviceError(err))
		return
	}
	web.JSON(w, http.StatusOK, map[string]string{"deviceId": deviceID})
}

// errDeviceNotFound answers an SDK call naming a device never registered.
var errDeviceNotFound = &herald.Error{Code: herald.ErrNotFound.Code, Status: http.StatusNotFound, Message: "Device not found."}

func deviceError(err error) error {
	if errors.Is(err, herald.ErrNotFound) {
		return errDeviceNotFound
	}
	return err
}

// sdkError maps a store error of an SDK call whose app came from the
// cache: not found may mean the app was deleted since it was cached (the
// store writes nothing for a missing app). The key is forgotten and the
// app read again; when it is gone, the answer is the unknown key's, as an
// uncached read would have given.
func (s *server) sdkError(r *http.Request, err error) error {
	if !errors.Is(err, herald.ErrNotFound) {
		return err
	}
	apiKey := r.Header.Get("x-api-key")
	s.apps.forget(apiKey)
	if _, lookupErr := s.store.AppByAPIKey(r.Context(), apiKey); errors.Is(lookupErr, herald.ErrNotFound) {
		return herald.ErrUnknownAPIKey
	}
	return err
}
