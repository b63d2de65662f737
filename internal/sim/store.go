package sim

import (
	"context"

	"github.com/heraldpush/herald/delivery"
)

// Store is delivery's store as one node sees it (store_gen.go wraps each
// method): every call is a scheduling point of the simulation, where the
// node's actor waits for its turn, and may meet an injected fault before
// the call (not applied) or after it (applied, its answer lost), or the
// node's death.
type Store struct {
	inner delivery.Store
	node  *node
}

func (s *Store) before(ctx context.Context, method string, args ...any) (verdict, error) {
	return s.node.point(ctx, pointStore, method, args...)
}

func (s *Store) after(v verdict, err error) error {
	if err == nil && v.errAfter != nil {
		return v.errAfter
	}
	return err
}
