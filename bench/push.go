package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldpush/herald/client"
)

// Mode is how the run pushes to its users through the Server API.
type Mode string

// The modes of a run.
const (
	// ModeUsers sends one message to every user in requests of 500 user
	// IDs (POST /api/push/v2/users).
	ModeUsers Mode = "users"
	// ModeMessages sends a message of its own to every user, title and
	// content naming the user, in requests of 200 messages (POST
	// /api/push/v2/messages).
	ModeMessages Mode = "messages"
	// ModeAll sends one all-users push (POST /api/push/v2/all): the server
	// finds the devices itself.
	ModeAll Mode = "all"
	// ModeSegment sends one segment push (POST /api/push/v2/segments)
	// whose three-leaf filter over the users' tags selects every user:
	// the server finds the devices by the filter, in SQL.
	ModeSegment Mode = "segment"
	// ModeTemplate sends one all-users push whose title and content are
	// templates of the user's ID and tags, with Korean and Japanese
	// entries for the devices of those locales: each message is rendered
	// for its device.
	ModeTemplate Mode = "template"
	// ModeUrgent sends one all-users push as ModeAll does, at the FCM
	// project's quota, then another with one-user pushes of another app
	// of the project beside it (see Urgent).
	ModeUrgent Mode = "urgent"
)

// tagged reports whether the mode's users are given tags before the push.
func (m Mode) tagged() bool { return m == ModeSegment || m == ModeTemplate }

// one reports whether the mode is one push to every user.
func (m Mode) one() bool {
	return m == ModeAll || m == ModeSegment || m == ModeTemplate || m == ModeUrgent
}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeUsers, ModeMessages, ModeAll, ModeSegment, ModeTemplate, ModeUrgent:
		return m, nil
	}
	return "", fmt.Errorf("bench: mode %q: must be users, messages, all, segment, template or urgent", s)
}

// Request sizes: the API's maximum of each endpoint.
const (
	usersPerRequest    = 500
	messagesPerRequest = 200
)

// Endpoint returns the Server API path the mode pushes through.
func (m Mode) Endpoint() string {
	switch m {
	case ModeMessages:
		return "/api/push/v2/messages"
	case ModeAll, ModeTemplate, ModeUrgent:
		return "/api/push/v2/all"
	case ModeSegment:
		return "/api/push/v2/segments"
	}
	return "/api/push/v2/users"
}

// perRequest returns how many users one request of the mode reaches.
func (m Mode) perRequest(users int) int {
	switch {
	case m == ModeMessages:
		return messagesPerRequest
	case m.one():
		return users
	}
	return usersPerRequest
}

// requests returns the number of push requests for users.
func (m Mode) requests(users int) int {
	per := m.perRequest(users)
	return (users + per - 1) / per
}

// The message of every push, and of each user in messages mode.
const (
	benchTitle   = "Herald bench"
	benchContent = "One message to every registered user."
)

// titleOf and contentOf are user i's message in messages mode.
func titleOf(i int) string   { return benchTitle + " " + userOf(i) }
func contentOf(i int) string { return "A message of its own for user " + strconv.Itoa(i) + "." }

// pushAll pushes one message to every user in the mode's requests (with
// the options o, nil for none), request r through node r mod len(nodes),
// and returns the accept latencies and when the first request started.
func pushAll(ctx context.Context, mode Mode, nodes []*client.Client, users, workers int, o *client.Options) (Accept, time.Time, error) {
	per := mode.perRequest(users)
	requests := mode.requests(users)
	latencies := make([]time.Duration, requests)
	start := time.Now()
	err := forEach(ctx, requests, workers, func(ctx context.Context, r int) error {
		from, to := r*per, min(users, (r+1)*per)
		t := time.Now()
		err := pushRange(ctx, mode, nodes[r%len(nodes)], from, to, o)
		latencies[r] = time.Since(t)
		if err != nil {
			return fmt.Errorf("bench: push request %d (%s): %w", r, mode.Endpoint(), err)
		}
		return nil
	})
	acc := summarize(latencies, min(workers, requests))
	acc.UsersPerRequest, acc.Endpoint = per, mode.Endpoint()
	return acc, start, err
}

// pushRange sends the one request of mode that reaches users from to to
// (every user in the modes of one push), with the options o.
func pushRange(ctx context.Context, mode Mode, c *client.Client, from, to int, o *client.Options) error {
	var err error
	switch mode {
	case ModeUsers:
		ids := make([]any, 0, to-from)
		for i := from; i < to; i++ {
			ids = append(ids, userOf(i))
		}
		_, err = c.PushUsers(ctx, client.PushUsersRequest{UserIDs: ids, Title: benchTitle, Content: benchContent, Options: o})
	case ModeMessages:
		msgs := make([]client.Message, 0, to-from)
		for i := from; i < to; i++ {
			msgs = append(msgs, client.Message{UserID: userOf(i), Title: titleOf(i), Content: contentOf(i)})
		}
		_, err = c.PushMessages(ctx, client.PushMessagesRequest{Messages: msgs, Options: o})
	case ModeAll, ModeUrgent:
		_, err = c.PushAll(ctx, client.PushAllRequest{Title: benchTitle, Content: benchContent, Options: o})
	case ModeSegment:
		_, err = c.PushSegment(ctx, client.PushSegmentRequest{Filter: []byte(segmentFilter), Title: benchTitle, Content: benchContent, Options: o})
	case ModeTemplate:
		_, err = c.PushAll(ctx, client.PushAllRequest{Title: templateTitle, Content: templateContent, Localized: templateLocalized, Options: o})
	default:
		err = fmt.Errorf("bench: unknown mode %q", mode)
	}
	return err
}
