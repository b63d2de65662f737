package sqlstore

import "context"

// inBatchedTxRetry is inTxRetry for a transaction that may share its
// commit (see TxOptions.Batched): the SDK API's small device writes, which
// come many at once and would otherwise each pay a commit.
func (s *Store) inBatchedTxRetry(ctx context.Context, retryUnique bool, fn func(c conn) error) error {
	return s.inTxRetryWith(ctx, TxOptions{Batched: true}, retryUnique, fn)
}
