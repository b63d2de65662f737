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
// users' rows stay locked until the commit, so no other update of their
// tags runs between the count and the write; a last count in the same
// transaction checks that none of them ended over the limit.
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
		if err := w.exec(ctx, c); err != nil {
			return err
		}
		return checkTagCounts(ctx, c, appID, registered)
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

// tagNames reads the names of the users' tags, by user.
func tagNames(ctx context.Context, c conn, appID string, userIDs []string) (map[string]map[string]bool, error) {
	out := make(map[string]map[string]bool, len(userIDs))
	for start := 0; start < len(userIDs); start += lockPart {
		part := userIDs[start:min(start+lockPart, len(userIDs))]
		err := c.each(ctx, func(row scanner) error {
			var id, name string
			if err := row.Scan(&id, &name); err != nil {
				return err
			}
			if out[id] == nil {
				out[id] = map[string]bool{}
			}
			out[id][name] = true
			return nil
		}, `SELECT user_id, name FROM user_tags WHERE app_id = ? AND user_id IN (`+placeholders(len(part))+`)`,
			append([]any{appID}, anys(part)...)...)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkTagCounts counts, after the writes, the tags of the users an
// import wrote: one over the limit means a writer changed them without
// taking the user's row, and the transaction runs again on what it left.
func checkTagCounts(ctx context.Context, c conn, appID string, userIDs []string) error {
	for start := 0; start < len(userIDs); start += lockPart {
		part := userIDs[start:min(start+lockPart, len(userIDs))]
		var over bool
		err := c.each(ctx, func(row scanner) error {
			over = true
			var id string
			return row.Scan(&id)
		}, `SELECT user_id FROM user_tags WHERE app_id = ? AND user_id IN (`+placeholders(len(part))+`)
			GROUP BY user_id HAVING count(*) > ?`, append(append([]any{appID}, anys(part)...), audience.MaxTags)...)
		switch {
		case err != nil:
			return err
		case over:
			return errConflict
		}
	}
	return nil
}
