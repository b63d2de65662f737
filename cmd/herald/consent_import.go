package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald/client"
)

// importBatch is how many lines one admin API call imports: the most it
// takes.
const importBatch = 1000

// maxImportLine bounds one line of an import file.
const maxImportLine = 64 << 10

// runConsentImport is `herald app consent-import <appId> --file users.jsonl`:
// it streams a file of any length, one {userId, marketing, marketingNight,
// at} object a line, to POST /admin/v1/apps/{appId}/consent-import in
// batches of 1,000, with progress on stderr and each skipped user on
// stdout. A batch refused for a malformed line stops the import there,
// naming the line; the batches before it stay imported, and importing
// them again skips their users as already imported.
func runConsentImport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := newCommand("app consent-import", "herald app consent-import <appId> --file users.jsonl [flags]",
		"Imports marketing consent collected before Herald, with its original dates (JSON Lines: one\n"+
			`{"userId":"u1","marketing":true,"marketingNight":false,"at":"2024-05-01T09:00:00+09:00"} a line;`+"\n"+
			"--file - reads stdin). Sent in batches of 1,000; users unknown, withdrawn, dated in the future or\n"+
			"before their last consent record are skipped and listed.", "appId")
	src := importFlags(cmd, "JSON Lines")
	positional, c, in, err := src.open(cmd, args, getenv, stdout)
	if err != nil {
		return err
	}
	defer in.Close()
	im := importer{c: c, path: "/admin/v1/apps/" + url.PathEscape(positional[0]) + "/consent-import", stdout: stdout, stderr: stderr, start: time.Now()}
	return im.run(ctx, in)
}

// importer sends an import file's batches and keeps the totals.
type importer struct {
	c                 client.Admin
	path              string
	stdout, stderr    io.Writer
	start             time.Time
	lines             int // lines sent so far
	imported, skipped int
	batch             []json.RawMessage
	batchLine         []int // the file line of each entry of batch
}

func (im *importer) run(ctx context.Context, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if err := checkJSON(text); err != nil {
			return im.malformed(line, err)
		}
		im.batch = append(im.batch, json.RawMessage(bytes.Clone(text)))
		im.batchLine = append(im.batchLine, line)
		if len(im.batch) == importBatch {
			if err := im.send(ctx); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("app consent-import: line %d: %w", line+1, err)
	}
	if len(im.batch) > 0 {
		if err := im.send(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintf(im.stderr, "consent-import: done: %d users, %d imported, %d skipped in %s\n", im.lines, im.imported, im.skipped,
		time.Since(im.start).Round(time.Millisecond))
	return nil
}

// checkJSON is nil when text is one JSON value, else the syntax error in
// words ("invalid character '-' after object key:value pair"), without
// the "json:" prefix of Go's package.
func checkJSON(text []byte) error {
	if json.Valid(text) {
		return nil
	}
	var v any
	err := json.Unmarshal(text, &v)
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return fmt.Errorf("%s at column %d", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	}
	return errors.New(strings.TrimPrefix(fmt.Sprint(err), "json: "))
}

// malformed stops the import at a line that is not JSON, before its batch
// is sent.
func (im *importer) malformed(line int, err error) error {
	first := line
	if len(im.batchLine) > 0 {
		first = im.batchLine[0]
	}
	before := "nothing was imported"
	if im.lines > 0 {
		before = fmt.Sprintf("the %d users before them were sent (%d imported)", im.lines, im.imported)
	}
	return fmt.Errorf("app consent-import: line %d is not JSON (%v): lines %d-%d were not sent; %s", line, err, first, line, before)
}

// entryField finds the entry a refusal names: users[3].at.
var entryField = regexp.MustCompile(`^users\[(\d+)\]\.?(.*)$`)

// send imports one batch and reports it.
func (im *importer) send(ctx context.Context) error {
	body, err := json.Marshal(map[string]any{"users": im.batch})
	if err != nil { // every line was checked by checkJSON
		return fmt.Errorf("app consent-import: lines %d-%d: %w", im.batchLine[0], im.batchLine[len(im.batchLine)-1], err)
	}
	raw, err := im.c.Do(ctx, http.MethodPost, im.path, json.RawMessage(body))
	if err != nil {
		var e *client.AdminError
		if errors.As(err, &e) && e.Status == http.StatusBadRequest {
			return im.refused(e)
		}
		return fmt.Errorf("app consent-import: after %d users imported: %w", im.imported, err)
	}
	var out struct {
		Imported int
		Skipped  []struct{ UserID, Reason string }
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("app consent-import: answer %s: %w", raw, err)
	}
	for _, s := range out.Skipped {
		fmt.Fprintf(im.stdout, "skipped %s: %s\n", s.UserID, s.Reason)
	}
	im.lines += len(im.batch)
	im.imported += out.Imported
	im.skipped += len(out.Skipped)
	im.batch, im.batchLine = im.batch[:0], im.batchLine[:0]
	fmt.Fprintf(im.stderr, "consent-import: %d users, %d imported, %d skipped\n", im.lines, im.imported, im.skipped)
	return nil
}

// refused names the file lines of a refused batch's problems.
func (im *importer) refused(e *client.AdminError) error {
	for i, d := range e.Details {
		m := entryField.FindStringSubmatch(d.Field)
		if m == nil {
			continue
		}
		if n, err := strconv.Atoi(m[1]); err == nil && n < len(im.batchLine) {
			e.Details[i].Field = "line " + strconv.Itoa(im.batchLine[n])
			if m[2] != "" {
				e.Details[i].Field += " " + m[2]
			}
		}
	}
	return fmt.Errorf("app consent-import: a batch was refused and nothing of it imported (lines %d-%d); the %d users before it were sent (%d imported): %w",
		im.batchLine[0], im.batchLine[len(im.batchLine)-1], im.lines, im.imported, e)
}

// importSource is the flags every import command takes: the file, and the
// admin API to send it to.
type importSource struct {
	file, server, token *string
}

// importFlags adds the import flags to cmd; format names the file's.
func importFlags(cmd *command, format string) importSource {
	return importSource{
		file:   cmd.fs.String("file", "", format+" file to import, - for stdin (required)"),
		server: cmd.fs.String("server", "", "admin API base `URL` (default http://$HERALD_ADMIN_ADDR, else http://127.0.0.1:8081)"),
		token:  cmd.fs.String("token", "", "admin token (default $HERALD_ADMIN_TOKEN, else the admin-token file of $HERALD_DATA_DIR or ./herald-data)"),
	}
}

// open parses the command line, fills the admin client's defaults and
// opens the file (stdin for -), which the caller closes.
func (src importSource) open(cmd *command, args []string, getenv func(string) string, stdout io.Writer) ([]string, client.Admin, io.ReadCloser, error) {
	positional, err := cmd.parse(args, stdout)
	if err != nil {
		return nil, client.Admin{}, nil, err
	}
	if *src.file == "" {
		return nil, client.Admin{}, nil, fmt.Errorf("%s: --file is required", cmd.name)
	}
	c := client.Admin{Base: *src.server, Token: *src.token}
	if err := c.Defaults(getenv); err != nil {
		return nil, client.Admin{}, nil, err
	}
	if *src.file == "-" {
		return positional, c, io.NopCloser(os.Stdin), nil
	}
	f, err := os.Open(*src.file)
	if err != nil {
		return nil, client.Admin{}, nil, fmt.Errorf("%s: %w", cmd.name, err)
	}
	return positional, c, f, nil
}
