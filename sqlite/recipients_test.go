package sqlite_test

import (
	"context"
	"testing"
)

// TestRecipientsOfOlderPush: a push accepted before recipients were kept
// with it still reads its users from their rows, messages included.
func TestRecipientsOfOlderPush(t *testing.T) {
	t.Parallel()
	db, app := setup(t)
	ctx := context.Background()
	if _, err := db.Writer.Exec(`INSERT INTO pushes (id, app_id, kind, status, marketing, is_marketing_opt, requested_users,
		server_actions_half, created_at) VALUES ('push_old', ?, 'messages', 'done', 0, 0, 2, 2, 0)`, app.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Writer.Exec(`INSERT INTO push_recipients (push_id, idx, user_id, title, content, link_url, image_url)
		VALUES ('push_old', 1, 'u2', NULL, NULL, NULL, NULL), ('push_old', 0, 'u1', 't', 'c', '', '')`); err != nil {
		t.Fatal(err)
	}
	rs, err := db.Recipients(ctx, "push_old")
	if err != nil || len(rs) != 2 || rs[0].UserID != "u1" || rs[0].Content == nil || rs[0].Content.Title != "t" ||
		rs[1].UserID != "u2" || rs[1].Content != nil {
		t.Errorf("got (%+v, %v), want u1 with its message, then u2", rs, err)
	}
}
