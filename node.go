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
}
