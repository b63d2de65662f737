package sqlstore

import (
	"context"
	"slices"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
)

// SetTags applies a tag update to a registered user (DESIGN 13): each
// named tag set, or deleted when nil; the others kept. It returns the
// user's tags after it. The user's row is locked first, so updates of one
// user (and its withdrawal) are made one after the other, and the limit
// is judged by a count in the transaction that writes them: of a burst
// of updates, none leaves the user over audience.MaxTags (audience.ErrTooManyTags,
// nothing written). ErrUserNotFound, ErrUserWithdrawn.
func (s *UserStore) SetTags(ctx context.Context, appID, userID string, set map[string]*audience.Value) (audience.Tags, error) {
	var out audience.Tags
	err := s.inTxRetry(ctx, false, func(c conn) (err error) {
		if err := lockRegisteredUser(ctx, c, appID, userID); err != nil {
			return err
		}
		out, err = writeTags(ctx, c, appID, userID, set)
		return err
	})
	return out, err
}

// SetDeviceTags is SetTags for the user the device is mapped to (the
// SDK's tag update): ErrNotFound for an unknown device, ErrDeviceUnmapped
// for one no user is mapped to, herald.ErrIdentityRefused when identity
// (nil when verification is off) does not verify that user. The device's user is read in the
// transaction, after its row is locked, so a device remapped meanwhile
// gives its new user's tags.
func (s *UserStore) SetDeviceTags(ctx context.Context, appID, deviceID string, set map[string]*audience.Value, identity *herald.IdentityProof) (string, audience.Tags, error) {
	var userID string
	var out audience.Tags
	err := s.inTxRetry(ctx, false, func(c conn) error {
		var mapped *string
		err := c.queryRow(ctx, c.locking(`SELECT user_id FROM devices WHERE app_id = ? AND device_id = ?`), appID, deviceID).Scan(&mapped)
		switch {
		case err != nil:
			return err
		case mapped == nil:
			return herald.ErrDeviceUnmapped
		case identity != nil && !identity.Verifies(*mapped):
			return herald.ErrIdentityRefused
		}
		userID = *mapped
		if err := lockRegisteredUser(ctx, c, appID, userID); err != nil {
			return err
		}
		out, err = writeTags(ctx, c, appID, userID, set)
		return err
	})
	return userID, out, err
}

// lockRegisteredUser takes a registered user's row for the rest of the
// transaction (lockUsers). ErrUserNotFound, ErrUserWithdrawn.
func lockRegisteredUser(ctx context.Context, c conn, appID, userID string) error {
	states, err := lockUsers(ctx, c, appID, []string{userID})
	switch {
	case err != nil:
		return err
	case states[userID] == "":
		return herald.ErrUserNotFound
	case states[userID] == herald.UserWithdrawn:
		return herald.ErrUserWithdrawn
	}
	return nil
}

// LockUsersLookup takes users' rows and reads their states (lockUsers).
var LockUsersLookup = Lookup{Table: `users`, Columns: `user_id, state`, Scope: `app_id`, Key: `user_id`, Lock: `state = state`}

