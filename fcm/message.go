// Package fcm sends notifications through Firebase Cloud Messaging HTTP v1:
// it validates service-account files, maps a Herald notification to an FCM
// message, and sends it with a client that classifies FCM's answers so
// delivery knows whether to retry, drop the token or fail the push.
package fcm

import (
	"net/url"
	"regexp"
	"strconv"
)

// Notification is the content of one push as Herald knows it, before it is
// shaped into an FCM message.
type Notification struct {
	Title    string
	Body     string
	ImageURL string
	LinkURL  string
	PushID   string
	Badge    bool
	// RequestGroupID becomes the message's analytics label when FCM
	// accepts it as one (see AnalyticsLabel).
	RequestGroupID string
	// HasTTL, TTL and Expires are the message's time to live (see
	// herald.Notification): android.ttl and the apns-expiration header.
	HasTTL  bool
	TTL     int
	Expires int64
	// High asks for high priority: android.priority HIGH and the
	// apns-priority header 10. Without it neither is set, and FCM's
	// defaults hold.
	High bool
	// Tag is the same on every send of one message (see herald.Notification):
	// the Android notification tag, the APNs collapse id and the web-push
	// Topic, so a message sent twice to a device replaces itself on screen.
	Tag string
}

// Message is the FCM HTTP v1 message object, limited to the parts Herald
// sets. Empty parts are omitted so FCM sees no empty objects.
type Message struct {
	Token        string               `json:"token,omitempty"`
	Notification *MessageNotification `json:"notification,omitempty"`
	Data         map[string]string    `json:"data,omitempty"`
	Android      *AndroidConfig       `json:"android,omitempty"`
	APNS         *APNSConfig          `json:"apns,omitempty"`
	Webpush      *WebpushConfig       `json:"webpush,omitempty"`
	FCMOptions   *FCMOptions          `json:"fcm_options,omitempty"`
}

// FCMOptions are FCM's options for every platform.
type FCMOptions struct {
	AnalyticsLabel string `json:"analytics_label,omitempty"`
}

// analyticsLabel is FCM's rule for an analytics label.
var analyticsLabel = regexp.MustCompile(`^[a-zA-Z0-9\-_.~%]{1,50}$`)

// AnalyticsLabel returns the analytics label of a push with the
// requestGroupId: the id itself when FCM accepts it as a label (1 to 50 of
// letters, digits and - _ . ~ %), so that Firebase's own reports group
// messages as Herald's history does; "" (no label) otherwise.
func AnalyticsLabel(requestGroupID string) string {
	if analyticsLabel.MatchString(requestGroupID) {
		return requestGroupID
	}
	return ""
}

// MessageNotification is the platform-independent notification of a Message.
type MessageNotification struct {
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
	Image string `json:"image,omitempty"`
}

// AndroidConfig is the Android-specific part of a Message.
type AndroidConfig struct {
	// Priority is FCM's AndroidMessagePriority: "NORMAL" or "HIGH".
	Priority     string               `json:"priority,omitempty"`
	TTL          string               `json:"ttl,omitempty"`
	Notification *AndroidNotification `json:"notification,omitempty"`
}

// AndroidNotification is the Android notification override of a Message.
type AndroidNotification struct {
	Image string `json:"image,omitempty"`
	Tag   string `json:"tag,omitempty"`
}

// APNSConfig is the Apple-specific part of a Message.
type APNSConfig struct {
	Headers    *APNSHeaders    `json:"headers,omitempty"`
	Payload    *APNSPayload    `json:"payload,omitempty"`
	FCMOptions *APNSFCMOptions `json:"fcm_options,omitempty"`
}

// APNSHeaders are the APNs request headers of a Message.
type APNSHeaders struct {
	CollapseID string `json:"apns-collapse-id,omitempty"`
	Expiration string `json:"apns-expiration,omitempty"`
	// Priority is APNs' apns-priority: "10" sends at once.
	Priority string `json:"apns-priority,omitempty"`
}

// APNSPayload is the APNs payload of a Message.
type APNSPayload struct {
	APS APS `json:"aps"`
}

// APS is the aps dictionary of an APNs payload.
type APS struct {
	Badge          *int `json:"badge,omitempty"`
	MutableContent int  `json:"mutable-content,omitempty"`
}

// APNSFCMOptions are FCM's options for Apple devices.
type APNSFCMOptions struct {
	Image string `json:"image,omitempty"`
}

// WebpushConfig is the web-push part of a Message.
type WebpushConfig struct {
	Headers    *WebpushHeaders    `json:"headers,omitempty"`
	FCMOptions *WebpushFCMOptions `json:"fcm_options,omitempty"`
}

// WebpushHeaders are the Web Push protocol headers of a Message.
type WebpushHeaders struct {
	Topic string `json:"Topic,omitempty"`
}

