package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaTimeout bounds creating or dropping a run's schema.
const schemaTimeout = time.Minute

// Schema creates a fresh PostgreSQL schema in the database at base (a
// postgres:// URL) and returns the URL of connections that use it
// (search_path) and a function that drops it, so that runs on one
// database never see one another's data.
func Schema(ctx context.Context, base string) (string, func() error, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("--database-url: %w", err)
	}
	suffix := make([]byte, 6)
	rand.Read(suffix)
	schema := "herald_bench_" + hex.EncodeToString(suffix)
	ctx, cancel := context.WithTimeout(ctx, schemaTimeout)
	defer cancel()
	if err := execOn(ctx, base, `CREATE SCHEMA `+schema); err != nil {
		return "", nil, fmt.Errorf("bench: create schema: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), schemaTimeout)
		defer cancel()
		if err := execOn(ctx, base, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			return fmt.Errorf("bench: drop schema %s: %w", schema, err)
		}
		return nil
	}
	return u.String(), drop, nil
}

// SchemaOf returns the schema (search_path) of a URL Schema made; "" when
// it names none.
func SchemaOf(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return ""
	}
	return u.Query().Get("search_path")
}

// execOn runs one statement on a connection of its own. The URL is read
// as the nodes' pools read it, so pool parameters (pool_max_conns) are
// not sent to the server.
func execOn(ctx context.Context, dbURL, sql string) error {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}
