package herald

import (
	"reflect"
	"testing"
	"time"
)

func TestParseRetentionDays(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"31", 31, true}, {"400", 400, true}, {" 3650 ", 3650, true},
		{"30", 0, false}, {"0", 0, false}, {"-400", 0, false}, {"400.5", 0, false}, {"", 0, false}, {"4e2", 0, false},
	} {
		got, err := ParseRetentionDays(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseRetentionDays(%q): got (%d, %v), want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestExpireEdits: an expired push's edit trail keeps what changed and
// when, and the values of fields that are not its body, but not the text.
func TestExpireEdits(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	edits := []Edit{
		{At: at, Changes: map[string]string{"title": "new", "content": "body", "scheduledAt": "2026-02-01T00:00:00Z"},
			From: map[string]string{"title": "old", "linkURL": "https://a.example", "imageURL": "https://i.example/x.png"}},
		{At: at, Changes: map[string]string{"isUsingBadge": "true"}},
		{At: at, DeferredCancelled: &DeferredCancel{Tokens: 3}},
	}
	want := []Edit{
		{At: at, Changes: map[string]string{"title": "", "content": "", "scheduledAt": "2026-02-01T00:00:00Z"},
			From: map[string]string{"title": "", "linkURL": "", "imageURL": ""}},
		{At: at, Changes: map[string]string{"isUsingBadge": "true"}},
		{At: at, DeferredCancelled: &DeferredCancel{Tokens: 3}},
	}
	if got := ExpireEdits(edits); !reflect.DeepEqual(got, want) {
		t.Errorf("ExpireEdits:\n got %+v\nwant %+v", got, want)
	}
	if edits[0].Changes["title"] != "new" {
		t.Errorf("ExpireEdits changed its argument: %+v", edits[0])
	}
}
