package postgres

import "github.com/heraldpush/herald/sqlstore"

// LookupQuery writes a lookup of many keys as one index probe per key. The
// keys come as one array; for each of them a subquery (LATERAL, its
// OFFSET 0 keeping the planner from merging it into a join, which it
// could answer by hashing a scan of the table) finds the key's rows by
// the scope and the key, the index's leading columns. The scope is an
// InitPlan's value, not the query's: the planner estimates the scope's
// rows from the number of distinct scopes, not from the scope's own
// frequency, which statistics taken before a burst of registrations say
// is nil for an app that had no devices then, and with the scope's rows
// estimated at one a read of them all costs the same as a probe. The
// keys too are an InitPlan's value, so that a plan made for the values
// (custom) estimates as many keys as one made once (generic) and costs
// the same: PostgreSQL then keeps the generic plan of the prepared
// statement instead of planning every run again, which a short list of
// keys, estimated below the generic plan's 10, made it do (a tenth of a
// millisecond of the database's CPU each time). TestLookupPlansProbeTheIndex
// checks the plans, TestLookupPlanKept that the generic one is kept. A
// lookup that locks (Lookup.Lock) takes each row FOR UPDATE, writing
// nothing, instead of the shared dialect's no-op update.
func (engine) LookupQuery(l sqlstore.Lookup, scope string, keys []string) (string, []any) {
	lock := ""
	if l.Lock != "" {
		lock = ` FOR UPDATE`
	}
	query := `SELECT t.* FROM unnest((SELECT CAST(?2 AS TEXT[]))) AS lookup(key)
		CROSS JOIN LATERAL (SELECT ` + l.Columns + ` FROM ` + l.Table + `
			WHERE ` + l.Scope + ` = (SELECT CAST(?1 AS TEXT)) AND ` + l.Key + ` = lookup.key OFFSET 0` + lock + `) t`
	return query, []any{scope, keys}
}

var _ sqlstore.LookupWriter = engine{}
