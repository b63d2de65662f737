package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
)

// accessKey is the lane key of every append (see TxOptions.Key): they
// all lock the chain's head, so a process runs them in one lane, where
// they share commits instead of waiting for each other's.
const accessKey = "access_chain"

// accessHead is the chain's head as this process last wrote it, so that
// an append need not read it first: the append's guarded write of the
// head (seq and hash as known) both checks it and locks the row. When
// another node appended meanwhile, or a batch holding this process's
// last append did not commit, the guard fails and the append runs again
// from the head it then reads.
type accessHead struct {
	mu    sync.Mutex
	known bool
	seq   int64
	hash  string
}

func (h *accessHead) get() (seq int64, hash string, known bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq, h.hash, h.known
}

func (h *accessHead) set(seq int64, hash string, known bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq, h.hash, h.known = seq, hash, known
}

// AppendAccessRecords appends recs to the chain (see
// access.Store). Concurrent appends are gathered (accessBatches):
// one transaction writes the records of all that joined before it ran.
// That transaction is batched (TxOptions.Batched), so it may also share
// its commit with other requests' (the Group's group commit); each append
// returns once the commit holding its records is done.
func (s *AuditStore) AppendAccessRecords(ctx context.Context, key access.Key, recs []access.Record) ([]access.Record, error) {
	if len(recs) == 0 {
		return []access.Record{}, nil
	}
	for {
		s.appends.mu.Lock()
		b := s.appends.open
		if b != nil && !slices.Equal(b.key, key) {
			b = nil // signed with another key: a batch of its own
		}
		lead := b == nil
		if lead {
			b = &accessBatch{done: make(chan struct{}), key: key}
			s.appends.open = b
		}
		from := len(b.recs)
		b.recs = append(b.recs, recs...)
		s.appends.mu.Unlock()
		if lead {
			b.out, b.err = s.appendAccess(ctx, b.key, b.take(&s.appends))
			s.appends.mu.Lock()
			if s.appends.open == b {
				s.appends.open = nil // closed to joiners even when it never ran
			}
			s.appends.mu.Unlock()
			close(b.done)
		} else {
			select {
			case <-b.done:
			case <-ctx.Done():
				return nil, herald.Unavailable(ctx.Err()) // the records may still be written
			}
		}
		switch {
		case from+len(recs) <= len(b.out):
			return b.out[from : from+len(recs)], nil
		case b.err != nil && (lead || from < b.taken):
			return nil, b.err
		}
		// Joined after the transaction last ran: append again.
	}
}

// accessBatches gathers the records of concurrent appends: the first
// append's transaction (queued in the Group like any batched one) takes
// every record appended until it runs, and writes them with one head
// update, so a busy admin listener pays a statement per record, not a
// transaction. Those who joined wait for its commit.
type accessBatches struct {
	mu   sync.Mutex
	open *accessBatch // joined until its transaction runs; nil when none
}

// accessBatch is the records of one transaction and, once done is closed,
// what became of them: out holds the records written, in order (none
// when err); taken counts those the transaction took.
type accessBatch struct {
	key   access.Key
	recs  []access.Record
	done  chan struct{}
	out   []access.Record
	err   error
	taken int
}

// take returns what the transaction calls for its records: it closes the
// batch to later appends and returns every record joined so far.
func (b *accessBatch) take(bs *accessBatches) func() []access.Record {
	return func() []access.Record {
		bs.mu.Lock()
		defer bs.mu.Unlock()
		if bs.open == b {
			bs.open = nil
		}
		b.taken = len(b.recs)
		return b.recs
	}
}

