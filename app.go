package herald

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// Tier is an account's membership tier.
type Tier string

// The membership tiers, lowest first.
const (
	TierFree       Tier = "free"
	TierBasic      Tier = "basic"
	TierBusiness   Tier = "business"
	TierEnterprise Tier = "enterprise"
)

// Valid reports whether t is one of the known tiers.
func (t Tier) Valid() bool {
	switch t {
	case TierFree, TierBasic, TierBusiness, TierEnterprise:
		return true
	}
	return false
}

// AtLeastBusiness reports whether the tier may use the app-user feature.
func (t Tier) AtLeastBusiness() bool { return t == TierBusiness || t == TierEnterprise }

// App is a tenant: one mobile app with its keys, features and delivery
// settings.
type App struct {
	ID             string
	Name           string
	APIKey         string
	SecretHash     []byte
	Tier           Tier
	AppUserEnabled bool
	Registered     bool
	TimeZone       string
	// DefaultConsent is the consent pair a new device starts with.
	DefaultConsent Consent
	// FCMCredentials is the service-account file, encrypted with the master
	// key; empty when none is registered.
	FCMCredentials []byte
	WebhookURL     string
	// WebhookSecret is the signing secret, encrypted with the master key.
	WebhookSecret []byte
	// WebhookEvents are the webhook event types the app takes (see
	// Takes); nil for DefaultWebhookEvents.
	WebhookEvents []WebhookEvent
	CreatedAt     time.Time
	// FCMWarning is the last refusal FCM gave about the app's credentials
	// (the service account, or the project's APNs or web-push
	// credentials), at FCMWarningAt; empty since credentials were stored.
	FCMWarning   string
	FCMWarningAt *time.Time
	// FCMCredentialsAt is when the FCM credentials were stored.
	FCMCredentialsAt *time.Time
	// NoAdPrefixCheck turns off the rule that a push marked
	// options.isMarketing must have a title starting with "(광고)" (for an
	// app that puts the prefix in the body).
	NoAdPrefixCheck bool
	// Sandbox runs the app's pushes through the whole pipeline but has FCM
	// only validate them (validate_only), and charges nothing.
	Sandbox bool
	// SendRatePerMinute paces the app's FCM sends, all its pushes
	// together (see SendRate); 0 stands for DefaultSendRatePerMinute.
	SendRatePerMinute int
	// AdSenderName, AdSenderContact and AdOptOut are the ad footer's
	// settings (see AdFooter): who sends the app's advertising, how to
	// reach them, and how to refuse it. "" when unset.
	AdSenderName    string
	AdSenderContact string
	AdOptOut        string
	// ConsentNotice and Reconfirmation are the consent notices the app's
	// users are sent (art. 50(7) and (8)); the zero value is off with the
	// default templates.
	ConsentNotice  ConsentNotice
	Reconfirmation Reconfirmation
	// IdentityVerification makes the SDK calls that bind a userId carry
	// an identityToken (see IdentityProof); off by default.
	IdentityVerification bool
	// IdentitySecret is the identity secret, encrypted with the master
	// key; empty until one is issued.
	IdentitySecret []byte
	// PreviousIdentitySecret is the secret the last rotation replaced
	// (encrypted; empty when none), at IdentityRotatedAt: it keeps
	// verifying for IdentityRotationGrace after it.
	PreviousIdentitySecret []byte
	IdentityRotatedAt      time.Time
	// IdentityRefusals counts the SDK calls refused for a missing or wrong
	// identityToken (only the service writes it).
	IdentityRefusals int64
	// Approval says which of the app's pushes wait for another operator's
	// approval before they are sent (DESIGN 14); off by default.
	Approval ApprovalSetting
	// MarketingCap bounds the marketing pushes one user receives (DESIGN
	// 14); no cap by default.
	MarketingCap MarketingCap
}

// Bounds of an app's send rate, in messages per minute. The default is
// FCM's quota per project; Google raises the quota on request, so the cap
// is well above it, yet low enough that a typo is caught.
const (
	DefaultSendRatePerMinute = 600_000
	MaxSendRatePerMinute     = 10_000_000
)

// DefaultFCMProjectRate is the sends a minute of all apps whose service
// accounts name one FCM project, together (HERALD_FCM_PROJECT_RATE): FCM's
// quota is per project. It is bounded as an app's rate is.
const DefaultFCMProjectRate = 600_000

// ReasonSendRate is the validation reason of a send rate out of bounds.
const ReasonSendRate = "must be a whole number from 1 to 10000000"

// SendRate returns the app's send rate in messages per minute, the default
// when none is set.
func (a App) SendRate() int {
	if a.SendRatePerMinute <= 0 {
		return DefaultSendRatePerMinute
	}
	return a.SendRatePerMinute
}

// SendRateOf returns v as a send rate when it is a whole number from 1 to
// MaxSendRatePerMinute (a JSON number may be written 1.2e5).
func SendRateOf(v float64) (int, bool) {
	if v != math.Trunc(v) || v < 1 || v > MaxSendRatePerMinute { // NaN fails the first test
		return 0, false
	}
	return int(v), true
}

