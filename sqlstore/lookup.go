package sqlstore

import "context"

// Lookup is a read of the rows of one table, within one scope (an app's),
// whose key column holds one of a list of values: the devices of a list of
// ids, or of a list of users. An index leads with Scope then Key, so each
// key is an index probe; the send path makes such reads of up to 500 keys
// for every chunk it sends.
type Lookup struct {
	// Table and Columns are what is read.
	Table, Columns string
	// Scope is the column equal to one value (the lookup's scope), Key the
	// one equal to one of the keys.
	Scope, Key string
	// Lock, when set, takes the rows read for the rest of the
	// transaction: it is the no-op assignment the shared dialect writes
	// them with (UPDATE … SET Lock … RETURNING Columns), which an engine
	// may replace with a lock that writes nothing (PostgreSQL's FOR
	// UPDATE).
	Lock string
}

// LookupWriter is implemented by an engine that writes a Lookup in its own
// form. PostgreSQL plans an IN list of 500 keys from its statistics: right
// after a burst of registrations, before autovacuum analyzed the table,
// they say the app has a few rows or none, and the plan reads every row of
// the app's to filter them by the list (28 to 46 ms a read in a bench);
// with fresh statistics it scans the table. An engine without one
// (SQLite, whose plan of an IN list on an index is the probes) is given
// the IN list (InListLookup).
type LookupWriter interface {
	// LookupQuery returns l's query of at most lookupBatch keys in scope,
	// with its arguments.
	LookupQuery(l Lookup, scope string, keys []string) (string, []any)
}

// The lookups of devices the store makes, all on the send path: a chunk's
// devices by id and by user, and the facts of each send step (stepFacts).
var (
	DevicesByIDLookup    = Lookup{Table: `devices`, Columns: deviceColumns, Scope: `app_id`, Key: `device_id`}
	DevicesOfUsersLookup = Lookup{Table: `devices`, Columns: deviceColumns, Scope: `app_id`, Key: `user_id`}
	HeldTokensLookup     = Lookup{Table: `devices`, Columns: `device_id, token, user_id`, Scope: `app_id`, Key: `device_id`}
)

// lookupBatch bounds the keys of one query (SQLite's variables among
// them).
const lookupBatch = 512

// InListLookup writes l as an IN list: the shared dialect's form (see
// paddedIn).
func InListLookup(l Lookup, scope string, keys []string) (string, []any) {
	list, args := paddedIn(scope, keys)
	where := ` WHERE ` + l.Scope + ` = ? AND ` + l.Key + ` IN ` + list
	if l.Lock != "" {
		return `UPDATE ` + l.Table + ` SET ` + l.Lock + where + ` RETURNING ` + l.Columns, args
	}
	return `SELECT ` + l.Columns + ` FROM ` + l.Table + where, args
}

// paddedIn returns an IN list of keys and its arguments, first before them.
// The list is padded with NULLs (which match nothing) to a power of two,
// so that the reads of any number of keys are a few statements, each
// prepared once.
func paddedIn(first string, keys []string) (string, []any) {
	n := 8
	for n < len(keys) {
		n *= 2
	}
	args := make([]any, 1, n+1)
	args[0] = first
	for _, k := range keys {
		args = append(args, k)
	}
	for len(args) < n+1 {
		args = append(args, nil)
	}
	return `(` + placeholders(n) + `)`, args
}

// lookup runs l for the keys in scope, lookupBatch keys a query, and calls
// scan on each row read, in no particular order.
func (c conn) lookup(ctx context.Context, l Lookup, scope string, keys []string, scan func(scanner) error) error {
	write := InListLookup
	if c.lw != nil {
		write = c.lw.LookupQuery
	}
	keys = distinct(keys)
	for start := 0; start < len(keys); start += lookupBatch {
		query, args := write(l, scope, keys[start:min(start+lookupBatch, len(keys))])
		if err := c.each(ctx, scan, query, args...); err != nil {
			return err
		}
	}
	return nil
}

// distinct returns keys without repeats, in their order: a key asked for
// twice is read once, as an IN list reads it.
func distinct(keys []string) []string {
	seen := make(map[string]bool, len(keys))
	out := keys[:0:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
