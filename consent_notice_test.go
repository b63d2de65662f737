package herald_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestNoticeContent: the default result notice, rendered with the app's
// name, the date in its zone and 동의/거부, exactly as DESIGN writes it.
func TestNoticeContent(t *testing.T) {
	t.Parallel()
	a := herald.App{Name: "마이샵", TimeZone: "Asia/Seoul"}
	at := time.Date(2026, 3, 1, 16, 30, 0, 0, time.UTC) // 2 March, 01:30 in Seoul
	got := a.NoticeContent(herald.Consent{Marketing: true}, at)
	want := herald.Content{Title: "[마이샵] 광고성 정보 수신 동의 결과 안내",
		Content: "2026-03-02 광고성 정보 수신 동의, 야간(21시~08시) 수신 거부 처리되었습니다."}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	a.ConsentNotice = herald.ConsentNotice{Title: "{app}", Content: "{marketingNight}/{marketing} {date}"}
	if got := a.NoticeContent(herald.Consent{Marketing: true, MarketingNight: true}, at); got.Content != "동의/동의 2026-03-02" {
		t.Errorf("custom: got %q", got.Content)
	}
}

// TestShownContent: a re-confirmation push, which stores the app's
// templates, is shown with the placeholders every notice shares filled in
// as each device got them ({app}, {optOut}), each user's own left as
// written; any other push is shown as stored.
func TestShownContent(t *testing.T) {
	t.Parallel()
	a := herald.App{Name: "Shop", TimeZone: "Asia/Seoul", AdOptOut: "수신거부: 설정"}
	r := a.Reconfirmation.WithDefaults()
	p := herald.Push{Kind: herald.KindReconfirmation, Content: herald.Content{Title: r.Title, Content: r.Content, LinkURL: "https://x.example"}}
	got := a.ShownContent(p)
	sent := a.ReconfirmationContent(herald.Consent{Marketing: true}, time.Date(2025, 1, 2, 3, 0, 0, 0, time.UTC))
	if got.Title != sent.Title || got.Title != "[Shop] 광고성 정보 수신 동의 확인 안내" || got.LinkURL != "https://x.example" {
		t.Errorf("title: got %+v, want %q as sent", got, sent.Title)
	}
	if want := "{consentDate}에 동의하신 광고성 정보 수신 상태를 안내합니다: 수신 {marketing}, 야간(21시~08시) 수신 {marketingNight}. 수신거부: 설정"; got.Content != want {
		t.Errorf("content: got %q, want %q", got.Content, want)
	}
	for _, k := range []herald.PushKind{herald.KindUsers, herald.KindConsentNotice, herald.KindMessages} {
		p := herald.Push{Kind: k, Content: herald.Content{Title: "[{app}] as sent", Content: "{optOut}"}}
		if got := a.ShownContent(p); got != p.Content {
			t.Errorf("%s push: got %+v, want its content as stored", k, got)
		}
	}
}

// TestNoticeTemplates: each template names only its placeholders.
func TestNoticeTemplates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		title, content string
		leadDays       int
		want           []string
	}{
		{"{app}", "{consentDate} {optOut} {marketing} {marketingNight}", 30, nil},
		{"{app} {date}", "x", 30, []string{"reconfirmation.title"}},
		{"{ app}", "{}", 30, []string{"reconfirmation.title", "reconfirmation.content"}},
		{"", strings.Repeat("가", 1001), 0, []string{"reconfirmation.title", "reconfirmation.content", "reconfirmation.leadDays"}},
		{"t", "c", 61, []string{"reconfirmation.leadDays"}},
	} {
		d := herald.Reconfirmation{Title: tc.title, Content: tc.content, LeadDays: tc.leadDays}.Problems("reconfirmation")
		var got []string
		for _, x := range d {
			got = append(got, x.Field)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%q %q %d: got %v, want %v", tc.title, tc.content, tc.leadDays, d, tc.want)
		}
	}
	if d := (herald.ConsentNotice{Title: "{app}", Content: "{optOut}"}).Problems("consentNotice"); len(d) != 1 || d[0].Field != "consentNotice.content" {
		t.Errorf("notice with {optOut}: got %v, want consentNotice.content refused", d)
	}
}

// TestDerivedID: the same cause gives the same id; another, another.
func TestDerivedID(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := herald.DerivedID("push_", at, "x/1"), herald.DerivedID("push_", at, "x/1")
	if a != b || a == herald.DerivedID("push_", at, "x/2") || len(a) != len(herald.NewID("push_", at)) {
		t.Errorf("got %s, %s", a, b)
	}
}

// TestImportSkipReason: future dates, dates before the trail's last, and
// night consent without marketing consent.
func TestImportSkipReason(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	last := now.Add(-time.Hour)
	for _, tc := range []struct {
		at   time.Time
		last *time.Time
		pair herald.Consent
		want string
	}{
		{now, nil, herald.Consent{}, ""}, {now.Add(time.Second), nil, herald.Consent{}, herald.SkipFuture},
		{last, &last, herald.Consent{Marketing: true}, ""}, {last.Add(-time.Millisecond), &last, herald.Consent{}, herald.SkipBeforeTrail},
		{now, nil, herald.Consent{Marketing: true, MarketingNight: true}, ""},
		{now, nil, herald.Consent{MarketingNight: true}, herald.SkipPair},
	} {
		if got := herald.ImportSkipReason(herald.ConsentImport{Consent: tc.pair, At: tc.at}, now, tc.last); got != tc.want {
			t.Errorf("at %v last %v: got %q, want %q", tc.at, tc.last, got, tc.want)
		}
	}
}

// TestReconfirmedRecords: a user reached by a re-confirmation notice gets
// a record for whichever pair held the marketing consent: its own, or
// (consent given on a device before it was mapped) each device's, one
// event in all; nothing when no pair holds it any more.
func TestReconfirmedRecords(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	day, night, none := herald.Consent{Marketing: true}, herald.Consent{Marketing: true, MarketingNight: true}, herald.Consent{}
	dev := func(id string, c herald.Consent) herald.Device { return herald.Device{ID: id, Consent: c} }
	type want struct {
		device string
		pair   herald.Consent
		notify bool
	}
	for _, tc := range []struct {
		name    string
		user    herald.Consent
		devices []herald.Device
		want    []want
	}{
		{"UsersOwn", night, []herald.Device{dev("d1", night), dev("d2", day)}, []want{{"", night, true}}},
		{"DevicesOnly", none, []herald.Device{dev("d1", day), dev("d2", none), dev("d3", night)},
			[]want{{"d1", day, true}, {"d3", night, false}}},
		{"NoneHeld", none, []herald.Device{dev("d1", none)}, nil},
		{"NoDevices", none, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := herald.ReconfirmedRecords(tc.user, tc.devices, at)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d records %+v, want %d", len(got), got, len(tc.want))
			}
			for i, r := range got {
				w := tc.want[i]
				device := ""
				if r.DeviceID != nil {
					device = *r.DeviceID
				}
				if device != w.device || r.From != w.pair || r.To != w.pair || r.Notify != w.notify || !r.Confirms ||
					r.Source != herald.SourceReconfirmation || !r.At.Equal(at) {
					t.Errorf("record %d: got %+v (device %q), want device %q %v→%v notify %v, confirming", i, r, device, w.device, w.pair, w.pair, w.notify)
				}
			}
		})
	}
}
