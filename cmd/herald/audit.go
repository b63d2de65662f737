package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// auditUsage is the answer to `herald audit --help`.
const auditUsage = `usage: herald audit <head|verify> [flags]

Check the access records' chain (docs/access-records.md) through the admin API
of a running herald serve, with the owner's admin token (or an operator token
of an admin of every app).

commands:
  audit head     print the chain's signed head: keep it outside the database
  audit verify   walk the chain; with --head FILE, prove it still holds that head

Run ` + "`herald audit <command> --help`" + ` for the flags of one command.
`

var auditVerbs = []string{"head", "verify"}

// runAudit is `herald audit <verb>`.
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	g := adminGroup{name: "audit", usage: auditUsage, verbs: auditVerbs, command: auditCommand, flags: map[string]string{"head": "--head"}}
	return g.run(ctx, args, getenv, stdout, stderr)
}

func auditCommand(verb string) (*command, buildCall) {
	if verb == "head" {
		return newCommand("audit head", "herald audit head [flags]",
				"Prints the chain's head as JSON, {seq, hash, hmac, at}: the last record, signed with a key\n"+
					"derived from the master key. Keep it where a writer of the database cannot reach (a log\n"+
					"collector, a ticket, another machine); `herald audit verify --head FILE` later proves that no\n"+
					"record up to it was cut or changed."),
			func([]string, map[string]bool) (adminCall, error) {
				return adminCall{method: http.MethodGet, path: "/admin/v1/access-records/head"}, nil
			}
	}
	cmd := newCommand("audit verify", "herald audit verify [--head FILE] [flags]",
		"Walks the whole chain: every record's hash, link and signature. With --head, the file a\n"+
			"`herald audit head` wrote: the chain must still hold that head. Prints the verdict as JSON\n"+
			"and fails when the chain does not hold.")
	head := cmd.fs.String("head", "", "a head `FILE` as herald audit head printed it")
	return cmd, func(_ []string, set map[string]bool) (adminCall, error) {
		path := "/admin/v1/access-records/verify"
		if set["head"] {
			b, err := os.ReadFile(*head)
			if err != nil {
				return adminCall{}, fmt.Errorf("read the head: %w", err)
			}
			path += "?head=" + url.QueryEscape(strings.TrimSpace(string(b)))
		}
		return adminCall{method: http.MethodGet, path: path, print: printVerdict}, nil
	}
}

// printVerdict prints the verdict as the API gave it, and fails when the
// chain does not hold.
func printVerdict(w io.Writer, raw []byte) error {
	var v struct {
		OK          bool   `json:"ok"`
		FirstBroken *int64 `json:"firstBroken"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if _, err := w.Write(raw); err != nil {
		return err
	}
	if !v.OK {
		broken := "the end"
		if v.FirstBroken != nil {
			broken = fmt.Sprintf("record %d", *v.FirstBroken)
		}
		return fmt.Errorf("the access records' chain does not hold from %s", broken)
	}
	return nil
}
