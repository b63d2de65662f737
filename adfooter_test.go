package herald

import (
	"strings"
	"testing"
	"time"
)

func TestAppAdFooter(t *testing.T) {
	t.Parallel()
	full := App{AdSenderName: "(주)헤럴드", AdSenderContact: "080-123-4567", AdOptOut: "수신거부: 마이 > 설정"}
	tests := []struct {
		name    string
		app     App
		footer  string
		missing []string
	}{
		{"Full", full, "\n(주)헤럴드 080-123-4567\n수신거부: 마이 > 설정", nil},
		{"Verbatim", App{AdSenderName: " A ", AdSenderContact: "b\nc", AdOptOut: " d"}, "\n A  b\nc\n d", nil},
		{"NoneSet", App{}, "", []string{"app.adSender.name", "app.adSender.contact", "app.adOptOut"}},
		{"NoContact", App{AdSenderName: "A", AdOptOut: "d"}, "", []string{"app.adSender.contact"}},
		{"CheckOff", App{NoAdPrefixCheck: true, AdSenderName: "A", AdSenderContact: "b", AdOptOut: "d"}, "", nil},
		{"CheckOffUnset", App{NoAdPrefixCheck: true}, "", nil},
	}
	for _, tt := range tests {
		footer, missing := tt.app.AdFooter()
		var fields []string
		for _, d := range missing {
			fields = append(fields, d.Field)
			if !strings.Contains(d.Reason, "art. 50(4)") {
				t.Errorf("%s: reason %q does not cite art. 50(4)", tt.name, d.Reason)
			}
		}
		if footer != tt.footer || strings.Join(fields, " ") != strings.Join(tt.missing, " ") {
			t.Errorf("%s: got (%q, %v), want (%q, %v)", tt.name, footer, fields, tt.footer, tt.missing)
		}
	}
}

func TestAdSettingProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v   string
		bad bool
	}{
		{"a", false}, {strings.Repeat("가", 10), false}, {strings.Repeat("가", 11), true},
		{"", true}, {" \n\t", true}, {"\xff", true},
	}
	for _, tt := range tests {
		if got := AdSettingProblem(tt.v, 10); (got != "") != tt.bad {
			t.Errorf("AdSettingProblem(%q): got %q, want a problem %v", tt.v, got, tt.bad)
		}
	}
}

// TestPushSent: the footer is appended to marketing messages only, the
// content itself untouched; on /messages each message on its own.
func TestPushSent(t *testing.T) {
	t.Parallel()
	const f = "\nCo 080\noff"
	ad := Push{Kind: KindUsers, Marketing: true, AdFooter: f, Content: Content{Title: "(광고) t", Content: "body"}}
	if got := ad.Sent(Recipient{UserID: "u"}).Content; got != "body"+f {
		t.Errorf("ad: got %q, want the body and the footer", got)
	}
	if ad.Content.Content != "body" {
		t.Errorf("content changed: %q", ad.Content.Content)
	}
	opt := Push{Kind: KindUsers, Marketing: true, IsMarketingOpt: true, AdFooter: f, Content: Content{Title: "t", Content: "body"}}
	if got := opt.Sent(Recipient{}).Content; got != "body"+f {
		t.Errorf("options.isMarketing: got %q", got)
	}
	msgs := Push{Kind: KindMessages, Marketing: true, AdFooter: f}
	plain := Recipient{UserID: "a", Content: &Content{Title: "hi", Content: "one"}}
	adMsg := Recipient{UserID: "b", Content: &Content{Title: "(광고) sale", Content: "two"}}
	if got := msgs.Sent(plain).Content; got != "one" {
		t.Errorf("plain message: got %q, want it unchanged", got)
	}
	if got := msgs.Sent(adMsg).Content; got != "two"+f {
		t.Errorf("ad message: got %q", got)
	}
	none := Push{Kind: KindUsers, Content: Content{Title: "t", Content: "body"}}
	if got := none.Sent(Recipient{}).Content; got != "body" || none.AdFooterShown() != nil {
		t.Errorf("plain push: got %q", got)
	}
}

// TestFixAdFooter: fixed from the app on a marketing push, refused when a
// setting is unset (push unchanged), none on a plain push.
func TestFixAdFooter(t *testing.T) {
	t.Parallel()
	app := App{AdSenderName: "Co", AdSenderContact: "080", AdOptOut: "off"}
	p := Push{Kind: KindTopic, Marketing: true, Content: Content{Title: "(광고) t", Content: "c"}}
	if err := p.FixAdFooter(app, nil); err != nil || p.AdFooter != "\nCo 080\noff" {
		t.Errorf("got (%q, %v), want the footer", p.AdFooter, err)
	}
	q := Push{Kind: KindAll, Marketing: true, Content: Content{Title: "(광고) t", Content: "c"}}
	if err := q.FixAdFooter(App{}, nil); err == nil || q.AdFooter != "" {
		t.Errorf("unset: got (%q, %v), want refused", q.AdFooter, err)
	}
	plain := Push{Kind: KindAll, Content: Content{Title: "t", Content: "c"}}
	if err := plain.FixAdFooter(App{}, nil); err != nil || plain.AdFooter != "" {
		t.Errorf("plain: got (%q, %v), want no footer and no error", plain.AdFooter, err)
	}
}

// TestPushChangeAdFooter: an edit that makes a scheduled push an ad takes
// the app's footer, refused (push unchanged) while a setting is unset or
// when the footer takes it over FCM's limit; an ad keeps the footer it was
// accepted with.
func TestPushChangeAdFooter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 11, 12, 0, 0, 0, time.UTC)
	at := now.Add(time.Hour)
	plain := func() *Push {
		return &Push{Kind: KindUsers, Status: StatusScheduled, ScheduledAt: &at, Content: Content{Title: "hi", Content: "c"}}
	}
	ad, unset := "(광고) sale", App{}
	app := App{AdSenderName: "Co", AdSenderContact: "080", AdOptOut: "off"}

	p := plain()
	if _, err := (PushChange{Title: &ad, App: &unset}).Apply(p, now); err == nil || p.Content.Title != "hi" || p.AdFooter != "" {
		t.Errorf("made an ad without settings: got %v, %+v; want refused, unchanged", err, p)
	}
	if _, err := (PushChange{Title: &ad, App: &app}).Apply(p, now); err != nil || p.AdFooter != "\nCo 080\noff" || !p.Marketing {
		t.Errorf("made an ad: got %v, footer %q", err, p.AdFooter)
	}
	other := App{AdSenderName: "New", AdSenderContact: "1", AdOptOut: "x"}
	body := "new body"
	if _, err := (PushChange{Content: &body, App: &other}).Apply(p, now); err != nil || p.AdFooter != "\nCo 080\noff" {
		t.Errorf("edited ad: got %v, footer %q; want the one it had", err, p.AdFooter)
	}
	long := strings.Repeat("y", MaxFCMPayload-(Content{Title: ad, Content: ""}).FCMPayloadSize()-2)
	if _, err := (PushChange{Content: &long, App: &app}).Apply(p, now); err == nil || p.Content.Content != body {
		t.Errorf("a body that fits only without the footer: got %v, content %d bytes; want refused", err, len(p.Content.Content))
	}
	title := "hello"
	if _, err := (PushChange{Title: &title, App: &app}).Apply(p, now); err != nil || p.AdFooter != "" || p.Marketing {
		t.Errorf("made plain: got %v, footer %q", err, p.AdFooter)
	}
}
