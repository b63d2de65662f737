package fcm

import (
	"encoding/json"
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
