package herald

import "time"

// Platform is a device's operating system family.
type Platform string

// The platforms a device registers with.
const (
	PlatformAndroid Platform = "android"
	PlatformIOS     Platform = "ios"
	PlatformWeb     Platform = "web"
)

// Valid reports whether p is a known platform.
func (p Platform) Valid() bool {
	return p == PlatformAndroid || p == PlatformIOS || p == PlatformWeb
}

// Device is a token mapping: one install of the app with its FCM token, the
// user it is mapped to, and its own consent pair.
type Device struct {
	AppID            string
	ID               string
	Token            string
	Platform         Platform
	AppSourceVersion string
	UserID           *string
	Consent          Consent
	Topics           []string
	CreatedAt        time.Time
	// TokenUpdatedAt is when the token was last registered or refreshed.
	TokenUpdatedAt time.Time
}

// DeviceRegistration is what registerPushToken sends.
type DeviceRegistration struct {
	DeviceID         string
	Token            string
	Platform         Platform
	AppSourceVersion string
	// UserID maps the device when non-nil.
	UserID *string
}

// TokenSuffix returns the last characters of a token, enough to recognise it
// without revealing it.
func TokenSuffix(token string) string {
	if len(token) <= 8 {
		return token
	}
	return token[len(token)-8:]
}
