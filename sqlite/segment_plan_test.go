package sqlite_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/sqlstore"
	"github.com/heraldpush/herald/storetest"
)

// TestFilterPlans: in the fan-out's page of a segment push and in an
// audience count, each tag leaf reads the user's tag by its key, whatever
// its operator, and a count driven by a tag's value reads it from that
// value's index. With a prefix written as a range of text_value, SQLite's
// planner (3.53, no statistics) read the leaf from user_tags_text instead,
// every tag of that name once for each device: a 100,000-user segment push
// sent nothing in 200 s.
func TestFilterPlans(t *testing.T) {
	db, _ := openMigrated(t)
	for name, raw := range storetest.PlanFilters {
		f, errs := audience.Parse([]byte(raw))
		if errs != nil {
			t.Fatalf("%s: %v", name, errs)
		}
		for _, after := range []sendstore.DeviceCursor{{}, {Mapped: true, UserID: "u1", DeviceID: "d1"}} {
			query, args, err := sqlstore.DevicePageQuery("app_1", sendstore.Selection{Filter: &f, Now: time.Now()}, after, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range explain(t, db.Reader, query, args) {
				if strings.Contains(step, " t ") && !strings.Contains(step, "(app_id=? AND user_id=? AND name=?)") {
					t.Errorf("%s (page, mapped %v): a tag look-up not by the user's key: %q", name, after.Mapped, step)
				}
			}
		}
		query, args, tagDriven, err := sqlstore.AudienceCountQuery("app_1", f, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		plan := explain(t, db.Reader, query, args)
		first := true // the first read of a table
		for _, step := range plan {
			if !strings.HasPrefix(step, "SEARCH") && !strings.HasPrefix(step, "SCAN") {
				continue
			}
			i := 1
			if first {
				i, first = 0, false
			}
			byKey := strings.Contains(step, "(app_id=? AND user_id=? AND name=?)")
			byValue := strings.Contains(step, "INDEX user_tags_text (app_id=? AND <expr>=?") || strings.Contains(step, "INDEX user_tags_num (app_id=? AND <expr>=?")
			switch {
			case i == 0 && tagDriven && !(strings.HasPrefix(step, "SEARCH t ") && byValue):
				t.Errorf("%s (count by a tag's value): it does not start from the value's index: %s", name, strings.Join(plan, "; "))
			case strings.Contains(step, " t ") && !byKey && !byValue:
				t.Errorf("%s (count): a tag read neither by the key nor by the value: %q\nplan: %s", name, step, strings.Join(plan, "; "))
			}
		}
	}
}

// explain returns the details of query's plan, a step a line.
func explain(t *testing.T, db *sql.DB, query string, args []any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return plan
}
