package webhook_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/heraldpush/herald/webhook"
)

func TestBatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		users int
		want  []int // batch sizes
	}{
		{users: 0, want: nil},
		{users: 1, want: []int{1}},
		{users: 1000, want: []int{1000}},
		{users: 1001, want: []int{1000, 1}},
		{users: 2500, want: []int{1000, 1000, 500}},
	}
	for _, tt := range tests {
		users := make([]webhook.User, tt.users)
		for i := range users {
			users[i] = webhook.User{UserID: strconv.Itoa(i), Reason: webhook.ReasonNoToken}
		}
		got := webhook.Batches(users, webhook.MaxUsersPerEvent)
		if len(got) != len(tt.want) {
			t.Errorf("%d users: got %d batches, want %d", tt.users, len(got), len(tt.want))
			continue
		}
		next := 0
		for i, b := range got {
			if len(b) != tt.want[i] {
				t.Errorf("%d users, batch %d: got %d users, want %d", tt.users, i, len(b), tt.want[i])
			}
			for _, u := range b {
				if u.UserID != strconv.Itoa(next) {
					t.Fatalf("%d users: got user %s, want %d (order lost)", tt.users, u.UserID, next)
				}
				next++
			}
		}
	}
}

func TestBatchesDefaultLimit(t *testing.T) {
	t.Parallel()
	got := webhook.Batches(make([]webhook.User, 1001), 0)
	if len(got) != 2 {
		t.Errorf("got %d batches, want 2", len(got))
	}
}

func TestEventJSON(t *testing.T) {
	t.Parallel()
	ev := webhook.Event{
		Type:      webhook.EventUndeliverable,
		Timestamp: "2025-06-11T09:30:00Z",
		Data: webhook.Undeliverable{
			AppID: "app_1", PushID: "push_1", RequestGroupID: "group1",
			Users: []webhook.User{{UserID: "u1", Reason: webhook.ReasonTokenExpired}},
		},
	}
	got, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"push.undeliverable","timestamp":"2025-06-11T09:30:00Z","data":{"appId":"app_1","pushId":"push_1","requestGroupId":"group1","users":[{"userId":"u1","reason":"TOKEN_EXPIRED"}]}}`
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
