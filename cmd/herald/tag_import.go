package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// runTagImport is `herald app tag-import <appId> --file tags.csv`: it
// streams a CSV file of users' tags (a header userId,NAME[:kind],... then
// a row a user) as the body of POST /admin/v1/apps/{appId}/tag-import,
// which applies it in batches of 1,000 rows, and prints each skipped row
// on stdout and the totals on stderr. A malformed row stops the import
// there, naming its line; the batches before it stay imported.
func runTagImport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := newCommand("app tag-import", "herald app tag-import <appId> --file tags.csv [flags]",
		"Imports users' tags from a CSV file (--file - reads stdin): a header row userId,NAME[:kind],...\n"+
			"(kind string, number or boolean; string when left out), then one row a user. An empty cell leaves\n"+
			"that tag as it is. Users unknown or withdrawn, and rows that would leave a user more than 100\n"+
			"tags, are skipped and listed.", "appId")
	src := importFlags(cmd, "CSV")
	positional, c, in, err := src.open(cmd, args, getenv, stdout)
	if err != nil {
		return err
	}
	defer in.Close()
	start := time.Now()
	raw, err := c.Stream(ctx, http.MethodPost, "/admin/v1/apps/"+url.PathEscape(positional[0])+"/tag-import", "text/csv", in)
	if err != nil {
		return fmt.Errorf("app tag-import: %w", err)
	}
	var out struct {
		Imported     int
		SkippedCount int
		Skipped      []struct {
			UserID string
			Line   int
			Reason string
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("app tag-import: answer %s: %w", raw, err)
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(stdout, "skipped line %d (%s): %s\n", s.Line, s.UserID, s.Reason)
	}
	if more := out.SkippedCount - len(out.Skipped); more > 0 {
		fmt.Fprintf(stdout, "… and %d more skipped rows not listed\n", more)
	}
	fmt.Fprintf(stderr, "tag-import: done: %d rows imported, %d skipped in %s\n", out.Imported, out.SkippedCount,
		time.Since(start).Round(time.Millisecond))
	return nil
}
