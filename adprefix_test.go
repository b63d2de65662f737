package herald

import (
	"testing"
	"time"
)

func TestAdPrefixProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		title string
		bad   bool
	}{
		{"(광고) Sale", false},
		{"(광고)Sale", false},
		{"  (광고) leading spaces", false},
		{"Sale", true},
		{"Sale (광고)", true},
		{"[광고] Sale", true},
		{"(광 고) Sale", true},
		{"", true},
	}
	for _, tt := range tests {
		d, bad := AdPrefixProblem("messages[3].title", tt.title)
		if bad != tt.bad || bad && (d.Field != "messages[3].title" || d.Reason == "") {
			t.Errorf("AdPrefixProblem(%q): got %+v %v, want a problem %v on messages[3].title", tt.title, d, bad, tt.bad)
		}
	}
}

func TestMarketingRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Push
		want string
	}{
		{"Option", Push{Marketing: true, IsMarketingOpt: true, Content: Content{Title: "(광고) x"}}, MarketingByOption},
		{"Title", Push{Marketing: true, Content: Content{Title: "(광고) x"}}, MarketingByTitle},
		{"MessageTitle", Push{Kind: KindMessages, Marketing: true}, MarketingByTitle},
		{"Plain", Push{Content: Content{Title: "x"}}, ""},
	}
	for _, tt := range tests {
		if got := tt.p.MarketingRule(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestPushChangeAdPrefix: a new title of a push marked options.isMarketing
// keeps the prefix when the app requires it; other edits and other pushes
// are not judged.
func TestPushChangeAdPrefix(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 11, 12, 0, 0, 0, time.UTC)
	at := now.Add(time.Hour)
	scheduled := func(opt bool) *Push {
		return &Push{Status: StatusScheduled, ScheduledAt: &at, IsMarketingOpt: opt, Marketing: true, Content: Content{Title: "(광고) a", Content: "c"}}
	}
	plain, content := "b", "new body"
	tests := []struct {
		name    string
		p       *Push
		c       PushChange
		wantErr bool
	}{
		{"ErrDropsPrefix", scheduled(true), PushChange{Title: &plain, AdPrefixRequired: true}, true},
		{"CheckOff", scheduled(true), PushChange{Title: &plain}, false},
		{"NotByOption", scheduled(false), PushChange{Title: &plain, AdPrefixRequired: true}, false},
		{"TitleUntouched", scheduled(true), PushChange{Content: &content, AdPrefixRequired: true}, false},
	}
	for _, tt := range tests {
		_, err := tt.c.Apply(tt.p, now)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: got %v, want an error %v", tt.name, err, tt.wantErr)
		}
	}
}
