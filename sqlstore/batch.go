package sqlstore

import "context"

// batchedKey marks the context of a transaction that may share its commit.
type batchedKey struct{}

// IsBatched reports whether ctx carries a transaction that may share its
// commit with others (group commit): an engine with one writer may run
// several such transactions, queued while the writer was busy, in one
// database transaction, each in a savepoint of its own, and commit them
// at once. Each still returns only after its own writes committed, and
// one that fails is rolled back to its savepoint without the others. A
// transaction marked so must read only through its own conn (a read
// outside it would not see the writes of those before it in the batch),
// return every error it meets, and be safe to run again (inTxRetry's rule).
func IsBatched(ctx context.Context) bool { return ctx.Value(batchedKey{}) != nil }

// Batched marks ctx's transaction as one that may share its commit (see
// IsBatched).
func Batched(ctx context.Context) context.Context { return context.WithValue(ctx, batchedKey{}, true) }

// inBatchedTxRetry is inTxRetry for a transaction that may share its
// commit (see IsBatched): the SDK API's small device writes, which come
// many at once and would otherwise each pay a commit.
func (s *Store) inBatchedTxRetry(ctx context.Context, retryUnique bool, fn func(c conn) error) error {
	return s.inTxRetry(Batched(ctx), retryUnique, fn)
}
