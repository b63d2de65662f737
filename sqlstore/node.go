package sqlstore

import (
	"context"
	"time"
)

// nodeForgetAfter is how long a node that stopped noting itself is kept in
// the table before a live node's heartbeat removes its row.
const nodeForgetAfter = time.Hour

// Heartbeat notes that node is alive at at, and returns how many nodes were
// seen at or after since (this one included). Rows of nodes gone for long
// are removed on the way.
func (s *NodeStore) Heartbeat(ctx context.Context, node string, at, since time.Time) (int, error) {
	var n int
	err := s.inTx(ctx, func(c conn) error {
		if _, err := c.exec(ctx, `DELETE FROM nodes WHERE seen_at < ?`, at.Add(-nodeForgetAfter).UnixMilli()); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `INSERT INTO nodes (id, seen_at) VALUES (?, ?)
			ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, node, at.UnixMilli()); err != nil {
			return err
		}
		return c.queryRow(ctx, `SELECT COUNT(*) FROM nodes WHERE seen_at >= ?`, since.UnixMilli()).Scan(&n)
	})
	return n, err
}

// LeaveNodes removes node's row, so that the nodes left share the send
// rate at once rather than after the row grows stale.
func (s *NodeStore) LeaveNodes(ctx context.Context, node string) error {
	return s.inTx(ctx, func(c conn) error {
		_, err := c.exec(ctx, `DELETE FROM nodes WHERE id = ?`, node)
		return err
	})
}

// ReleaseDeadNodes forgets the nodes last seen before before and, on an
// engine whose nodes share River's jobs (JobReleaser), makes their
// running jobs available at at, in the same transaction: of live nodes
// judging the same death at once, one forgets the node and releases its
// jobs, the others find nothing.
func (s *NodeStore) ReleaseDeadNodes(ctx context.Context, before, at time.Time) ([]string, int, error) {
	var dead []string
	var jobs int64
	err := s.inTx(ctx, func(c conn) error {
		dead, jobs = dead[:0], 0
		err := c.each(ctx, func(row scanner) error {
			var id string
			err := row.Scan(&id)
			dead = append(dead, id)
			return err
		}, `DELETE FROM nodes WHERE seen_at < ? RETURNING id`, before.UnixMilli())
		if err != nil || len(dead) == 0 || s.jobs == nil {
			return err
		}
		jobs, err = s.jobs.ReleaseJobs(ctx, c.tx, dead, at)
		return err
	})
	return dead, int(jobs), err
}
