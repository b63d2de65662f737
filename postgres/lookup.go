package postgres

import "github.com/heraldpush/herald/sqlstore"

// LookupQuery writes a lookup of many keys as one index probe per key,
// whatever the table's statistics say. The keys come as one array; for
// each of them a subquery (LATERAL, its OFFSET 0 keeping the planner from
// merging it into a join it could hash over a scan of the table) finds
// the key's rows, its scope and key matched as a pair of row comparisons:
// only an index that leads with the scope then the key can answer them,
// so no plan reads the scope's rows by another index and filters them by
// the key, nor scans the table, which stale statistics could otherwise
// make the cheapest (an app that had one device when the table was last
// analyzed is estimated to have one still). The plain equality on the key
// is the same condition; it lets a partial index on key IS NOT NULL serve.
// The scope's range is the same condition again: estimated from the
// scope's statistics, it makes the probe of both cheaper to the planner
// than a read of the scope's rows when the statistics say the scope is
// small. TestLookupPlansProbeTheIndex checks the plans.
func (engine) LookupQuery(l sqlstore.Lookup, scope string, keys []string) (string, []any) {
	pair := `(` + l.Scope + `, ` + l.Key + `)`
	query := `SELECT t.* FROM unnest(CAST(?2 AS TEXT[])) AS lookup(key)
		CROSS JOIN LATERAL (SELECT ` + l.Columns + ` FROM ` + l.Table + `
			WHERE ` + pair + ` >= (?1, lookup.key) AND ` + pair + ` <= (?1, lookup.key) AND ` + l.Key + ` = lookup.key AND ` + l.Scope + ` BETWEEN ?1 AND ?1
			OFFSET 0) t`
	if l.Order != "" {
		query += ` ORDER BY ` + l.Order
	}
	return query, []any{scope, keys}
}

var _ sqlstore.LookupWriter = engine{}