// WebpushFCMOptions are FCM's options for web push.
type WebpushFCMOptions struct {
	Link string `json:"link,omitempty"`
}

// BuildMessage maps a notification for one registration token onto an FCM
// message (DESIGN section 6). It is pure: the same input gives the same message.
func BuildMessage(token string, n Notification) Message {
	m := Message{Token: token, Data: buildData(n)}
	if n.Title != "" || n.Body != "" || n.ImageURL != "" {
		m.Notification = &MessageNotification{Title: n.Title, Body: n.Body, Image: n.ImageURL}
	}
	m.Android = buildAndroid(n)
	m.APNS = buildAPNS(n)
	if label := AnalyticsLabel(n.RequestGroupID); label != "" {
		m.FCMOptions = &FCMOptions{AnalyticsLabel: label}
	}
	m.Webpush = buildWebpush(n)
	return m
}

// A tag is sent as the APNs collapse id and the web-push Topic only where
// those take it: APNs takes at most 64 bytes, a Topic at most 32 characters
// of the URL-safe base64 alphabet (RFC 8030). Herald's tags (a push id, and
// a message's index) always fit; another stays on Android only.
func webpushTopic(tag string) bool {
	if len(tag) == 0 || len(tag) > 32 {
		return false
	}
	for i := 0; i < len(tag); i++ {
		switch c := tag[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// collapses reports whether tag goes out as the APNs collapse id and the
// web-push Topic too (see webpushTopic). tagMark, which stands for a tag
// that does while a template is encoded, does. Every send asks (see
// shapeOf), so it is a loop over the bytes, not a regular expression.
func collapses(tag string) bool {
	return tag == tagMark || webpushTopic(tag)
}

// buildWebpush returns the web-push part of n, or nil when it would be
// empty.
func buildWebpush(n Notification) *WebpushConfig {
	var w WebpushConfig
	if collapses(n.Tag) {
		w.Headers = &WebpushHeaders{Topic: n.Tag}
	}
	if isHTTPS(n.LinkURL) {
		// FCM rejects a web-push link that is not https, so other links
		// travel in data only.
		w.FCMOptions = &WebpushFCMOptions{Link: n.LinkURL}
	}
	if w == (WebpushConfig{}) {
		return nil
	}
	return &w
}

// buildData returns the data map of n, or nil when it would be empty.
func buildData(n Notification) map[string]string {
	if n.LinkURL == "" && n.PushID == "" {
		return nil
	}
	data := make(map[string]string, 2)
	if n.LinkURL != "" {
		data["linkURL"] = n.LinkURL
	}
	if n.PushID != "" {
		data["pushId"] = n.PushID
	}
	return data
}

// buildAndroid returns the Android part of n, or nil when it would be
// empty.
func buildAndroid(n Notification) *AndroidConfig {
	var a AndroidConfig
	if n.High {
		a.Priority = "HIGH"
	}
	if n.HasTTL {
		a.TTL = strconv.Itoa(n.TTL) + "s" // a protobuf Duration in JSON
	}
	if n.ImageURL != "" || n.Tag != "" {
		a.Notification = &AndroidNotification{Image: n.ImageURL, Tag: n.Tag}
	}
	if a == (AndroidConfig{}) {
		return nil
	}
	return &a
}

// buildAPNS returns the Apple part of n, or nil when it would be empty.
func buildAPNS(n Notification) *APNSConfig {
	var h APNSHeaders
	if collapses(n.Tag) {
		h.CollapseID = n.Tag
	}
	if n.High {
		h.Priority = "10"
	}
	if n.HasTTL {
		// APNs reads 0 as "deliver now or never", as FCM reads "0s";
		// another time to live ends at a moment, in unix seconds.
		h.Expiration = "0"
		if n.TTL > 0 {
			h.Expiration = strconv.FormatInt(n.Expires, 10)
		}
	}
	var apns APNSConfig
	if h != (APNSHeaders{}) {
		apns.Headers = &h
	}
	if n.Badge || n.ImageURL != "" {
		apns.Payload = &APNSPayload{}
	}
	if n.Badge {
		one := 1
		apns.Payload.APS.Badge = &one
	}
	if n.ImageURL != "" {
		// The notification service extension that downloads the image
		// runs only for mutable content.
		apns.Payload.APS.MutableContent = 1
		apns.FCMOptions = &APNSFCMOptions{Image: n.ImageURL}
	}
	if apns.Headers == nil && apns.Payload == nil {
		return nil
	}
	return &apns
}

// isHTTPS reports whether link is an absolute https URL.
func isHTTPS(link string) bool {
	u, err := url.Parse(link)
	return err == nil && u.Scheme == "https" && u.Host != ""
}
