package request_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/request"
)

// TestReadPush: ReadPush, which the Server API's push endpoints and the
// dashboard's compose page both read through, applies the endpoint's gate
// and its body limit itself, reads the recipients a body names (a user
// named twice once) and refuses what the endpoint refuses, naming the
// field.
func TestReadPush(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)
	app := herald.App{ID: "app", Registered: true, FCMCredentials: []byte("sa")}
	noFCM := app
	noFCM.FCMCredentials = nil
	over := `{"userIds":["u1"],"title":"t","content":"` + strings.Repeat("x", int(request.PushLimit(herald.KindUsers))) + `"}`
	tests := []struct {
		name    string
		app     herald.App
		kind    herald.PushKind
		body    string
		wantErr error
		// wantDetail is the one detail of an ErrInvalidRequest.
		wantDetail herald.Detail
		wantUsers  []string
	}{
		{name: "Users", app: app, kind: herald.KindUsers, body: `{"userIds":["u1",2,"u1"],"title":"t","content":"c"}`,
			wantUsers: []string{"u1", "2"}},
		{name: "Topic", app: app, kind: herald.KindTopic, body: `{"topic":"news","title":"t","content":"c"}`},
		{name: "ErrAppNotFound", app: herald.App{ID: "app"}, kind: herald.KindUsers, body: `{}`, wantErr: herald.ErrAppNotFound},
		{name: "ErrNoFCM", app: noFCM, kind: herald.KindAll, body: `{}`, wantErr: herald.ErrNoFCM},
		{name: "ErrOverLimit", app: app, kind: herald.KindUsers, body: over, wantErr: herald.ErrInvalidRequest,
			wantDetail: herald.Detail{Field: "body", Reason: fmt.Sprintf("must be at most %d bytes", request.PushLimit(herald.KindUsers))}},
		{name: "ErrNoScheduleOnMessages", app: app, kind: herald.KindMessages,
			body:    `{"messages":[{"userId":"u1","title":"t","content":"c"}],"options":{"scheduleTime":"2026-03-02 15:00:00"}}`,
			wantErr: herald.ErrInvalidRequest, wantDetail: herald.Detail{Field: "options.scheduleTime", Reason: "is not available on this endpoint"}},
		{name: "ErrUnknownMember", app: app, kind: herald.KindAll, body: `{"title":"t","content":"c","topic":"news"}`,
			wantErr: herald.ErrInvalidRequest, wantDetail: herald.Detail{Field: "topic", Reason: "unknown field"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, rs, err := request.ReadPush(tt.app, tt.kind, []byte(tt.body), now)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				var e *herald.Error
				if tt.wantDetail != (herald.Detail{}) && (!errors.As(err, &e) || len(e.Details) != 1 || e.Details[0] != tt.wantDetail) {
					t.Errorf("got %v, want the one detail %+v", err, tt.wantDetail)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want a push", err)
			}
			if p.Kind != tt.kind || p.AppID != app.ID {
				t.Errorf("got a %s push of %s, want a %s push of %s", p.Kind, p.AppID, tt.kind, app.ID)
			}
			var users []string
			for _, r := range rs {
				users = append(users, r.UserID)
			}
			if !slices.Equal(users, tt.wantUsers) {
				t.Errorf("recipients: got %q, want %q", users, tt.wantUsers)
			}
		})
	}
}

// TestReadPushUnknownKind: only the four push endpoints' kinds are read; a
// token push (the admin API's test push) is no body of theirs.
func TestReadPushUnknownKind(t *testing.T) {
	t.Parallel()
	app := herald.App{ID: "app", Registered: true, FCMCredentials: []byte("sa")}
	if _, _, err := request.ReadPush(app, herald.KindToken, []byte(`{}`), time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)); err == nil {
		t.Fatal("a token push read: got no error")
	}
	if got := request.PushLimit(herald.KindToken); got != 0 {
		t.Errorf("PushLimit(token): got %d, want 0", got)
	}
}