// appendAccess runs the append of the records recs returns (called in the
// transaction, once per run of it).
func (s *AuditStore) appendAccess(ctx context.Context, key access.Key, recs func() []access.Record) ([]access.Record, error) {
	var out []access.Record
	err := s.inTxRetryWith(ctx, TxOptions{Batched: true, Key: accessKey}, true, func(c conn) error {
		var err error
		out, err = s.chainIn(ctx, c, key, recs(), nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// chainIn appends recs to the chain in the transaction c, signed with key,
// and runs more in the same pipeline: the head's guarded write, the
// records' inserts, then more. It starts from the head this process last
// wrote, or reads (and locks) it when unknown.
func (s *AuditStore) chainIn(ctx context.Context, c conn, key access.Key, recs []access.Record, more []Stmt) ([]access.Record, error) {
	seq, prev, known := s.head.get()
	if !known {
		var err error
		if seq, prev, err = lockHead(ctx, c); err != nil {
			return nil, err
		}
	}
	return s.chainAt(ctx, c, key, recs, more, seq, prev)
}

// lockHead reads the chain's head and locks its row for the rest of the
// transaction.
func lockHead(ctx context.Context, c conn) (seq int64, hash string, err error) {
	err = c.queryRow(ctx, c.locking(`SELECT seq, hash FROM access_chain WHERE id = 1`)).Scan(&seq, &hash)
	return seq, hash, err
}

// chainAt is chainIn from the head (headSeq, headHash).
func (s *AuditStore) chainAt(ctx context.Context, c conn, key access.Key, recs []access.Record, more []Stmt,
	headSeq int64, headHash string) ([]access.Record, error) {
	out := make([]access.Record, len(recs))
	seq, prev := headSeq, headHash
	for i, r := range recs {
		r.Chain(seq+int64(i)+1, prev, key)
		prev, out[i] = r.Hash, r
	}
	if len(out) == 0 {
		return out, c.pipeline(ctx, more...)
	}
	last := out[len(out)-1]
	stmts := []Stmt{{Query: `UPDATE access_chain SET seq = ?, hash = ? WHERE id = 1 AND seq = ? AND hash = ?`,
		Args: []any{last.Seq, last.Hash, headSeq, headHash}, Exec: func(n int64) error { return guard(n, nil) }}}
	stmts = append(append(stmts, accessInserts(out)...), more...)
	if err := c.pipeline(ctx, stmts...); err != nil {
		s.head.set(0, "", false) // read it again
		return nil, err
	}
	s.head.set(last.Seq, last.Hash, true)
	return out, nil
}

// accessInserts are the statements that insert recs and the rows of their
// users: multi-row inserts (accessRowsInsert), so that a batch of records
// costs a few statements, not one or more per record.
func accessInserts(recs []access.Record) []Stmt {
	rows := make([][]any, len(recs))
	var users [][]any
	for i, r := range recs {
		ids, _ := json.Marshal(r.UserIDs)
		rows[i] = []any{r.Seq, r.At.UnixMilli(), r.Actor, r.Email, r.IP, r.Method, r.Route, r.AppID, string(ids),
			r.UserCount, r.PushID, r.Status, r.Reason, r.Count, r.PrevHash, r.Hash, r.HMAC}
		for _, u := range r.UserIDs {
			users = append(users, []any{u, r.Seq})
		}
	}
	stmts := accessRowsInsert(`INSERT INTO access_records (`+accessColumns+`) VALUES `, ``, rows)
	for _, r := range recs {
		if r.Intent != "" {
			stmts = append(stmts, Stmt{Query: `DELETE FROM access_intents WHERE id = ?`, Args: []any{r.Intent}})
		}
	}
	return append(stmts, accessRowsInsert(`INSERT INTO access_record_users (user_id, seq) VALUES `,
		` ON CONFLICT (user_id, seq) DO NOTHING`, users)...)
}

// maxAccessRows is the most rows one insert of accessRowsInsert writes.
const maxAccessRows = 128

// accessRowsInsert is insert (ending in VALUES) of rows, then tail, as
// statements of a power of two rows each, at most maxAccessRows: a few
// statements for any number of rows, in a few shapes only (each engine
// keeps its prepared statements by their text). Every row has as many
// values.
func accessRowsInsert(insert, tail string, rows [][]any) []Stmt {
	var stmts []Stmt
	for len(rows) > 0 {
		n := maxAccessRows
		for n > len(rows) {
			n /= 2
		}
		one := "(" + placeholders(len(rows[0])) + ")"
		args := make([]any, 0, n*len(rows[0]))
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		stmts = append(stmts, Stmt{Query: insert + strings.TrimSuffix(strings.Repeat(one+",", n), ",") + tail, Args: args})
		rows = rows[n:]
	}
	return stmts
}

const accessColumns = `seq, at, actor, email, ip, method, route, app_id, user_ids, user_count, push_id, status,
	reason, count, prev_hash, hash, hmac`

func scanAccessRecord(row scanner) (access.Record, error) {
	var r access.Record
	var at int64
	var actor sql.NullString
	var ids string
	err := row.Scan(&r.Seq, &at, &actor, &r.Email, &r.IP, &r.Method, &r.Route, &r.AppID, &ids, &r.UserCount,
		&r.PushID, &r.Status, &r.Reason, &r.Count, &r.PrevHash, &r.Hash, &r.HMAC)
	if err != nil {
		return r, err
	}
	r.At = time.UnixMilli(at).UTC()
	if actor.Valid {
		r.Actor = &actor.String
	}
	r.UserIDs = []string{}
	return r, json.Unmarshal([]byte(ids), &r.UserIDs)
}

// accessWhere is the condition f sets on records after seq after.
func accessWhere(f access.Filter, after int64) (string, []any) {
	where, args := ` WHERE r.seq > ?`, []any{after}
	if !f.From.IsZero() {
		where, args = where+` AND r.at >= ?`, append(args, f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		where, args = where+` AND r.at < ?`, append(args, f.To.UnixMilli())
	}
	if f.Actor != "" {
		where, args = where+` AND r.actor = ?`, append(args, f.Actor)
	}
	if f.AppID != "" {
		where, args = where+` AND r.app_id = ?`, append(args, f.AppID)
	}
	if f.UserID != "" {
		where, args = where+` AND EXISTS (SELECT 1 FROM access_record_users u WHERE u.user_id = ? AND u.seq = r.seq)`,
			append(args, f.UserID)
	}
	return where, args
}

// accessPage reads up to limit records f selects after seq after.
func (s *AuditStore) accessPage(ctx context.Context, f access.Filter, after int64, limit int) ([]access.Record, error) {
	where, args := accessWhere(f, after)
	out := []access.Record{}
	err := s.reader().each(ctx, func(row scanner) error {
		r, err := scanAccessRecord(row)
		out = append(out, r)
		return err
	}, `SELECT `+accessColumns+` FROM access_records r`+where+` ORDER BY r.seq LIMIT ?`, append(args, limit)...)
	return out, err
}

// AccessRecords returns a page of records; the cursor is the last one's
// seq.
func (s *AuditStore) AccessRecords(ctx context.Context, f access.Filter) ([]access.Record, string, error) {
	if f.Limit < 1 || f.Limit > access.MaxLimit {
		return nil, "", herald.Invalid(herald.Detail{Field: "limit", Reason: "must be 1 to 1000"})
	}
	var after int64
	if f.Cursor != "" {
		n, err := strconv.ParseInt(f.Cursor, 10, 64)
		if err != nil || n < 0 {
			return nil, "", herald.Invalid(herald.Detail{Field: "cursor", Reason: "is not a cursor this list gave"})
		}
		after = n
	}
	out, err := s.accessPage(ctx, f, after, f.Limit+1)
	if err != nil || len(out) <= f.Limit {
		return out, "", err
	}
	out = out[:f.Limit]
	return out, strconv.FormatInt(out[len(out)-1].Seq, 10), nil
}

// accessStep is how many records EachAccessRecord and VerifyAccessRecords
// read at a time: each page is a query of its own, so a long walk holds
// no connection or snapshot while its caller writes.
const accessStep = 1000

// EachAccessRecord calls fn with every record f selects, a page at a
// time.
func (s *AuditStore) EachAccessRecord(ctx context.Context, f access.Filter, fn func(access.Record) error) error {
	var after int64
	for {
		page, err := s.accessPage(ctx, f, after, accessStep)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < accessStep {
			return nil
		}
		after = page[len(page)-1].Seq
	}
}

// VerifyAccessRecords walks the chain from its anchor: each record's hash
// must hold, its PrevHash be the hash of the one before and its hmac be
// key's (only records from before records were signed, at the chain's
// start, may have none), the last must be the head and, given head, the
// chain must still hold it. It reads the head first: records appended
// during the walk are not judged.
func (s *AuditStore) VerifyAccessRecords(ctx context.Context, key access.Key, given *access.Head) (access.Verdict, error) {
	if given != nil && !key.Signs(given.Hash, given.HMAC) {
		return access.Verdict{}, herald.Invalid(herald.Detail{Field: "head", Reason: "its hmac is not this master key's: it is not a head this chain printed"})
	}
	var headSeq int64
	var head, anchor string
	if err := s.reader().queryRow(ctx, `SELECT seq, hash, anchor FROM access_chain WHERE id = 1`).
		Scan(&headSeq, &head, &anchor); err != nil {
		return access.Verdict{}, err
	}
	v := access.Verdict{OK: true}
	broken := func(seq int64) {
		if v.OK {
			v.OK, v.FirstBroken = false, &seq
		}
	}
	prev, last, first, signed := anchor, int64(-1), int64(-1), false
	err := s.EachAccessRecord(ctx, access.Filter{}, func(r access.Record) error {
		if r.Seq > headSeq && (given == nil || r.Seq > given.Seq) {
			return errStop
		}
		v.Records++
		if first < 0 {
			first = r.Seq
		}
		if r.HMAC == "" {
			v.Unsigned++
		}
		badMAC := r.HMAC == "" && signed || r.HMAC != "" && !key.Signs(r.Hash, r.HMAC)
		signed = signed || r.HMAC != ""
		if r.PrevHash != prev || !r.Intact() || badMAC || last >= 0 && r.Seq != last+1 ||
			given != nil && r.Seq == given.Seq && r.Hash != given.Hash {
			broken(r.Seq)
		}
		prev, last = r.Hash, r.Seq
		return nil
	})
	if err != nil && err != errStop {
		return access.Verdict{}, err
	}
	if given != nil && first > given.Seq {
		return access.Verdict{}, herald.Invalid(herald.Detail{Field: "head",
			Reason: "its record was pruned (kept records start at " + strconv.FormatInt(first, 10) + "): give a later head"})
	}
	if prev != head || last >= 0 && last != headSeq {
		broken(max(last, 0) + 1)
	}
	if given != nil && last < given.Seq {
		broken(max(last, 0) + 1) // the tail was cut below the head kept outside
	}
	return v, nil
}

// AccessHead returns the chain's last record as a head.
func (s *AuditStore) AccessHead(ctx context.Context) (access.Head, error) {
	var h access.Head
	var at int64
	err := s.reader().queryRow(ctx, `SELECT r.seq, r.hash, r.hmac, r.at FROM access_records r
		JOIN access_chain c ON c.id = 1 AND r.seq = c.seq`).Scan(&h.Seq, &h.Hash, &h.HMAC, &at)
	h.At = time.UnixMilli(at).UTC()
	return h, err
}

// maxPendingRecords bounds the records one RecordPending run appends of
// each kind; the rest wait for the next run.
const maxPendingRecords = 1000

// RecordIntent keeps an intent; its transaction is batched, so it shares
// its commit with other requests' (the Group's group commit).
func (s *AuditStore) RecordIntent(ctx context.Context, id string, rec access.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return s.inTxWith(ctx, TxOptions{Batched: true}, func(c conn) error {
		_, err := c.exec(ctx, `INSERT INTO access_intents (id, at, record) VALUES (?, ?, ?)`, id, rec.At.UnixMilli(), string(b))
		return err
	})
}

// RecordPending appends the aggregated records of the attempt windows
// ended by now and the records of abandoned intents, and forgets them, in
// the transaction that appends them: each is recorded once, on whichever
// node gets there first.
func (s *AuditStore) RecordPending(ctx context.Context, key access.Key, now time.Time) (int, error) {
	ended := now.Add(-identity.AttemptWindow).UnixMilli()
	// Most runs find nothing: a read says so without the write
	// transaction and the head's lock (what it misses, the next run takes).
	var pending bool
	if err := s.reader().queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM attempts WHERE started_at <= ?)
		OR EXISTS (SELECT 1 FROM attempt_windows) OR EXISTS (SELECT 1 FROM access_intents WHERE at <= ?)`,
		ended, now.Add(-access.IntentAbandoned).UnixMilli()).Scan(&pending); err != nil || !pending {
		return 0, err
	}
	var n int
	err := s.inTxRetryWith(ctx, TxOptions{Batched: true, Key: accessKey}, true, func(c conn) error {
		n = 0
		// The head first: it is locked until commit, so a run on another
		// node waits here and then reads what this one left, never the
		// windows and intents this one is recording.
		headSeq, headHash, err := lockHead(ctx, c)
		if err != nil {
			return err
		}
		if err := c.pipeline(ctx,
			Stmt{Query: `INSERT INTO attempt_windows (key, started_at, count)
				SELECT key, started_at, attempts - free FROM attempts WHERE started_at <= ? AND attempts > free
				ON CONFLICT (key, started_at) DO NOTHING`, Args: []any{ended}},
			Stmt{Query: `DELETE FROM attempts WHERE started_at <= ?`, Args: []any{ended}}); err != nil {
			return err
		}
		var recs []access.Record
		var forget []Stmt
		err = c.each(ctx, func(row scanner) error {
			var k string
			var started int64
			var count int
			if err := row.Scan(&k, &started, &count); err != nil {
				return err
			}
			recs = append(recs, identity.AttemptRecord(k, time.UnixMilli(started).UTC(), count))
			forget = append(forget, Stmt{Query: `DELETE FROM attempt_windows WHERE key = ? AND started_at = ?`, Args: []any{k, started},
				Exec: func(n int64) error { return guard(n, nil) }})
			return nil
		}, `SELECT key, started_at, count FROM attempt_windows ORDER BY started_at, key LIMIT ?`, maxPendingRecords)
		if err != nil {
			return err
		}
		err = c.each(ctx, func(row scanner) error {
			var id, b string
			if err := row.Scan(&id, &b); err != nil {
				return err
			}
			var r access.Record
			if err := json.Unmarshal([]byte(b), &r); err != nil {
				return fmt.Errorf("intent %s: %w", id, err)
			}
			r.Status, r.Intent = access.StatusUnknown, id
			recs = append(recs, r)
			return nil
		}, `SELECT id, record FROM access_intents WHERE at <= ? ORDER BY at, id LIMIT ?`,
			now.Add(-access.IntentAbandoned).UnixMilli(), maxPendingRecords)
		if err != nil {
			return err
		}
		_, err = s.chainAt(ctx, c, key, recs, forget, headSeq, headHash)
		n = len(recs)
		return err
	})
	return n, err
}

// errStop ends a walk early.
var errStop = errStopT{}

type errStopT struct{}

func (errStopT) Error() string { return "stop" }

// PruneAccessRecords removes up to limit records of the chain's start
// answered before before, and keeps the PrevHash of the first left as the
// anchor. It stops at the first record answered at or after before, so
// the chain is only ever cut at its start.
func (s *AuditStore) PruneAccessRecords(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit < 1 {
		return 0, nil
	}
	var n int
	err := s.inTx(ctx, func(c conn) error {
		headSeq, head, err := lockHead(ctx, c)
		if err != nil {
			return err
		}
		// cut is the first record kept: the first answered at or after
		// before, at most limit past the start.
		var first, cut sql.NullInt64
		if err := c.queryRow(ctx, `SELECT MIN(seq) FROM access_records`).Scan(&first); err != nil {
			return err
		}
		if n = 0; !first.Valid {
			return nil
		}
		if err := c.queryRow(ctx, `SELECT MIN(seq) FROM access_records WHERE at >= ?`, before.UnixMilli()).
			Scan(&cut); err != nil {
			return err
		}
		end := headSeq + 1
		if cut.Valid {
			end = cut.Int64
		}
		end = min(end, first.Int64+int64(limit))
		anchor := head
		if end <= headSeq {
			if err := c.queryRow(ctx, `SELECT prev_hash FROM access_records WHERE seq = ?`, end).Scan(&anchor); err != nil {
				return err
			}
		}
		removed, err := c.exec(ctx, `DELETE FROM access_records WHERE seq < ?`, end)
		if err != nil {
			return err
		}
		n = int(removed)
		return c.pipeline(ctx,
			Stmt{Query: `DELETE FROM access_record_users WHERE seq < ?`, Args: []any{end}},
			Stmt{Query: `UPDATE access_chain SET anchor = ? WHERE id = 1`, Args: []any{anchor}})
	})
	return n, err
}
