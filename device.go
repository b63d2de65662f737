package herald

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

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
	// Locale (BCP 47) and TimeZone (IANA) are what the device last
	// reported, "" for none (DESIGN 13).
	Locale, TimeZone string
	// LastSeenAt is when the device last registered or reported an event.
	LastSeenAt time.Time
}

// DeviceRegistration is what registerPushToken sends.
type DeviceRegistration struct {
	DeviceID         string
	Token            string
	Platform         Platform
	AppSourceVersion string
	// UserID maps the device when non-nil.
	UserID *string
	// Locale (a BCP 47 tag) and TimeZone (ValidTimeZone), when non-nil,
	// replace what the device reported before; nil keeps it.
	Locale, TimeZone *string
	// Identity, for an app with identity verification on and no UserID,
	// must verify the user the device is mapped to when the registration
	// gives it a new token: a new token sends that user's pushes elsewhere.
	// A new or unmapped device, or the same token again, needs none.
	// The store checks it in the registration's transaction
	// (ErrIdentityRefused); nil when verification is off.
	Identity *IdentityProof
}

// IdentityRefused reports whether reg may not be made on old, the device
// as stored (isNew: there is none), for want of a valid identity proof:
// see DeviceRegistration.Identity.
func (reg DeviceRegistration) IdentityRefused(old Device, isNew bool) bool {
	return reg.Identity != nil && reg.UserID == nil && !isNew && old.UserID != nil &&
		old.Token != reg.Token && !reg.Identity.Verifies(*old.UserID)
}

// TokenSuffix returns the last characters of a token, enough to recognise it
// without revealing it.
func TokenSuffix(token string) string {
	if len(token) <= 8 {
		return token
	}
	return token[len(token)-8:]
}

// The app-source versions that first show a badge and an image (spec 9).
var (
	BadgeSince = [3]int{1, 5, 0}
	ImageSince = [3]int{1, 6, 0}
)

// VersionBelow reports whether the semantic version v is below min; a
// version that cannot be read counts as below.
func VersionBelow(v string, min [3]int) bool {
	parts, ok := versionParts(v)
	if !ok {
		return true
	}
	for i, n := range parts {
		if n != min[i] {
			return n < min[i]
		}
	}
	return false
}

// VersionKey is a key of the semantic version v that sorts, byte-wise, as
// the versions do: its core's three numbers (before any "-" or "+") as ten
// digits each, dot-separated; "" for a version that cannot be read, which
// no comparison of versions holds for. A filter's version comparisons are
// made on it, in SQL and in Go alike.
func VersionKey(v string) string {
	parts, ok := versionParts(v)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%010d.%010d.%010d", parts[0], parts[1], parts[2])
}

// maxVersionPart bounds each number of a version VersionKey can hold.
const maxVersionPart = 9_999_999_999

// versionParts reads the three numbers of a semantic version's core.
func versionParts(v string) ([3]int, bool) {
	var out [3]int
	core, _, _ := strings.Cut(v, "-")
	core, _, _ = strings.Cut(core, "+")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n > maxVersionPart {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

// NewDevice is a device seen for the first time: it starts with the app's
// default consent pair.
func NewDevice(app App, id string, now time.Time) Device {
	return Device{AppID: app.ID, ID: id, Consent: app.DefaultConsent, CreatedAt: now}
}

// Register applies a registration (registerPushToken) to the device: its
// token, platform and version, refreshed now.
func (d *Device) Register(reg DeviceRegistration, now time.Time) {
	d.Token, d.Platform, d.AppSourceVersion, d.TokenUpdatedAt, d.LastSeenAt = reg.Token, reg.Platform, reg.AppSourceVersion, now, now
	if reg.Locale != nil {
		d.Locale = *reg.Locale
	}
	if reg.TimeZone != nil {
		d.TimeZone = *reg.TimeZone
	}
}

// MapTo maps the device to user u (registered). A device newly mapped to
// the user adopts the user's consent pair when it was set through the
// Server API; a device already mapped to u keeps its own pair (the user
// may have changed it in the app since).
func (d *Device) MapTo(u User) {
	if d.UserID != nil && *d.UserID == u.ID {
		return
	}
	id := u.ID
	d.UserID = &id
	if u.ConsentSet {
		d.Consent = u.Consent
	}
}
