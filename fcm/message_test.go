package fcm

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestBuildMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		n    Notification
		want string
	}{
		{
			name: "TitleBodyOnly",
			n:    Notification{Title: "Hi", Body: "There"},
			want: `{"token":"tok","notification":{"title":"Hi","body":"There"}}`,
		},
		{
			name: "PushID",
			n:    Notification{Title: "Hi", Body: "There", PushID: "push_1"},
			want: `{"token":"tok","notification":{"title":"Hi","body":"There"},"data":{"pushId":"push_1"}}`,
		},
		{
			name: "Image",
			n:    Notification{Title: "Hi", Body: "There", ImageURL: "https://img.example/a.png"},
			want: `{"token":"tok","notification":{"title":"Hi","body":"There","image":"https://img.example/a.png"},` +
				`"android":{"notification":{"image":"https://img.example/a.png"}},` +
				`"apns":{"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"https://img.example/a.png"}}}`,
		},
		{
			name: "Badge",
			n:    Notification{Title: "Hi", Body: "There", Badge: true},
			want: `{"token":"tok","notification":{"title":"Hi","body":"There"},"apns":{"payload":{"aps":{"badge":1}}}}`,
		},
		{
			name: "HTTPSLink",
			n:    Notification{Title: "Hi", Body: "There", LinkURL: "https://example.com/x"},
			want: `{"token":"tok","notification":{"title":"Hi","body":"There"},"data":{"linkURL":"https://example.com/x"},` +
				`"webpush":{"fcm_options":{"link":"https://example.com/x"}}}`,
		},
		{
			name: "HTTPLinkDataOnly",
			n:    Notification{Title: "Hi", Body: "There", LinkURL: "http://example.com/x"},
			want: `{"token":"tok","notification":{"title":"Hi","body":"There"},"data":{"linkURL":"http://example.com/x"}}`,
		},
		{
			name: "AppLinkDataOnly",
			n:    Notification{Title: "Hi", Body: "There", LinkURL: "myapp://open/42"},
			want: `{"token":"tok","notification":{"title":"Hi","body":"There"},"data":{"linkURL":"myapp://open/42"}}`,
		},
		{
			name: "Everything",
			n: Notification{Title: "T", Body: "B", ImageURL: "https://i/x.png", LinkURL: "https://l/y",
				PushID: "push_2", Badge: true},
			want: `{"token":"tok","notification":{"title":"T","body":"B","image":"https://i/x.png"},` +
				`"data":{"linkURL":"https://l/y","pushId":"push_2"},"android":{"notification":{"image":"https://i/x.png"}},` +
				`"apns":{"payload":{"aps":{"badge":1,"mutable-content":1}},"fcm_options":{"image":"https://i/x.png"}},` +
				`"webpush":{"fcm_options":{"link":"https://l/y"}}}`,
		},
		{
			name: "Empty",
			n:    Notification{},
			want: `{"token":"tok"}`,
		},
		{
			name: "AnalyticsLabel",
			n:    Notification{Title: "Hi", RequestGroupID: "spring-sale_2025.v1~%20"},
			want: `{"token":"tok","notification":{"title":"Hi"},"fcm_options":{"analytics_label":"spring-sale_2025.v1~%20"}}`,
		},
		{
			name: "Tag",
			n:    Notification{Title: "Hi", PushID: "push_1", Tag: "push_1-7"},
			want: `{"token":"tok","notification":{"title":"Hi"},"data":{"pushId":"push_1"},` +
				`"android":{"notification":{"tag":"push_1-7"}},"apns":{"headers":{"apns-collapse-id":"push_1-7"}},` +
				`"webpush":{"headers":{"Topic":"push_1-7"}}}`,
		},
		{
			name: "TagWithEverything",
			n: Notification{Title: "T", ImageURL: "https://i/x.png", LinkURL: "https://l/y", Badge: true,
				Tag: "push_2"},
			want: `{"token":"tok","notification":{"title":"T","image":"https://i/x.png"},"data":{"linkURL":"https://l/y"},` +
				`"android":{"notification":{"image":"https://i/x.png","tag":"push_2"}},` +
				`"apns":{"headers":{"apns-collapse-id":"push_2"},"payload":{"aps":{"badge":1,"mutable-content":1}},"fcm_options":{"image":"https://i/x.png"}},` +
				`"webpush":{"headers":{"Topic":"push_2"},"fcm_options":{"link":"https://l/y"}}}`,
		},
		{
			name: "TTL",
			n:    Notification{Title: "Hi", HasTTL: true, TTL: 3600, Expires: 1_800_003_600},
			want: `{"token":"tok","notification":{"title":"Hi"},"android":{"ttl":"3600s"},"apns":{"headers":{"apns-expiration":"1800003600"}}}`,
		},
		{
			// 0 is "deliver now or never" to both services.
			name: "TTLZero",
			n:    Notification{Title: "Hi", HasTTL: true, Expires: 1_800_000_000},
			want: `{"token":"tok","notification":{"title":"Hi"},"android":{"ttl":"0s"},"apns":{"headers":{"apns-expiration":"0"}}}`,
		},
		{
			name: "High",
			n:    Notification{Title: "Your code", High: true},
			want: `{"token":"tok","notification":{"title":"Your code"},"android":{"priority":"HIGH"},"apns":{"headers":{"apns-priority":"10"}}}`,
		},
		{
			name: "HighWithTagAndTTL",
			n:    Notification{Title: "Hi", Tag: "push_4", HasTTL: true, TTL: 60, Expires: 1_800_000_060, High: true},
			want: `{"token":"tok","notification":{"title":"Hi"},"android":{"priority":"HIGH","ttl":"60s","notification":{"tag":"push_4"}},` +
				`"apns":{"headers":{"apns-collapse-id":"push_4","apns-expiration":"1800000060","apns-priority":"10"}},"webpush":{"headers":{"Topic":"push_4"}}}`,
		},
		{
			name: "TTLWithTagAndImage",
			n:    Notification{Title: "Hi", ImageURL: "https://i/x.png", Tag: "push_3", HasTTL: true, TTL: 60, Expires: 1_800_000_060},
			want: `{"token":"tok","notification":{"title":"Hi","image":"https://i/x.png"},` +
				`"android":{"ttl":"60s","notification":{"image":"https://i/x.png","tag":"push_3"}},` +
				`"apns":{"headers":{"apns-collapse-id":"push_3","apns-expiration":"1800000060"},"payload":{"aps":{"mutable-content":1}},"fcm_options":{"image":"https://i/x.png"}},` +
				`"webpush":{"headers":{"Topic":"push_3"}}}`,
		},
		{
			// APNs takes at most 64 bytes, a web-push Topic 32 characters of
			// the URL-safe base64 alphabet: another tag is Android's only.
			name: "TagNotATopic",
			n:    Notification{Title: "Hi", Tag: "sale#1"},
			want: `{"token":"tok","notification":{"title":"Hi"},"android":{"notification":{"tag":"sale#1"}}}`,
		},
		{
			name: "TagTooLongForATopic",
			n:    Notification{Title: "Hi", Tag: strings.Repeat("a", 33)},
			want: `{"token":"tok","notification":{"title":"Hi"},"android":{"notification":{"tag":"` + strings.Repeat("a", 33) + `"}}}`,
		},
		{
			name: "RequestGroupIDNotALabel",
			n:    Notification{Title: "Hi", RequestGroupID: "sale#2025!"},
			want: `{"token":"tok","notification":{"title":"Hi"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(BuildMessage("tok", tt.n))
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("BuildMessage(%+v)\n got %s\nwant %s", tt.n, got, tt.want)
			}
		})
	}
}

func TestAnalyticsLabel(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id, want string
	}{
		{"group-1", "group-1"},
		{"A.b_c~d%e-9", "A.b_c~d%e-9"},
		{"", ""},
		{"has space", ""},
		{"sale#2025", ""},
		{"quote'd", ""},
		{"slash/x", ""},
		{"plus+x", ""},
		{"colon:x", ""},
		{"한글라벨", ""},
		{"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwx"},
		{"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxy", ""},
	} {
		if got := AnalyticsLabel(tt.id); got != tt.want {
			t.Errorf("AnalyticsLabel(%q): got %q, want %q", tt.id, got, tt.want)
		}
	}
}

// TestWebpushTopic: a tag is a web-push Topic (and an APNs collapse id)
// exactly when it is 1 to 32 characters of the URL-safe base64 alphabet
// (RFC 8030), the rule written as a regular expression.
func TestWebpushTopic(t *testing.T) {
	t.Parallel()
	rule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)
	tags := []string{"", "a", "push_3", "push_0123456789abcdefghijkl-199", "Z9_-", strings.Repeat("a", 32), strings.Repeat("a", 33),
		"sale#1", "a b", "a.b", "a/b", "a+b", "a=b", "가", "a\x00", "\x00herald-tag\x00", "push_3\n", "@", "[", "`", "{", "/", ":"}
	for c := range 256 {
		tags = append(tags, string(rune(c)), "a"+string([]byte{byte(c)}))
	}
	for _, tag := range tags {
		if got, want := webpushTopic(tag), rule.MatchString(tag); got != want {
			t.Errorf("webpushTopic(%q) = %v, want %v", tag, got, want)
		}
	}
}
