package sqlite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/sqlstore"
)

// TestSegmentPageProbesTagsByKey: in the fan-out's page of a segment push,
// each tag leaf reads the user's tag by its primary key, whatever its
// operator. With a prefix written as a range of text_value, SQLite's
// planner (3.53, no statistics) read the leaf from user_tags_text instead,
// every tag of that name once for each device: a 100,000-user segment push
// sent nothing in 200 s.
func TestSegmentPageProbesTagsByKey(t *testing.T) {
	db, _ := openMigrated(t)
	leaves := map[string]string{
		"eq": `{"tag":"plan","eq":"gold"}`, "ne": `{"tag":"plan","ne":"gold"}`,
		"in": `{"tag":"plan","in":["gold","silver"]}`, "exists": `{"tag":"plan","exists":true}`,
		"number gte": `{"tag":"level","gte":1}`, "number lt": `{"tag":"level","lt":5}`,
		"string gt": `{"tag":"city","gt":"M"}`, "prefix": `{"tag":"city","prefix":"Seoul"}`,
		"three leaves": `{"and":[{"tag":"plan","in":["gold","silver"]},{"tag":"level","gte":1},{"tag":"city","prefix":"Seoul"}]}`,
	}
	for name, raw := range leaves {
		f, errs := audience.Parse([]byte(raw))
		if errs != nil {
			t.Fatalf("%s: %v", name, errs)
		}
		for _, after := range []sendstore.DeviceCursor{{}, {Mapped: true, UserID: "u1", DeviceID: "d1"}} {
			query, args, err := sqlstore.DevicePageQuery("app_1", sendstore.Selection{Filter: &f, Now: time.Now()}, after, 1000)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.Reader.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
			if err != nil {
				t.Fatalf("%s: explain: %v", name, err)
			}
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			rows.Close()
			for _, step := range plan {
				if strings.Contains(step, " t ") && !strings.Contains(step, "(app_id=? AND user_id=? AND name=?)") {
					t.Errorf("%s (mapped %v): a tag look-up not by the user's key: %q\nplan: %s", name, after.Mapped, step, strings.Join(plan, "; "))
				}
			}
		}
	}
}