// AppUserAllowed reports whether the app-user endpoints are open to the app:
// the feature is enabled and the tier is business or higher.
func (a App) AppUserAllowed() bool { return len(a.AppUserProblems()) == 0 }

// AppUserProblems names what the operator must change for the app-user
// endpoints to open (the details of their 403): the tier, the feature, or
// both; none when they are open.
func (a App) AppUserProblems() []Detail {
	var d []Detail
	if !a.Tier.AtLeastBusiness() {
		d = append(d, Detail{Field: "tier", Reason: fmt.Sprintf("is %s; must be business or enterprise (admin API: PATCH /admin/v1/apps/{appId})", a.Tier)})
	}
	if !a.AppUserEnabled {
		d = append(d, Detail{Field: "appUserEnabled", Reason: "is false; must be true (admin API: PATCH /admin/v1/apps/{appId})"})
	}
	return d
}

// Location returns the app's time zone, Asia/Seoul when it is unset or
// unknown.
func (a App) Location() *time.Location {
	if loc, err := loadLocation(a.TimeZone); err == nil && a.TimeZone != "" {
		return loc
	}
	loc, err := loadLocation(DefaultTimeZone)
	if err != nil {
		return time.FixedZone("KST", 9*3600)
	}
	return loc
}

// locations holds the time zones loaded (name → *time.Location), at most
// one per zone of the system's database: time.LoadLocation reads and
// parses the zone's file on every call, which was 7 % of the API's CPU in
// accepting a 500-user push, and every accept and chunk asks.
var locations sync.Map

// loadLocation is time.LoadLocation, each zone read once.
func loadLocation(name string) (*time.Location, error) {
	if loc, ok := locations.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err == nil {
		locations.Store(name, loc)
	}
	return loc, err
}

// ValidTimeZone reports whether name is an IANA time zone name that this
// build knows: an app's or a device's zone ("" and "Local" are none).
func ValidTimeZone(name string) bool {
	if name == "" || name == "Local" {
		return false
	}
	_, err := loadLocation(name)
	return err == nil
}

// DefaultTimeZone is the time zone of an app that names none.
const DefaultTimeZone = "Asia/Seoul"

// Key formats: an API key is "hk_" and 32 base62 characters, a secret key
// "hs_" and 40.
const (
	apiKeyPrefix    = "hk_"
	apiKeyLen       = 32
	secretKeyPrefix = "hs_"
	secretKeyLen    = 40
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomBase62 returns n characters drawn uniformly from base62.
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n*2)
	for len(out) < n {
		rand.Read(buf) // never fails (crypto/rand panics instead)
		for _, b := range buf {
			// 248 = 4*62: rejecting larger bytes keeps the draw uniform.
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

// NewAPIKey returns a fresh API key.
func NewAPIKey() string { return apiKeyPrefix + randomBase62(apiKeyLen) }

// NewSecretKey returns a fresh secret key.
func NewSecretKey() string { return secretKeyPrefix + randomBase62(secretKeyLen) }

// NewID returns a sortable identifier with the given prefix: 10 characters
// of millisecond time then 12 random ones, all base62. IDs made by this
// process in one millisecond also sort in the order they were made (the
// random part of the next one is the last one's plus one), so that two
// pushes accepted in the same millisecond list newest first.
func NewID(prefix string, now time.Time) string {
	ms := now.UnixMilli()
	var ts [10]byte
	for i, v := len(ts)-1, ms; i >= 0; i-- {
		ts[i] = base62[v%62]
		v /= 62
	}
	return prefix + string(ts[:]) + ids.next(ms)
}

// ids keeps the last ID's time and random part: package state, because
// the order of IDs is the process's, whoever makes them.
var ids idSequence

type idSequence struct {
	mu   sync.Mutex
	ms   int64
	last []byte
}

// next returns the random part of an ID made in millisecond ms.
func (q *idSequence) next(ms int64) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if ms != q.ms || !increment(q.last) {
		q.ms, q.last = ms, []byte(randomBase62(12))
	}
	return string(q.last)
}

// increment adds one to a base62 number in place; false when it overflows.
func increment(b []byte) bool {
	for i := len(b) - 1; i >= 0; i-- {
		d := strings.IndexByte(base62, b[i])
		if d < len(base62)-1 {
			b[i] = base62[d+1]
			return true
		}
		b[i] = base62[0]
	}
	return false
}

// ValidAPIKey reports whether s has the API key format.
func ValidAPIKey(s string) bool { return hasKeyFormat(s, apiKeyPrefix, apiKeyLen) }

func hasKeyFormat(s, prefix string, n int) bool {
	if len(s) != len(prefix)+n || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// HashSecret returns the stored form of a secret key. A SHA-256 is enough:
// the key has 238 bits of entropy, so there is nothing to brute-force.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// SecretMatches compares a presented secret key with the stored hash in
// constant time.
func SecretMatches(hash []byte, secret string) bool {
	return subtle.ConstantTimeCompare(hash, HashSecret(secret)) == 1
}
