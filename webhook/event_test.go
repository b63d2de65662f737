package webhook_test

import (
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/webhook"
)

func TestBody(t *testing.T) {
	t.Parallel()
	r := herald.UndeliverableReport{
		ID: "msg_1", At: time.Date(2025, 6, 11, 9, 30, 0, 0, time.UTC), AppID: "app_1", PushID: "push_1",
		RequestGroupID: "group1", Users: []herald.Unreachable{{UserID: "u1", Reason: herald.ReasonTokenExpired}},
	}
	got, err := webhook.Body(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"push.undeliverable","timestamp":"2025-06-11T09:30:00Z","data":{"appId":"app_1","pushId":"push_1","requestGroupId":"group1","users":[{"userId":"u1","reason":"TOKEN_EXPIRED"}]}}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	r.RequestGroupID = ""
	got, _ = webhook.Body(r)
	want = `{"type":"push.undeliverable","timestamp":"2025-06-11T09:30:00Z","data":{"appId":"app_1","pushId":"push_1","requestGroupId":null,"users":[{"userId":"u1","reason":"TOKEN_EXPIRED"}]}}`
	if string(got) != want {
		t.Errorf("without a group: got %s, want %s", got, want)
	}
}

func TestConsentBody(t *testing.T) {
	t.Parallel()
	user, device := "u1", "d1"
	r := herald.ConsentRecord{
		ID: 7, AppID: "app_1", UserID: &user, DeviceID: &device, Seq: 3, At: time.Date(2025, 6, 11, 9, 30, 5, 123e6, time.UTC),
		Source: herald.SourceSDK, From: herald.Consent{Marketing: true}, To: herald.Consent{Marketing: true, MarketingNight: true},
	}
	got, err := webhook.ConsentBody(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"consent.changed","timestamp":"2025-06-11T09:30:05Z","data":{"appId":"app_1","userId":"u1","marketing":true,"marketingNight":true,"source":"sdk","changedAt":"2025-06-11T09:30:05.123Z"}}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	r.UserID = nil
	if _, err := webhook.ConsentBody(r); err == nil {
		t.Error("a record without a user: got nil, want an error")
	}
}