// lockUsers takes the rows of those of the app's users that exist for
// the rest of the transaction (a Lookup that locks: a write that changes
// nothing on SQLite, FOR UPDATE on PostgreSQL, each user by its key
// whatever the statistics say) and returns their states. Every writer of
// a user's tags takes the user's row first, so tag updates of one user
// (and its withdrawal) are made one after the other. Users are taken in
// order of ID.
func lockUsers(ctx context.Context, c conn, appID string, userIDs []string) (map[string]herald.UserState, error) {
	ids := slices.Clone(userIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	states := make(map[string]herald.UserState, len(ids))
	err := c.lookup(ctx, LockUsersLookup, appID, ids, func(row scanner) error {
		var id string
		var state herald.UserState
		err := row.Scan(&id, &state)
		states[id] = state
		return err
	})
	return states, err
}

// writeTags writes a tag update of a user whose row the transaction
// holds, in order of name, and returns the user's tags after it;
// audience.ErrTooManyTags when they would be too many.
func writeTags(ctx context.Context, c conn, appID, userID string, set map[string]*audience.Value) (audience.Tags, error) {
	var w tagWrites
	w.add(appID, userID, set)
	if err := w.exec(ctx, c); err != nil {
		return nil, err
	}
	tags, err := readTags(ctx, c, appID, userID)
	if err == nil && len(tags) > audience.MaxTags {
		return nil, audience.ErrTooManyTags
	}
	return tags, err
}

// tagWrites are tag updates to make together (exec): the last update of
// each (user, name) in the order they were added, since one statement
// may write a row once.
type tagWrites struct {
	at  map[[2]string]int // (user, name) → its entry of ops
	ops [][]any           // app, user, name, then kind, text, num for a set
}

// add adds a user's update: each named tag set, or deleted when nil.
func (w *tagWrites) add(appID, userID string, set map[string]*audience.Value) {
	if w.at == nil {
		w.at = map[[2]string]int{}
	}
	for name, v := range set {
		op := []any{appID, userID, name}
		if v != nil {
			kind, text, num := tagColumns(*v)
			op = append(op, kind, text, num)
		}
		i, ok := w.at[[2]string{userID, name}]
		if !ok {
			i = len(w.ops)
			w.at[[2]string{userID, name}] = i
			w.ops = append(w.ops, nil)
		}
		w.ops[i] = op
	}
}

// tagRows is how many rows one insert of exec writes at most; fewer are
// written in powers of two, so that its statements take a few shapes,
// each prepared once.
const tagRows = 256

// exec makes the writes: the deletes, then the sets in multi-row inserts.
func (w *tagWrites) exec(ctx context.Context, c conn) error {
	var deletes, sets [][]any
	for _, op := range w.ops {
		if len(op) == 3 {
			deletes = append(deletes, op)
		} else {
			sets = append(sets, op)
		}
	}
	if _, err := c.execMany(ctx, `DELETE FROM user_tags WHERE app_id = ? AND user_id = ? AND name = ?`, deletes); err != nil {
		return err
	}
	for len(sets) > 0 {
		n := tagRows
		for n > len(sets) {
			n /= 2
		}
		args := make([]any, 0, 6*n)
		for _, op := range sets[:n] {
			args = append(args, op...)
		}
		if _, err := c.exec(ctx, `INSERT INTO user_tags (app_id, user_id, name, kind, text_value, num_value) VALUES `+
			strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?, ?),`, n), ",")+`
			ON CONFLICT (app_id, user_id, name) DO UPDATE SET kind = excluded.kind, text_value = excluded.text_value,
			num_value = excluded.num_value`, args...); err != nil {
			return err
		}
		sets = sets[n:]
	}
	return nil
}

// The kinds of user_tags.kind.
const (
	tagString = "s"
	tagNumber = "n"
	tagBool   = "b"
)

// tagColumns is a value as user_tags keeps it: its kind, its text
// (audience.Value.Text) and, for a number, its value.
func tagColumns(v audience.Value) (kind, text string, num *float64) {
	switch v.Kind {
	case audience.KindNumber:
		n := v.Num
		return tagNumber, v.Text(), &n
	case audience.KindBool:
		return tagBool, v.Text(), nil
	}
	return tagString, v.Str, nil
}

// scanTag reads a user_tags row's name and value.
func scanTag(row scanner) (string, audience.Value, error) {
	var name, kind, text string
	var num *float64
	err := row.Scan(&name, &kind, &text, &num)
	return name, tagValue(kind, text, num), err
}

// tagValue is the value user_tags keeps as kind, text and num.
func tagValue(kind, text string, num *float64) audience.Value {
	switch {
	case kind == tagNumber && num != nil:
		return audience.Number(*num)
	case kind == tagBool:
		return audience.Bool(text == "true")
	}
	return audience.String(text)
}

// readTags reads a user's tags (empty, never nil, for none).
func readTags(ctx context.Context, c conn, appID, userID string) (audience.Tags, error) {
	tags := audience.Tags{}
	err := c.each(ctx, func(row scanner) error {
		name, v, err := scanTag(row)
		tags[name] = v
		return err
	}, `SELECT name, kind, text_value, num_value FROM user_tags WHERE app_id = ? AND user_id = ?`, appID, userID)
	return tags, err
}

// UserTags returns a user's tags: empty for a user with none, a withdrawn
// one or one never registered (the caller asks User for those).
func (s *UserStore) UserTags(ctx context.Context, appID, userID string) (audience.Tags, error) {
	return readTags(ctx, s.reader(), appID, userID)
}

// UserTagsLookup reads users' tags (TagsOfUsers).
var UserTagsLookup = Lookup{Table: `user_tags`, Columns: `user_id, name, kind, text_value, num_value`, Scope: `app_id`, Key: `user_id`}

// TagsOfUsers returns the named tags of each of the users that has any
// (a push's templates read them when it is sent, DESIGN 13). Each user's
// tags are read as one range of the key (a Lookup: one probe a user on
// both engines, whatever PostgreSQL's statistics say) and the names
// picked out here, which on SQLite costs a third less than a probe a name
// for three names; a user has at most audience.MaxTags.
func (s *UserStore) TagsOfUsers(ctx context.Context, appID string, userIDs, names []string) (map[string]audience.Tags, error) {
	out := map[string]audience.Tags{}
	if len(names) == 0 {
		return out, nil
	}
	wanted := make(map[string]bool, len(names))
	for _, n := range names {
		wanted[n] = true
	}
	err := s.reader().lookup(ctx, UserTagsLookup, appID, userIDs, func(row scanner) error {
		var userID string
		var name, kind, text string
		var num *float64
		if err := row.Scan(&userID, &name, &kind, &text, &num); err != nil || !wanted[name] {
			return err
		}
		if out[userID] == nil {
			out[userID] = audience.Tags{}
		}
		out[userID][name] = tagValue(kind, text, num)
		return nil
	})
	return out, err
}
