package herald

import (
	"context"
	"time"
)

// NodeStore keeps which `herald serve` processes sharing a database are
// alive, so that they can share a budget such as an app's send rate.
type NodeStore interface {
	// Heartbeat notes that node is alive at at and returns how many nodes
	// were seen at or after since, this one included.
	Heartbeat(ctx context.Context, node string, at, since time.Time) (int, error)
	// LeaveNodes forgets node (it is stopping), so the others no longer
	// count it.
	LeaveNodes(ctx context.Context, node string) error
	// ReleaseDeadNodes forgets every node last seen before before, and
	// makes the jobs they were running available to the live nodes at
	// at (the node is its River client's ID). It returns the nodes
	// forgotten and how many jobs were released.
	ReleaseDeadNodes(ctx context.Context, before, at time.Time) (nodes []string, jobs int, err error)
}
