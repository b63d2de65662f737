package sqlite_test

import (
	"strings"
	"testing"

	"github.com/heraldpush/herald/sqlstore"
)

// TestPushQuartersPlan: the overview chart's sums (PushQuartersSQL) read
// the window's pushes from pushes_app_created and each push's chunks,
// sent deliveries and kept counts by its id: no table is scanned.
func TestPushQuartersPlan(t *testing.T) {
	db, _ := openMigrated(t)
	plan := explain(t, db.Reader, sqlstore.PushQuartersSQL, []any{"app_1", int64(0), int64(1)})
	want := map[string]string{
		"pushes":      "SEARCH p USING INDEX pushes_app_created (app_id=? AND created_at>? AND created_at<?)",
		"push_chunks": "SEARCH c USING INDEX sqlite_autoindex_push_chunks_1 (push_id=?)",
		"deliveries":  "SEARCH d USING COVERING INDEX deliveries_chunk (push_id=?)",
		"push_counts": "SEARCH k USING PRIMARY KEY (push_id=?)",
	}
	found := map[string]bool{}
	for _, step := range plan {
		if strings.HasPrefix(step, "SCAN") {
			t.Errorf("a table scanned: %q", step)
		}
		for table, read := range want {
			if step == read {
				found[table] = true
			}
		}
	}
	for table, read := range want {
		if !found[table] {
			t.Errorf("%s: want %q in the plan, got %s", table, read, strings.Join(plan, "; "))
		}
	}
}
