package herald

import (
	"errors"
	"maps"
	"testing"
	"time"
)

// TestPushChangeApplyFrom: an edit records the old value of each field it
// changes beside the new one, in the same text form.
func TestPushChangeApplyFrom(t *testing.T) {
	t.Parallel()
	sendAt := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	at := sendAt
	p := Push{Status: StatusScheduled, ScheduledAt: &at, Content: Content{Title: "old title", Content: "c", LinkURL: "https://a.example"}}
	title, link, badge, later := "new title", "", true, sendAt.Add(time.Hour)
	if _, err := (PushChange{Title: &title, LinkURL: &link, Badge: &badge, ScheduledAt: &later}).Apply(&p, sendAt.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	e := p.Edits[0]
	wantTo := map[string]string{"title": "new title", "linkURL": "", "isUsingBadge": "true", "scheduledAt": "2026-12-02T00:00:00Z"}
	wantFrom := map[string]string{"title": "old title", "linkURL": "https://a.example", "isUsingBadge": "false", "scheduledAt": "2026-12-01T23:00:00Z"}
	if !maps.Equal(e.Changes, wantTo) || !maps.Equal(e.From, wantFrom) {
		t.Fatalf("got changes %v from %v, want %v from %v", e.Changes, e.From, wantTo, wantFrom)
	}
}

// TestPushChangeKeepsLocalizedMarketing: a push that is marketing because
// a localized entry's title starts with (광고) stays marketing after an
// edit of anything else, and keeps its footer: an ad to the devices of
// that language is judged by their consent whatever the edit.
func TestPushChangeKeepsLocalizedMarketing(t *testing.T) {
	t.Parallel()
	sendAt := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	at := sendAt
	app := App{AdSenderName: "(주)헤럴드", AdSenderContact: "080-123-4567", AdOptOut: "설정 > 알림"}
	p := Push{Status: StatusScheduled, ScheduledAt: &at, Content: Content{Title: "Weekend", Content: "c"},
		Localized: []LocalizedEntry{{Lang: "ko", Title: "(광고) 주말 세일", Content: "c"}}, Marketing: true, AdFooter: "footer"}
	link := "https://a.example"
	for _, c := range []PushChange{{LinkURL: &link}, {LinkURL: &link, App: &app}} {
		q := p
		if _, err := c.Apply(&q, sendAt.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if !q.Marketing || q.AdFooter != "footer" {
			t.Errorf("edited with the app %v: got marketing %v, footer %q; want still marketing with its footer", c.App != nil, q.Marketing, q.AdFooter)
		}
	}
}

// TestPushChangeHighStaysNonMarketing: an edit that would make a
// high-priority push marketing (a (광고) title) is refused naming the
// title, the push unchanged; a normal push takes it.
func TestPushChangeHighStaysNonMarketing(t *testing.T) {
	t.Parallel()
	sendAt := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	ad := "(광고) Sale"
	for _, priority := range []Priority{PriorityHigh, PriorityNormal} {
		at := sendAt
		p := Push{Status: StatusScheduled, ScheduledAt: &at, Content: Content{Title: "Your code", Content: "c"}, Priority: priority}
		_, err := (PushChange{Title: &ad}).Apply(&p, sendAt.Add(-time.Hour))
		var e *Error
		switch {
		case priority == PriorityHigh && (!errors.As(err, &e) || len(e.Details) != 1 || e.Details[0].Field != "title" || p.Content.Title != "Your code"):
			t.Errorf("high: got %v, title %q; want refused naming title, unchanged", err, p.Content.Title)
		case priority == PriorityNormal && (err != nil || !p.Marketing):
			t.Errorf("normal: got %v, marketing %v; want the edit taken, marketing", err, p.Marketing)
		}
	}
}
