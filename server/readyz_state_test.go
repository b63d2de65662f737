package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"

	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/sqlite"
)

// readyzState is the whole body of /readyz.
type readyzState struct {
	Status, Database, Migrations, Reason string
}

// readyzOf asks one listener's /readyz for its status and whole body.
func readyzOf(t *testing.T, base string) (int, readyzState) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("GET %s/readyz: %v", base, err)
	}
	defer resp.Body.Close()
	var body readyzState
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s/readyz: decode: %v", base, err)
	}
	return resp.StatusCode, body
}

// waitReadyzState polls both listeners' /readyz (cached for a second) until
// each answers code and want, or fails after 20 s.
func (e *env) waitReadyzState(code int, want readyzState) {
	e.T.Helper()
	for _, base := range []string{e.API.URL, e.Admin.URL} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, body := readyzOf(e.T, base)
			if got == code && body == want {
				break
			}
			if time.Now().After(deadline) {
				e.T.Fatalf("%s/readyz: got %d %+v, want %d %+v", base, got, body, code, want)
			}
			time.Sleep(20 * time.Millisecond) // polling interval, not a wait for work
		}
	}
}

// execDB runs a statement on the test's database, on either engine,
// through the service's own connections.
func (e *env) execDB(query string, args ...any) {
	e.T.Helper()
	var err error
	switch db := e.Node.DB.(type) {
	case *postgres.DB:
		_, err = db.Pool.Exec(context.Background(), query, args...)
	case *sqlite.DB:
		_, err = db.Writer.Exec(query, args...)
	}
	if err != nil {
		e.T.Fatalf("%s: %v", query, err)
	}
}

// TestReadyzDatabaseAndMigrations checks that /readyz names the engine and
// the state of the migrations on both listeners: current when ready, then
// pending (503) once the newest migration's record is taken out of the
// database as if this binary were newer than its schema, and current again
// when it is put back. TestReadyzDatabaseAndMigrations/sqlite or /postgres
// says which engine ran.
func TestReadyzDatabaseAndMigrations(t *testing.T) {
	t.Parallel()
	t.Run(string(testenv.TestEngine()), func(t *testing.T) {
		e := start(t)
		e.waitReadyzState(http.StatusOK, readyzState{Status: "ready", Database: string(testenv.TestEngine()), Migrations: "current"})

		var newest int64
		if err := e.QueryRow(`SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&newest); err != nil {
			t.Fatal(err)
		}
		placeholder := "?"
		if e.Engine == testenv.Postgres {
			placeholder = "$1"
		}
		e.execDB(`DELETE FROM goose_db_version WHERE version_id = `+placeholder, newest)
		e.waitReadyzState(http.StatusServiceUnavailable, readyzState{
			Status: "unavailable", Database: string(testenv.TestEngine()), Migrations: "pending", Reason: "database migrations are not current",
		})
		e.execDB(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (`+placeholder+`, true)`, newest)
		e.waitReadyzState(http.StatusOK, readyzState{Status: "ready", Database: string(testenv.TestEngine()), Migrations: "current"})
	})
}
