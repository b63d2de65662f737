package herald

import (
	"testing"
	"time"
)

func TestApprovalNeeds(t *testing.T) {
	users := func(n int, marketing bool) Push {
		return Push{Kind: KindUsers, RequestedUsers: n, Marketing: marketing}
	}
	for _, tc := range []struct {
		name string
		set  ApprovalSetting
		p    Push
		want bool
	}{
		{"OffByDefault", ApprovalSetting{}, Push{Kind: KindAll}, false},
		{"Off", ApprovalSetting{Mode: ApprovalOff}, Push{Kind: KindAll}, false},
		{"AllTakesUsers", ApprovalSetting{Mode: ApprovalAll}, users(1, false), true},
		{"AllBelowMinUsers", ApprovalSetting{Mode: ApprovalAll, MinUsers: 10}, users(9, false), false},
		{"AllAtMinUsers", ApprovalSetting{Mode: ApprovalAll, MinUsers: 10}, users(10, false), true},
		{"MessagesAtMinUsers", ApprovalSetting{Mode: ApprovalAll, MinUsers: 2}, Push{Kind: KindMessages, RequestedUsers: 2}, true},
		{"AdsTakesMarketing", ApprovalSetting{Mode: ApprovalAds}, users(1, true), true},
		{"AdsLeavesOthers", ApprovalSetting{Mode: ApprovalAds}, users(1, false), false},
		{"AdsMarketingBroadAlways", ApprovalSetting{Mode: ApprovalAds, MinUsers: 1000}, Push{Kind: KindTopic, Marketing: true}, true},
		{"BroadTakesAll", ApprovalSetting{Mode: ApprovalBroad, MinUsers: 1000}, Push{Kind: KindAll}, true},
		{"BroadTakesTopic", ApprovalSetting{Mode: ApprovalBroad}, Push{Kind: KindTopic}, true},
		{"BroadTakesSegment", ApprovalSetting{Mode: ApprovalBroad}, Push{Kind: KindSegment}, true},
		{"BroadLeavesUsers", ApprovalSetting{Mode: ApprovalBroad}, users(500, true), false},
		{"NeverATestPushToAToken", ApprovalSetting{Mode: ApprovalAll}, Push{Kind: KindToken, Token: "t", RequestedUsers: 1}, false},
		{"NeverANotice", ApprovalSetting{Mode: ApprovalAll}, Push{Kind: KindConsentNotice, RequestedUsers: 1}, false},
		{"NeverAReconfirmation", ApprovalSetting{Mode: ApprovalAll}, Push{Kind: KindReconfirmation, RequestedUsers: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.set.Needs(tc.p); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestApprovalSettingProblems(t *testing.T) {
	for _, tc := range []struct {
		set   ApprovalSetting
		field string
	}{
		{ApprovalSetting{Mode: "some"}, "approval.mode"},
		{ApprovalSetting{Mode: ApprovalAll, MinUsers: -1}, "approval.minUsers"},
		{ApprovalSetting{Mode: ApprovalAll, MinUsers: MaxApprovalMinUsers + 1}, "approval.minUsers"},
	} {
		d := tc.set.Problems("approval")
		if len(d) != 1 || d[0].Field != tc.field {
			t.Errorf("%+v: got %v, want one problem naming %s", tc.set, d, tc.field)
		}
	}
	if d := (ApprovalSetting{Mode: ApprovalBroad, MinUsers: MaxApprovalMinUsers}).Problems("approval"); d != nil {
		t.Errorf("a valid setting: got %v, want none", d)
	}
}

// TestNewPushAwaitsApproval: a push the setting takes is made awaiting
// approval, uncharged, its request recorded; a test push is not.
func TestNewPushAwaitsApproval(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	app := App{ID: "app_1", TimeZone: DefaultTimeZone, Approval: ApprovalSetting{Mode: ApprovalAll}}
	req := PushRequest{Kind: KindUsers, Content: Content{Title: "t", Content: "c"}, Recipients: []Recipient{{UserID: "u1"}, {UserID: "u2"}}}
	p, err := NewPush(app, req, now)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusAwaitingApproval || p.ServerActionsHalf != 0 || p.Ledger != nil || len(p.Approvals) != 1 ||
		p.Approvals[0].Action != ApprovalRequested || !p.ApprovalDeadline().Equal(now.Add(24*time.Hour)) {
		t.Errorf("got %+v, want awaiting approval, uncharged, requested now, lapsing in 24 h", p)
	}
	req.Test = true
	if p, _ := NewPush(app, req, now); p.Status != StatusSending || p.Approvals != nil {
		t.Errorf("test push: got %s with approvals %v, want sending without any", p.Status, p.Approvals)
	}
}
