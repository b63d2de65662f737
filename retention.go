package herald

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention (DESIGN section 12): what Herald keeps, and for how long.
const (
	// DefaultRetentionDays is how long the rows and body of a finished
	// push are kept when HERALD_RETENTION_DAYS is not set.
	DefaultRetentionDays = 400
	// MinRetentionDays is the shortest retention accepted: a month of
	// history is what an operator needs to answer for a campaign.
	MinRetentionDays = 31
	// ConsentTrailDays is how long the consent trail keeps the records
	// that are not a pair's latest (its latest is kept whatever its age).
	ConsentTrailDays = 730
	// AccessRecordDays is how long access records are kept.
	AccessRecordDays = 730
)

// ParseRetentionDays reads HERALD_RETENTION_DAYS: a whole number of days,
// at least MinRetentionDays.
func ParseRetentionDays(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < MinRetentionDays {
		return 0, fmt.Errorf("%q is not a whole number of days of at least %d", v, MinRetentionDays)
	}
	return n, nil
}

// Days is a number of whole days as a duration.
func Days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

// bodyFields are the edit trail's fields that hold a push's body.
var bodyFields = []string{"title", "content", "linkURL", "imageURL"}

// ExpireEdits returns a push's edit trail with the values of its body
// fields blanked: what an edit changed stays (and when), not the text
// the push no longer keeps.
func ExpireEdits(edits []Edit) []Edit {
	out := make([]Edit, len(edits))
	for i, e := range edits {
		e.Changes, e.From = blankBody(e.Changes), blankBody(e.From)
		out[i] = e
	}
	return out
}

func blankBody(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		for _, f := range bodyFields {
			if k == f {
				v = ""
			}
		}
		out[k] = v
	}
	return out
}
