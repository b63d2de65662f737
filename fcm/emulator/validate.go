package emulator

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request/jsonsplit"
)

// object is a decoded JSON object whose values are decoded on demand.
type object map[string]json.RawMessage

// decodeObject splits raw, a JSON value inside a body already checked to
// be valid JSON (decodeSendBody), as an object at path and refuses keys
// that known does not accept. Absent or null raw gives a nil object. The
// body is scanned once as a whole: a member is split off, never checked
// again, so that a message's nested objects cost one pass, not one each.
func decodeObject(raw json.RawMessage, path string, known func(string) bool) (object, *fcmError) {
	if isNull(raw) {
		return nil, nil
	}
	obj, ok := members(raw)
	if !ok {
		if path == "" {
			return nil, errInvalidArgument("Invalid JSON payload received. Expected a JSON object.", "")
		}
		return nil, errInvalidArgument(fmt.Sprintf("Invalid JSON payload received. Expected an object at '%s'.", path), path)
	}
	if known == nil {
		return obj, nil
	}
	var unknown []string
	for k := range obj {
		if !known(k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return nil, errUnknownField(slices.Min(unknown), path)
	}
	return obj, nil
}

// members splits raw, valid JSON, into an object's members
// (jsonsplit.Object); ok is false when it is not an object. A key
// repeated keeps its last value, as encoding/json does.
func members(raw []byte) (object, bool) {
	obj := object{}
	if !jsonsplit.Object(raw, func(name string, value json.RawMessage) { obj[name] = value }) {
		return nil, false
	}
	return obj, true
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// stringField returns obj[key] as a string, "" when absent, or an error when
// it is not a JSON string.
func (obj object) stringField(key, path string) (string, *fcmError) {
	raw, ok := obj[key]
	if !ok || isNull(raw) {
		return "", nil
	}
	s, ok := jsonsplit.String(raw)
	if !ok {
		field := path + "." + key
		return "", errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (TYPE_STRING), %s", field, raw), field)
	}
	return s, nil
}

// strings returns obj's members as strings; null is "". It is nil when
// a member is not a string.
func (obj object) strings() map[string]string {
	m := make(map[string]string, len(obj))
	for k, raw := range obj {
		if isNull(raw) {
			m[k] = ""
			continue
		}
		s, ok := jsonsplit.String(raw)
		if !ok {
			return nil
		}
		m[k] = s
	}
	return m
}

// boolValue decodes raw as a boolean named name; absent is false.
func boolValue(raw json.RawMessage, name string) (bool, *fcmError) {
	if isNull(raw) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (TYPE_BOOL), %s", name, raw), name)
	}
	return b, nil
}

// either returns obj's value under the snake_case or the camelCase name.
func (obj object) either(snake, camel string) json.RawMessage {
	if raw, ok := obj[snake]; ok {
		return raw
	}
	return obj[camel]
}

// validateMessage checks an FCM message object like FCM and returns its
// token ("" for topic and condition messages).
func validateMessage(raw json.RawMessage) (string, *fcmError) {
	msg, ferr := decodeObject(raw, "message", isMessageField)
	if ferr != nil {
		return "", ferr
	}
	token, ferr := validateTarget(msg)
	if ferr != nil {
		return "", ferr
	}
	checks := []func(object) *fcmError{validateNotification, validateData, validateAndroid, validateAPNS, validateWebpush, validateFCMOptions, validateSize}
	for _, check := range checks {
		if ferr := check(msg); ferr != nil {
			return "", ferr
		}
	}
	return token, nil
}

// isMessageField reports whether k is a field of the FCM message object.
func isMessageField(k string) bool {
	switch k {
	case "name", "data", "notification", "android", "webpush", "apns",
		"fcm_options", "fcmOptions", "token", "topic", "condition":
		return true
	}
	return false
}

// validateTarget requires exactly one of token, topic and condition.
func validateTarget(msg object) (string, *fcmError) {
	var set []string
	for _, k := range []string{"token", "topic", "condition"} {
		if !isNull(msg[k]) {
			set = append(set, k)
		}
	}
	switch len(set) {
	case 0:
		return "", errInvalidArgument("Recipient of the message is not set.", "")
	case 1:
	default:
		return "", errInvalidArgument(fmt.Sprintf(
			"Invalid value at 'message' (oneof), oneof field 'target' is already set. Cannot set '%s'", set[1]), "message")
	}
	value, ferr := msg.stringField(set[0], "message")
	if ferr != nil {
		return "", ferr
	}
	if value == "" {
		if set[0] == "token" {
			return "", errInvalidToken()
		}
		return "", errInvalidArgument("Recipient of the message is not set.", "message."+set[0])
	}
	if set[0] != "token" {
		return "", nil
	}
	return value, nil
}

// validateNotification requires notification's fields to be strings.
func validateNotification(msg object) *fcmError {
	n, ferr := decodeObject(msg["notification"], "message.notification", func(k string) bool {
		return k == "title" || k == "body" || k == "image"
	})
	if ferr != nil {
		return ferr
	}
	for _, k := range []string{"title", "body", "image"} {
		if _, ferr := n.stringField(k, "message.notification"); ferr != nil {
			return ferr
		}
	}
	return nil
}

// validateData requires every data value to be a string.
func validateData(msg object) *fcmError {
	data, ferr := decodeObject(msg["data"], "message.data", nil)
	if ferr != nil {
		return ferr
	}
	for k := range data {
		if _, ferr := data.stringField(k, "message.data"); ferr != nil {
			return ferr
		}
	}
	return nil
}

// validateAndroid checks the Android time to live (see androidTTL) and
// that the notification's image and tag are strings.
func validateAndroid(msg object) *fcmError {
	android, ferr := decodeObject(msg["android"], "message.android", nil)
	if ferr != nil {
		return ferr
	}
	ttl, ferr := android.stringField("ttl", "message.android")
	if ferr != nil {
		return ferr
	}
	if ttl != "" && !validTTL(ttl) {
		const field = "message.android.ttl"
		return errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (type.googleapis.com/google.protobuf.Duration), %q", field, ttl), field)
	}
	priority, ferr := android.stringField("priority", "message.android")
	if ferr != nil {
		return ferr
	}
	if priority != "" && priority != "NORMAL" && priority != "HIGH" {
		const field = "message.android.priority"
		return errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), %q", field, priority), field)
	}
	n, ferr := decodeObject(android["notification"], "message.android.notification", nil)
	if ferr != nil {
		return ferr
	}
	if _, ferr = n.stringField("image", "message.android.notification"); ferr != nil {
		return ferr
	}
	_, ferr = n.stringField("tag", "message.android.notification")
	return ferr
}