// TestReadPushTTL: options.ttl is a whole number of seconds from 0 to 28
// days on every push endpoint; null is absent; anything else is refused
// naming options.ttl.
func TestReadPushTTL(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)
	app := herald.App{ID: "app", Registered: true, FCMCredentials: []byte("sa")}
	reason := fmt.Sprintf("must be a whole number of seconds from 0 to %d", herald.MaxTTL)
	for _, tt := range []struct {
		ttl  string
		want *int // nil: absent; refused when bad
		bad  bool
	}{
		{ttl: `0`, want: new(0)}, {ttl: `3600`, want: new(3600)}, {ttl: ` 2419200 `, want: new(herald.MaxTTL)},
		{ttl: `null`},
		{ttl: `-1`, bad: true}, {ttl: `2419201`, bad: true}, {ttl: `1.5`, bad: true}, {ttl: `3600.0`, bad: true},
		{ttl: `1e3`, bad: true}, {ttl: `"3600"`, bad: true}, {ttl: `true`, bad: true}, {ttl: `[]`, bad: true},
		{ttl: `99999999999999999999999`, bad: true}, {ttl: `-0`, want: new(0)},
	} {
		for _, kind := range []herald.PushKind{herald.KindUsers, herald.KindMessages, herald.KindTopic, herald.KindAll} {
			body := map[herald.PushKind]string{
				herald.KindUsers:    `{"userIds":["u1"],"title":"t","content":"c","options":{"ttl":%s}}`,
				herald.KindMessages: `{"messages":[{"userId":"u1","title":"t","content":"c"}],"options":{"ttl":%s}}`,
				herald.KindTopic:    `{"topic":"news","title":"t","content":"c","options":{"ttl":%s}}`,
				herald.KindAll:      `{"title":"t","content":"c","options":{"ttl":%s}}`,
			}[kind]
			p, _, err := request.ReadPush(app, kind, []byte(fmt.Sprintf(body, tt.ttl)), now)
			if tt.bad {
				var e *herald.Error
				if !errors.As(err, &e) || len(e.Details) != 1 || e.Details[0] != (herald.Detail{Field: "options.ttl", Reason: reason}) {
					t.Errorf("%s ttl %s: got %v, want the one detail on options.ttl", kind, tt.ttl, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s ttl %s: %v", kind, tt.ttl, err)
			}
			if (p.TTL == nil) != (tt.want == nil) || p.TTL != nil && *p.TTL != *tt.want {
				t.Errorf("%s ttl %s: got %v, want %v", kind, tt.ttl, p.TTL, tt.want)
			}
		}
	}
}

// TestReadPushPriority: options.priority is "normal" or "high" on every
// push endpoint; null is absent (normal); anything else is refused naming
// options.priority, and so is "high" on a push marked marketing or with a
// (광고) title.
func TestReadPushPriority(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)
	app := herald.App{ID: "app", Registered: true, FCMCredentials: []byte("sa"), AdSenderName: "Shop", AdSenderContact: "080-000-0000",
		AdOptOut: "설정 > 알림"}
	bodies := map[herald.PushKind]string{
		herald.KindUsers:    `{"userIds":["u1"],"title":%q,"content":"c","options":%s}`,
		herald.KindMessages: `{"messages":[{"userId":"u1","title":%q,"content":"c"}],"options":%s}`,
		herald.KindTopic:    `{"topic":"news","title":%q,"content":"c","options":%s}`,
		herald.KindAll:      `{"title":%q,"content":"c","options":%s}`,
		herald.KindSegment:  `{"filter":{"tag":"vip","eq":true},"title":%q,"content":"c","options":%s}`,
	}
	for _, tt := range []struct {
		title, options string
		want           herald.Priority // "" when refused
		reason         string
	}{
		{"t", `{"priority":"high"}`, herald.PriorityHigh, ""},
		{"t", `{"priority":"normal"}`, herald.PriorityNormal, ""},
		{"t", `{"priority":null}`, "", ""},
		{"t", `{}`, "", ""},
		{"t", `{"priority":"urgent"}`, "", herald.PriorityReason},
		{"t", `{"priority":"High"}`, "", herald.PriorityReason},
		{"t", `{"priority":""}`, "", herald.PriorityReason},
		{"t", `{"priority":1}`, "", "must be a string"},
		{"(광고) t", `{"priority":"high","isMarketing":true}`, "", herald.HighMarketingReason},
		{"(광고) t", `{"priority":"high"}`, "", herald.HighMarketingReason},
		{"(광고) t", `{"priority":"normal","isMarketing":true}`, herald.PriorityNormal, ""},
	} {
		for kind, body := range bodies {
			p, _, err := request.ReadPush(app, kind, []byte(fmt.Sprintf(body, tt.title, tt.options)), now)
			if tt.reason != "" {
				var e *herald.Error
				if !errors.As(err, &e) || len(e.Details) != 1 || e.Details[0] != (herald.Detail{Field: "options.priority", Reason: tt.reason}) {
					t.Errorf("%s %s %s: got %v, want the one detail on options.priority: %s", kind, tt.title, tt.options, err, tt.reason)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %s: %v", kind, tt.options, err)
			}
			if p.Priority != tt.want || p.High() != (tt.want == herald.PriorityHigh) {
				t.Errorf("%s %s: got priority %q, want %q", kind, tt.options, p.Priority, tt.want)
			}
		}
	}
}
