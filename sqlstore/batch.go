package sqlstore

import "context"

// inBatchedTxRetry is inTxRetry for a transaction that may share its
// commit (see TxOptions.Batched): the SDK API's small device writes, which
// come many at once and would otherwise each pay a commit. key names the
// row it locks that others are likeliest to want too (see
// TxOptions.Key).
func (s *core) inBatchedTxRetry(ctx context.Context, key string, retryUnique bool, fn func(c conn) error) error {
	return s.inTxRetryWith(ctx, TxOptions{Batched: true, Key: key}, retryUnique, fn)
}