// headers decodes a message's platform headers at path: an object of
// strings (FCM's map<string, string>).
func headers(raw json.RawMessage, path string) (map[string]string, *fcmError) {
	if isNull(raw) {
		return nil, nil
	}
	obj, ok := members(raw)
	var h map[string]string
	if ok {
		h = obj.strings()
	}
	if h == nil {
		return nil, errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (map<string, string>), %s", path, raw), path)
	}
	return h, nil
}

// androidTTL is a protobuf Duration in JSON, seconds with up to nine
// decimals and an "s"; FCM keeps a message at most 28 days (2,419,200 s).
var androidTTL = regexp.MustCompile(`^([0-9]+)(\.[0-9]{1,9})?s$`)

// validTTL reports whether ttl is an android.ttl FCM takes (androidTTL).
func validTTL(ttl string) bool {
	m := androidTTL.FindStringSubmatch(ttl)
	if m == nil {
		return false
	}
	secs, err := strconv.ParseInt(m[1], 10, 64)
	return err == nil && (secs < herald.MaxTTL || secs == herald.MaxTTL && strings.Trim(m[2], ".0") == "")
}

// apnsExpiration is the apns-expiration header: a unix time in seconds, 0
// for "now or never".
var apnsExpiration = regexp.MustCompile(`^[0-9]{1,12}$`)

// maxCollapseID is the longest apns-collapse-id APNs takes, in bytes.
const maxCollapseID = 64

