package sqlstore

import (
	"context"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
)

// ImportTags applies a batch of a tag import's rows (see audience.Store)
// in one transaction of a few statements, whatever the batch's size: the
// rows' users are locked as SetTags locks one (lockUsers) and their tag
// names read, then each row is judged in order against those names, kept
// current as rows are applied, and the writes go out together. The
// users' rows stay locked until the commit, and every writer of a user's
// tags takes the user's row first (lockUsers), so no other update of
// their tags runs between the count and the write.
func (s *UserStore) ImportTags(ctx context.Context, appID string, rows []audience.TagImportRow) (int, []audience.TagImportSkip, error) {
	var imported int
	var skipped []audience.TagImportSkip
	err := s.inTxRetry(ctx, false, func(c conn) error {
		imported, skipped = 0, []audience.TagImportSkip{}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.UserID
		}
		states, err := lockUsers(ctx, c, appID, ids)
		if err != nil {
			return err
		}
		var registered []string
		for id, state := range states {
			if state == herald.UserRegistered {
				registered = append(registered, id)
			}
		}
		names, err := tagNames(ctx, c, appID, registered)
		if err != nil {
			return err
		}
		var w tagWrites
		for _, r := range rows {
			if reason := applyTagRow(names, states[r.UserID], r); reason != "" {
				skipped = append(skipped, audience.TagImportSkip{UserID: r.UserID, Line: r.Line, Reason: reason})
				continue
			}
			w.add(appID, r.UserID, r.Set)
			imported++
		}
		return w.exec(ctx, c)
	})
	return imported, skipped, err
}

// applyTagRow judges a row against its user's state ("" when unknown) and
// tag names and, unless it returns why the row is skipped, applies it to
// the names.
func applyTagRow(names map[string]map[string]bool, state herald.UserState, r audience.TagImportRow) string {
	switch state {
	case "":
		return herald.SkipUnknownUser
	case herald.UserWithdrawn:
		return herald.SkipWithdrawnUser
	}
	have := names[r.UserID]
	n := len(have)
	for name, v := range r.Set {
		switch {
		case v == nil && have[name]:
			n--
		case v != nil && !have[name]:
			n++
		}
	}
	if n > audience.MaxTags {
		return audience.SkipTooManyTags
	}
	if have == nil {
		have = map[string]bool{}
		names[r.UserID] = have
	}
	for name, v := range r.Set {
		if v == nil {
			delete(have, name)
		} else {
			have[name] = true
		}
	}
	return ""
}

// UserTagNamesLookup reads the names of users' tags (a tag import's).
var UserTagNamesLookup = Lookup{Table: `user_tags`, Columns: `user_id, name`, Scope: `app_id`, Key: `user_id`}

// tagNames reads the names of the users' tags, by user. A Lookup, so that
// PostgreSQL probes each user's key even while its statistics still say
// user_tags is empty, as they do through an import's first minute: the
// IN list's plan read the whole table then, 600 ms a batch at 30,000 users.
func tagNames(ctx context.Context, c conn, appID string, userIDs []string) (map[string]map[string]bool, error) {
	out := make(map[string]map[string]bool, len(userIDs))
	err := c.lookup(ctx, UserTagNamesLookup, appID, userIDs, func(row scanner) error {
		var id, name string
		if err := row.Scan(&id, &name); err != nil {
			return err
		}
		if out[id] == nil {
			out[id] = map[string]bool{}
		}
		out[id][name] = true
		return nil
	})
	return out, err
}
