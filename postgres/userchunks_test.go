package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// bloomHas is userBloom's probe, in Go.
func bloomHas(bloom []byte, user string) bool {
	h := sha256.Sum256([]byte(user))
	bits := uint32(len(bloom) * 8)
	for i := range bloomHashes {
		n := binary.BigEndian.Uint32(h[4*i:]) % bits
		if bloom[n/8]&(1<<(n%8)) == 0 {
			return false
		}
	}
	return true
}

// TestUserBloomProbedInSQL: a filter built by userBloom passes, under the
// SQL of bloomProbe and userWords, every user it was built of (IDs of
// every script, so the hash of the same UTF-8 bytes on both sides), and of
// 10,000 others exactly those the filter's own probe passes, few (about
// 0.3 % at 12 bits a user).
func TestUserBloomProbedInSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := withApps(t, pgtest.BaseURL(t), 0)
	users := []string{"u1", "사용자-7", "ユーザー", "😀", "a b", "x'y", ""}
	for i := range 493 {
		users = append(users, fmt.Sprintf("user-%d", i))
	}
	bloom := userBloom(users)
	if want := 12 * 500 / 8; len(bloom) != want {
		t.Errorf("filter of 500 users: %d bytes, want %d", len(bloom), want)
	}
	for _, u := range users {
		var in bool
		if err := db.Pool.QueryRow(ctx, `SELECT `+bloomProbe("b", userWords("$2"))+` FROM (SELECT $1::bytea AS bloom) AS b`,
			bloom, u).Scan(&in); err != nil || !in {
			t.Errorf("%q: got %v (%v), want it passed", u, in, err)
		}
	}
	var sqlPassed int
	if err := db.Pool.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT $1::bytea AS bloom) AS b, generate_series(0, 9999) AS n
		WHERE `+bloomProbe("b", userWords("'other-' || n")), bloom).Scan(&sqlPassed); err != nil {
		t.Fatal(err)
	}
	goPassed := 0
	for n := range 10_000 {
		if bloomHas(bloom, fmt.Sprintf("other-%d", n)) {
			goPassed++
		}
	}
	if sqlPassed != goPassed || goPassed > 100 {
		t.Errorf("of 10,000 other users, %d passed in SQL and %d in Go; want the same, about 30", sqlPassed, goPassed)
	}
}

// TestUserChunksReadWhatTheFilterPasses: a user's export reads the
// filters of the app's chunks and only the chunks they pass: 100 pushes
// of 200 chunks of 50 users each, the user in one chunk of each, under
// either plan: the query answers those 100 chunks, and push_chunks is read
// for fewer than 1,000 of the 20,000 (the 100 and the false positives, about
// 0.3 % of the rest).
func TestUserChunksReadWhatTheFilterPasses(t *testing.T) {
	db := loadedDevices(t, pgtest.BaseURL(t), ``, false)
	ctx := context.Background()
	for _, sql := range []string{
		`INSERT INTO pushes (id, app_id, kind, status, marketing, is_marketing_opt, requested_users, server_actions_half, created_at)
			SELECT 'push_' || lpad(i::text, 4, '0'), 'app_00', 'users', 'sent', FALSE, FALSE, 1000, 0, i FROM generate_series(1, 100) AS i`,
		`INSERT INTO push_chunks (push_id, chunk, size, slots, users)
			SELECT 'push_' || lpad(p::text, 4, '0'), c, 50, '\x00'::bytea,
				(SELECT jsonb_agg('u' || (c * 50 + k)) FROM generate_series(1, 50) AS k)
			FROM generate_series(1, 100) AS p, generate_series(0, 199) AS c`} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	var blooms [][]any
	for p := 1; p <= 100; p++ {
		for c := range 200 {
			users := make([]string, 50)
			for k := range users {
				users[k] = fmt.Sprintf("u%d", c*50+k+1)
			}
			blooms = append(blooms, []any{fmt.Sprintf("push_%04d", p), c, userBloom(users)})
		}
	}
	if _, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"chunk_user_blooms"}, []string{"push_id", "chunk", "bloom"},
		pgx.CopyFromRows(blooms)); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`ANALYZE pushes`, `ANALYZE push_chunks`, `ANALYZE chunk_user_blooms`, `ANALYZE user_pushes`} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	query := rebind(engine{}.UserChunksQuery(`p.title`))
	args := []any{"app_00", "u77"} // in chunk 1 of each push
	rows, err := db.Pool.Query(ctx, query, args...)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	for rows.Next() {
		var push string
		var chunk int
		var title *string
		if err := rows.Scan(&push, &chunk, &title); err != nil {
			t.Fatal(err)
		}
		found[push] = chunk
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for p := 1; p <= 100; p++ {
		if c, ok := found[fmt.Sprintf("push_%04d", p)]; !ok || c != 1 {
			t.Errorf("push_%04d: found chunk %d (%v), want 1", p, c, ok)
		}
	}
	if len(found) != 100 {
		t.Errorf("found %d pushes, want 100", len(found))
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if read := chunksRead(t, db, mode, query, args); read == 0 || read >= 1000 {
			t.Errorf("%s: push_chunks read %d times, want 100 and a few false positives", mode, read)
		}
	}
}

// chunksRead runs query under EXPLAIN ANALYZE and plan_cache_mode mode and
// returns how many rows of push_chunks it looked at.
func chunksRead(t *testing.T, db *DB, mode, query string, args []any) int {
	t.Helper()
	out := explain(t, db, mode, `ANALYZE, FORMAT JSON`, query, args)
	type node struct {
		Relation string  `json:"Relation Name"`
		Rows     float64 `json:"Actual Rows"`
		Loops    float64 `json:"Actual Loops"`
		Removed  float64 `json:"Rows Removed by Filter"`
		Plans    []node  `json:"Plans"`
	}
	var plans []struct{ Plan node }
	if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain: %v in %s", err, out)
	}
	read := 0
	var walk func(n node)
	walk = func(n node) {
		if n.Relation == "push_chunks" { // a probe by key is a loop (its rows a loop's average, rounded)
			read += int(max(n.Loops, (n.Rows+n.Removed)*n.Loops))
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plans[0].Plan)
	return read
}

// TestChunkUserBloomsBackfill: migration 47 gives each chunk kept so far
// the filter userBloom builds of its users column, and the slots lz4.
func TestChunkUserBloomsBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p := migratedTo(t, 46)
	users := []string{"u1", "사용자", "😀"}
	for i := range 997 {
		users = append(users, fmt.Sprintf("user-%d", i))
	}
	list, _ := json.Marshal(users)
	for _, q := range []string{
		`INSERT INTO apps (id, name, api_key, secret_hash, tier, time_zone, created_at) VALUES ('a', 'a', 'k', '\x00', 'free', 'Asia/Seoul', 1)`,
		`INSERT INTO pushes (id, app_id, kind, status, marketing, is_marketing_opt, requested_users, server_actions_half, created_at)
			VALUES ('p', 'a', 'users', 'sent', FALSE, FALSE, 1000, 0, 1)`,
		`INSERT INTO push_chunks (push_id, chunk, size, slots, users) VALUES ('p', 0, 1000, '\x00'::bytea, '` + string(list) + `'),
			('p', 1, 1, '\x00'::bytea, NULL)`,
	} {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := p.UpTo(ctx, 47); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	rows, err := db.Pool.Query(ctx, `SELECT bloom FROM chunk_user_blooms ORDER BY chunk`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !bytes.Equal(got[0], userBloom(users)) {
		t.Errorf("backfilled filters: %d, want one, userBloom's (%d bytes)", len(got), len(userBloom(users)))
	}
	want := "l" // lz4 for the slots, where the server has it
	if _, err := db.Pool.Exec(ctx, `CREATE TEMP TABLE lz4_probe (b BYTEA COMPRESSION lz4)`); err != nil {
		want = ""
	}
	var method string
	if err := db.Pool.QueryRow(ctx, `SELECT attcompression::text FROM pg_attribute
		WHERE attrelid = 'push_chunks'::regclass AND attname = 'slots'`).Scan(&method); err != nil || method != want {
		t.Errorf("slots' compression: %q (%v), want %q", method, err, want)
	}
}
