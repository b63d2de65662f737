package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"
)

// TestReleaseDeadNodesJobs: forgetting a node that stopped beating makes
// the jobs it was running available at once, with an attempt error River
// reads back; a live node's running jobs, and a job out of attempts (left
// to River's rescuer), stay as they are.
func TestReleaseDeadNodesJobs(t *testing.T) {
	db, _ := reproSchema(t)
	ctx := context.Background()
	q, err := river.NewClient(riverpgxv5.New(db.Pool), &river.Config{Schema: db.Schema()})
	if err != nil {
		t.Fatal(err)
	}
	running := func(node string, attempt int) int64 {
		t.Helper()
		res, err := q.Insert(ctx, reproJob{"herald.send"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = $2, attempted_at = now(),
			attempted_by = ARRAY['node_other', $3] WHERE id = $1`, res.Job.ID, attempt, node); err != nil {
			t.Fatal(err)
		}
		return res.Job.ID
	}
	dead, live := running("node_dead", 1), running("node_live", 1)
	spent := running("node_dead", 25) // River's default max attempts
	t0 := time.Now().Truncate(time.Millisecond)
	for node, at := range map[string]time.Time{"node_dead": t0, "node_live": t0.Add(12 * time.Second)} {
		if _, err := db.Heartbeat(ctx, node, at, at); err != nil {
			t.Fatal(err)
		}
	}
	at := t0.Add(12 * time.Second)
	nodes, jobs, err := db.ReleaseDeadNodes(ctx, at.Add(-9*time.Second), at)
	if err != nil || len(nodes) != 1 || nodes[0] != "node_dead" || jobs != 1 {
		t.Fatalf("ReleaseDeadNodes: got (%v, %d, %v), want node_dead forgotten and 1 job released", nodes, jobs, err)
	}
	get := func(id int64) *rivertype.JobRow {
		t.Helper()
		j, err := q.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	j := get(dead)
	if j.State != rivertype.JobStateAvailable || !j.ScheduledAt.Equal(at) {
		t.Errorf("dead node's job: got %s at %v, want available at %v", j.State, j.ScheduledAt, at)
	}
	if n := len(j.Errors); n != 1 || j.Errors[0].Attempt != 1 || !j.Errors[0].At.Equal(at) ||
		!strings.Contains(j.Errors[0].Error, "stopped beating") {
		t.Errorf("dead node's job: got errors %+v, want one of attempt 1 at %v saying why", j.Errors, at)
	}
	for name, id := range map[string]int64{"live node's": live, "out of attempts": spent} {
		if j := get(id); j.State != rivertype.JobStateRunning || len(j.Errors) != 0 {
			t.Errorf("%s job: got %s with %d errors, want running as it was", name, j.State, len(j.Errors))
		}
	}
}