// webpushTopic is the Web Push protocol's Topic (RFC 8030 section 5.4): at
// most 32 characters of the URL-safe base64 alphabet.
var webpushTopic = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// validateAPNS checks the APNs payload is an object and the image a string.
func validateAPNS(msg object) *fcmError {
	apns, ferr := decodeObject(msg["apns"], "message.apns", nil)
	if ferr != nil {
		return ferr
	}
	h, ferr := headers(apns["headers"], "message.apns.headers")
	if ferr != nil {
		return ferr
	}
	if id, ok := h["apns-collapse-id"]; ok && len(id) > maxCollapseID {
		const field = "message.apns.headers"
		return errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (apns-collapse-id): over %d bytes", field, maxCollapseID), field)
	}
	if exp, ok := h["apns-expiration"]; ok && !apnsExpiration.MatchString(exp) {
		const field = "message.apns.headers"
		return errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (apns-expiration %q): must be a unix time in seconds", field, exp), field)
	}
	if pr, ok := h["apns-priority"]; ok && pr != "5" && pr != "10" && pr != "1" {
		const field = "message.apns.headers"
		return errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (apns-priority %q): must be 10, 5 or 1", field, pr), field)
	}
	if _, ferr := decodeObject(apns["payload"], "message.apns.payload", nil); ferr != nil {
		return ferr
	}
	opts, ferr := decodeObject(apns.either("fcm_options", "fcmOptions"), "message.apns.fcm_options", nil)
	if ferr != nil {
		return ferr
	}
	_, ferr = opts.stringField("image", "message.apns.fcm_options")
	return ferr
}

// validateWebpush requires the web-push link to be https, as FCM does,
// and a Topic header to be one (see webpushTopic).
func validateWebpush(msg object) *fcmError {
	webpush, ferr := decodeObject(msg["webpush"], "message.webpush", nil)
	if ferr != nil {
		return ferr
	}
	h, ferr := headers(webpush["headers"], "message.webpush.headers")
	if ferr != nil {
		return ferr
	}
	if topic, ok := h["Topic"]; ok && !webpushTopic.MatchString(topic) {
		const field = "message.webpush.headers"
		return errInvalidArgument(fmt.Sprintf("Invalid value at '%s' (Topic %q): must match %s", field, topic, webpushTopic), field)
	}
	const path = "message.webpush.fcm_options"
	opts, ferr := decodeObject(webpush.either("fcm_options", "fcmOptions"), path, nil)
	if ferr != nil {
		return ferr
	}
	link, ferr := opts.stringField("link", path)
	if ferr != nil || link == "" {
		return ferr
	}
	if u, err := url.Parse(link); err != nil || !strings.EqualFold(u.Scheme, "https") || u.Host == "" {
		return errInvalidArgument("Invalid value at 'message.webpush.fcm_options.link': HTTPS is required.", path+".link")
	}
	return nil
}

// analyticsLabel is FCM's pattern for fcm_options.analytics_label.
var analyticsLabel = regexp.MustCompile(`^[a-zA-Z0-9\-_.~%]{1,50}$`)

// validateFCMOptions checks the message's own fcm_options: only an
// analytics label, of FCM's pattern.
func validateFCMOptions(msg object) *fcmError {
	const path = "message.fcm_options"
	opts, ferr := decodeObject(msg.either("fcm_options", "fcmOptions"), path, func(k string) bool {
		return k == "analytics_label" || k == "analyticsLabel"
	})
	if ferr != nil {
		return ferr
	}
	var label string
	if raw := opts.either("analytics_label", "analyticsLabel"); !isNull(raw) {
		if label, ferr = (object{"analytics_label": raw}).stringField("analytics_label", path); ferr != nil {
			return ferr
		}
		if !analyticsLabel.MatchString(label) {
			return errInvalidArgument(fmt.Sprintf("Invalid value at '%s.analytics_label' (%q): must match %s", path, label, analyticsLabel),
				path+".analytics_label")
		}
	}
	return nil
}

// validateSize refuses a message whose payload is over FCM's 4,096 bytes,
// counted as Herald counts at accept (herald.FCMPayloadSize). FCM answers
// the generic INVALID_ARGUMENT, naming no field: nothing in it points at the
// token, so a sender sees a bad message, not a dead token. It runs after the
// other checks, which made sure both members hold strings only.
func validateSize(msg object) *fcmError {
	notification, _ := members(msg["notification"]) // absent: empty
	data, _ := members(msg["data"])
	if herald.FCMPayloadSize(notification.strings(), data.strings()) > herald.MaxFCMPayload {
		return errInvalidArgument("Request contains an invalid argument.", "")
	}
	return nil
}
