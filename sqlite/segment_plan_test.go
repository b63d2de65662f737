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
		now := time.Now()
		_, _, tagDriven, err := sqlstore.AudienceCountQuery("app_1", f, now)
		if err != nil {
			t.Fatal(err)
		}
		for _, after := range []sendstore.DeviceCursor{{}, {Mapped: true, UserID: "u1", DeviceID: "d1"}} {
			query, args, err := sqlstore.DevicePageQuery("app_1", sendstore.Selection{Filter: &f, Now: now}, after, 1000)
			if err != nil {
				t.Fatal(err)
			}
			// The mapped part of a filter driven by one tag value reads it by
			// the value, its users in order (no sort of the whole page).
			byValue := after.Mapped && tagDriven && strings.Contains(raw, `"eq"`) && !strings.Contains(raw, `"or"`)
			checkPlan(t, name+" (page)", explain(t, db.Reader, query, args), byValue)
		}
		query, args, _, err := sqlstore.AudienceCountQuery("app_1", f, now)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, name+" (count)", explain(t, db.Reader, query, args), tagDriven)
	}
}

// checkPlan checks that every read of user_tags in plan is by the user's
// key, but for the first read of a table when byValue: that one must be
// of user_tags by the tag's value, from its index. No plan sorts all its
// rows.
func checkPlan(t *testing.T, what string, plan []string, byValue bool) {
	t.Helper()
	first := true
	for _, step := range plan {
		if strings.HasPrefix(step, "USE TEMP B-TREE FOR ORDER BY") {
			t.Errorf("%s: sorts every row: %s", what, strings.Join(plan, "; "))
		}
		if !strings.HasPrefix(step, "SEARCH") && !strings.HasPrefix(step, "SCAN") {
			continue
		}
		byKey := strings.Contains(step, "(app_id=? AND user_id=? AND name=?)")
		fromValue := strings.Contains(step, "INDEX user_tags_text (app_id=? AND <expr>=?") ||
			strings.Contains(step, "INDEX user_tags_num (app_id=? AND <expr>=?")
		switch {
		case first && byValue && !(strings.HasPrefix(step, "SEARCH t ") && fromValue):
			t.Errorf("%s: does not start from the tag's value: %s", what, strings.Join(plan, "; "))
		case !(first && byValue) && strings.Contains(step, " t ") && !byKey:
			t.Errorf("%s: a tag look-up not by the user's key: %q\nplan: %s", what, step, strings.Join(plan, "; "))
		}
		first = false
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
