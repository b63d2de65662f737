package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/heraldpush/herald"
)

// userPush is a push found for a user's export: what the push's row
// says, and the chunks that hold the user's slots.
type userPush struct {
	herald.UserPush
	kind        herald.PushKind
	chunks      []int
	unreachable bool
}

// UserChunksWriter is implemented by an engine that finds a user's chunks
// by a filter of their users kept beside the chunk (PostgreSQL's, migration
// 47) besides the rows of user_pushes. An engine without one keeps a row
// of user_pushes for each user of a chunk (SQLite's trigger) and is given
// UserPushesQuery.
type UserChunksWriter interface {
	// UserChunksQuery returns the query of the chunks of an app's pushes
	// that hold a user (?1 the app, ?2 the user): each row a chunk's push
	// and number, then cols of its push (p). A chunk may come twice.
	UserChunksQuery(cols string) string
	// ChunkHolds returns the condition that the chunk (a push_chunks
	// alias) holds the user (an SQL expression) in its users column.
	ChunkHolds(chunk, user string) string
	// ChunkUsersInsert returns the statement that records what the engine
	// finds a chunk's users by, and ChunkUsersArgs its arguments for a
	// chunk of a push and the distinct users of its slots (at least one).
	ChunkUsersInsert() string
	ChunkUsersArgs(pushID string, chunk int, users []string) []any
}

// UserPushesQuery writes the query of a user's chunks from user_pushes
// (see UserChunksWriter).
func UserPushesQuery(cols string) string {
	return `SELECT up.push_id, up.chunk, ` + cols + `
		FROM user_pushes up JOIN pushes p ON p.id = up.push_id WHERE up.app_id = ?1 AND up.user_id = ?2`
}

// UserPushes returns the pushes sent to a user (its chunks: userChunks) or
// that could not reach it (unreachable), newest first. Each push's outcome
// for the user is read from the chunks found, and only from them, so
// the work is the user's pushes times a chunk each, however large the
// pushes.
func (s *PushStore) UserPushes(ctx context.Context, appID, userID string) ([]herald.UserPush, error) {
	pushes := map[string]*userPush{}
	found := func(unreachable bool) func(row scanner) error {
		return func(row scanner) error {
			var id string
			var chunk int
			var title sql.NullString
			var kind herald.PushKind
			var created int64
			var started sql.NullInt64
			if err := row.Scan(&id, &chunk, &title, &kind, &created, &started); err != nil {
				return err
			}
			p := pushes[id]
			if p == nil {
				p = &userPush{UserPush: herald.UserPush{PushID: id, At: time.UnixMilli(created).UTC()}, kind: kind}
				if started.Valid {
					p.At = time.UnixMilli(started.Int64).UTC()
				}
				if title.Valid {
					p.Title = &title.String
				}
				pushes[id] = p
			}
			switch {
			case unreachable:
				p.unreachable = true
			case !slices.Contains(p.chunks, chunk): // a chunk's users column and a row of user_pushes may both name it
				p.chunks = append(p.chunks, chunk)
			}
			return nil
		}
	}
	const pushCols = `p.title, p.kind, p.created_at, p.started_at`
	if err := s.reader().each(ctx, found(false), s.userChunks(pushCols), appID, userID); err != nil {
		return nil, err
	}
	if err := s.reader().each(ctx, found(true), `SELECT u.push_id, 0, `+pushCols+`
		FROM unreachable u JOIN pushes p ON p.id = u.push_id WHERE u.user_id = ? AND p.app_id = ?`, userID, appID); err != nil {
		return nil, err
	}
	out := make([]herald.UserPush, 0, len(pushes))
	for _, p := range pushes {
		if err := s.judgeUserPush(ctx, userID, p); err != nil {
			return nil, err
		}
		out = append(out, p.UserPush)
	}
	slices.SortFunc(out, func(a, b herald.UserPush) int {
		return cmp.Or(b.At.Compare(a.At), strings.Compare(b.PushID, a.PushID))
	})
	return out, nil
}

// judgeUserPush reads the user's deliveries of p in its chunks, and gives
// p its outcome, the events its devices reported and, for a push of
// messages, the title of the user's message.
func (s *PushStore) judgeUserPush(ctx context.Context, userID string, p *userPush) error {
	var ds []herald.Delivery
	if len(p.chunks) > 0 {
		slices.Sort(p.chunks)
		in := "(" + placeholders(len(p.chunks)) + ")"
		more := make([]any, 0, len(p.chunks)+1)
		for _, c := range p.chunks {
			more = append(more, c)
		}
		rows, err := s.rows(ctx, `push_id = ? AND chunk IN `+in+` AND user_id = ?`, append(append([]any{p.PushID}, more...), userID)...)
		if err != nil {
			return err
		}
		if ds, err = s.withSlots(ctx, p.PushID, `push_id = ? AND chunk IN `+in, more, rows,
			func(d herald.Delivery) bool { return d.UserID == userID }); err != nil {
			return err
		}
	}
	p.Outcome = herald.UserOutcome(ds)
	if len(ds) == 0 {
		return nil
	}
	if p.kind == herald.KindMessages {
		rs, err := s.Recipients(ctx, p.PushID)
		if err != nil {
			return err
		}
		if i := ds[0].RecipientIdx; i < len(rs) && rs[i].Content != nil {
			p.Title = &rs[i].Content.Title
		}
	}
	return s.userEvents(ctx, p, ds)
}

// userEvents gives p the earliest received and opened events the user's
// devices reported.
func (s *PushStore) userEvents(ctx context.Context, p *userPush, ds []herald.Delivery) error {
	devices := make([]string, 0, len(ds))
	for _, d := range ds {
		devices = append(devices, d.DeviceID)
	}
	return eachIn(ctx, s.reader(), `SELECT type, at FROM push_events WHERE push_id = ? AND device_id IN `, p.PushID, devices,
		func(row scanner) error {
			var typ string
			var ms int64
			if err := row.Scan(&typ, &ms); err != nil {
				return err
			}
			at := time.UnixMilli(ms).UTC()
			dst := &p.ReceivedAt
			if typ == string(herald.EventOpened) {
				dst = &p.OpenedAt
			}
			if *dst == nil || at.Before(**dst) {
				*dst = &at
			}
			return nil
		})
}
