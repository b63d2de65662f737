package herald

import (
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
