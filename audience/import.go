package audience

// A tag import (POST /admin/v1/apps/{appId}/tag-import) applies a CSV
// file's rows, each a tag update of one user, in batches.

// TagRow is one row of a tag import: the update of its user's tags, and
// the line of the file it came from.
type TagRow struct {
	Line   int
	UserID string
	Set    map[string]*Value
}

// TagSkip is a row an import did not apply, and why.
type TagSkip struct {
	UserID string `json:"userId"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// The reasons a row is skipped.
const (
	SkipUnknown   = "no such user: the app never registered it"
	SkipWithdrawn = "the user is withdrawn"
	SkipTooMany   = "the user would have more than 100 tags"
)
