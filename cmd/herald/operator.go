package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
)

// operatorUsage is the answer to `herald operator --help`.
const operatorUsage = `usage: herald operator <add|list|update|disable|token> [flags]

Manage the named operators of the admin listener through the admin API of a
running herald serve, with the owner's admin token (or an operator token of an
admin of every app).

commands:
  operator add       add an operator and print their one-use setup link (24 hours)
  operator list      list the operators
  operator update    change an operator's role, apps or name
  operator disable   disable an operator: their sessions, API tokens and setup links end at once
  operator token     make an API token for an operator and print it (shown once)

Run ` + "`herald operator <command> --help`" + ` for the flags of one command.
`

// operatorVerbs are the operator commands.
var operatorVerbs = []string{"add", "list", "update", "disable", "token"}

// operatorFlags names the admin API's fields by the flags that set them.
var operatorFlags = map[string]string{
	"email": "--email", "name": "--name", "role": "--role", "apps": "--apps", "expiresInDays": "--days",
}

// runOperator is `herald operator <verb>`.
func runOperator(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	g := adminGroup{name: "operator", usage: operatorUsage, verbs: operatorVerbs, command: operatorCommand, flags: operatorFlags}
	return g.run(ctx, args, getenv, stdout, stderr)
}

// operatorPath is the admin API path of one operator.
func operatorPath(id string) string { return "/admin/v1/operators/" + url.PathEscape(id) }

// appsFlag reads --apps: "all" is every app (null), else appIds separated
// by commas.
func appsFlag(v string) any {
	if strings.TrimSpace(v) == "all" {
		return nil
	}
	apps := []string{}
	for a := range strings.SplitSeq(v, ",") {
		if a = strings.TrimSpace(a); a != "" {
			apps = append(apps, a)
		}
	}
	return apps
}

const appsUsage = "the apps the operator may see: appIds separated by commas, or all (every app)"

func operatorCommand(verb string) (*command, buildCall) {
	switch verb {
	case "add":
		cmd := newCommand("operator add", "herald operator add --email EMAIL --name NAME --role viewer|operator|admin [--apps a,b] [flags]",
			"Adds an operator and prints their setup link: send it to them; it works once, within 24 hours,\n"+
				"to choose their password. Without --apps the operator sees every app.")
		email := cmd.fs.String("email", "", "the operator's email (required; unique whatever its case)")
		name := cmd.fs.String("name", "", "the operator's name (required)")
		role := cmd.fs.String("role", "", "viewer, operator or admin (required)")
		apps := cmd.fs.String("apps", "all", appsUsage)
		return cmd, func(_ []string, set map[string]bool) (adminCall, error) {
			body := map[string]any{}
			for flagName, v := range map[string]*string{"email": email, "name": name, "role": role} {
				if set[flagName] {
					body[flagName] = *v
				}
			}
			body["apps"] = appsFlag(*apps)
			return adminCall{method: http.MethodPost, path: "/admin/v1/operators", body: body, print: printAddedOperator}, nil
		}
	case "update":
		cmd := newCommand("operator update", "herald operator update <operatorId> [--role R] [--apps a,b|all] [--name N] [flags]",
			"Changes the settings whose flags are given; the others stay. The change applies at once to the\n"+
				"operator's sessions and API tokens.", "operatorId")
		name := cmd.fs.String("name", "", "the operator's name")
		role := cmd.fs.String("role", "", "viewer, operator or admin")
		apps := cmd.fs.String("apps", "", appsUsage)
		return cmd, func(pos []string, set map[string]bool) (adminCall, error) {
			body := map[string]any{}
			if set["name"] {
				body["name"] = *name
			}
			if set["role"] {
				body["role"] = *role
			}
			if set["apps"] {
				body["apps"] = appsFlag(*apps)
			}
			if len(body) == 0 {
				return adminCall{}, errors.New("no setting given: name at least one of --role, --apps, --name")
			}
			return adminCall{method: http.MethodPatch, path: operatorPath(pos[0]), body: body, print: printOperator}, nil
		}
	case "disable":
		cmd := newCommand("operator disable", "herald operator disable <operatorId> [flags]",
			"Disables an operator: their sessions, API tokens and pending setup links end at once. Re-enabling (the dashboard's\n"+
				"Operators page, or PATCH disabled:false) restores no token.", "operatorId")
		return cmd, func(pos []string, _ map[string]bool) (adminCall, error) {
			return adminCall{method: http.MethodPatch, path: operatorPath(pos[0]), body: map[string]any{"disabled": true}, print: printOperator}, nil
		}
	case "token":
		cmd := newCommand("operator token", "herald operator token <operatorId> --name NAME --days D [flags]",
			"Makes an API token for the operator and prints it, once: sent as Authorization: Bearer, it acts\n"+
				"with the operator's role and apps until it expires (1 to 365 days) or is revoked.", "operatorId")
		name := cmd.fs.String("name", "", "what the token is for (required)")
		days := cmd.fs.Int("days", 0, "days until it expires, 1 to 365 (required)")
		return cmd, func(pos []string, set map[string]bool) (adminCall, error) {
			body := map[string]any{}
			if set["name"] {
				body["name"] = *name
			}
			if set["days"] {
				body["expiresInDays"] = *days
			}
			return adminCall{method: http.MethodPost, path: operatorPath(pos[0]) + "/tokens", body: body, print: printFields("tokenId", "token", "expiresAt")}, nil
		}
	}
	return newCommand("operator list", "herald operator list [flags]", "Lists the operators: id, email, name, role, apps, status and TOTP."),
		func([]string, map[string]bool) (adminCall, error) {
			return adminCall{method: http.MethodGet, path: "/admin/v1/operators", print: printOperatorList}, nil
		}
}

type operatorView struct {
	OperatorID, Email, Name, Role string
	Apps                          []string
	Disabled, TOTP                bool
	SetupURL                      string `json:"setupUrl"`
}

func printOperators(w io.Writer, ops []operatorView) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATOR ID\tEMAIL\tNAME\tROLE\tAPPS\tSTATUS\tTOTP")
	for _, o := range ops {
		apps := "all"
		if o.Apps != nil {
			apps = strings.Join(o.Apps, ",")
		}
		status := "active"
		if o.Disabled {
			status = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%t\n", o.OperatorID, o.Email, o.Name, o.Role, apps, status, o.TOTP)
	}
	return tw.Flush()
}

func printOperatorList(w io.Writer, raw []byte) error {
	var l struct{ Operators []operatorView }
	if err := json.Unmarshal(raw, &l); err != nil {
		return err
	}
	return printOperators(w, l.Operators)
}

func printOperator(w io.Writer, raw []byte) error {
	var o operatorView
	if err := json.Unmarshal(raw, &o); err != nil {
		return err
	}
	return printOperators(w, []operatorView{o})
}

// printAddedOperator prints the new operator and their setup link.
func printAddedOperator(w io.Writer, raw []byte) error {
	var o operatorView
	if err := json.Unmarshal(raw, &o); err != nil {
		return err
	}
	if err := printOperators(w, []operatorView{o}); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "setup link (shown once, works once within 24 hours): %s\n", o.SetupURL)
	return err
}
