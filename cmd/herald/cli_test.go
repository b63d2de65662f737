package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// herald runs the command line in-process and returns its stdout, stderr
// and error.
func heraldCLI(t *testing.T, getenv func(string) string, args ...string) (string, string, error) {
	t.Helper()
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, getenv, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestCLIHelp(t *testing.T) {
	t.Parallel()
	// Each command's help: exit 0, its own synopsis, its own flags, and
	// none of another command's.
	cases := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"serve", "--help"}, []string{"usage: herald serve", "--addr", "--admin-addr", "--demo", "--trust-proxy", "--rate-limit"}, []string{"--users"}},
		{[]string{"migrate", "--help"}, []string{"usage: herald migrate", "--data-dir", "--database-url"}, []string{"--addr", "--demo", "--trust-proxy", "--rate-limit", "--admin-token", "usage: herald serve"}},
		{[]string{"fcm-emulator", "--help"}, []string{"usage: herald fcm-emulator", "--addr", "--latency", "--service-account FILE", "--project"}, []string{"--data-dir"}},
		{[]string{"bench", "-h"}, []string{"usage: herald bench", "--users", "--latency", "--json"}, []string{"--data-dir"}},
		{[]string{"app", "--help"}, []string{"usage: herald app", "app create", "app list", "app show"}, []string{"--name"}},
		{[]string{"app", "create", "--help"}, []string{"usage: herald app create", "--name", "--tier", "--app-user", "--time-zone", "--server", "--token", "Asia/Seoul"}, []string{"--addr", "<appId>"}},
		{[]string{"app", "list", "--help"}, []string{"usage: herald app list", "--server", "--token", "--json"}, []string{"--name", "--tier"}},
		{[]string{"app", "show", "--help"}, []string{"usage: herald app show <appId>", "--server"}, []string{"--name", "--tier"}},
		{[]string{"version", "--help"}, []string{"usage: herald version"}, []string{"--addr"}},
		{[]string{"help", "migrate"}, []string{"usage: herald migrate"}, []string{"--addr"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errOut, err := heraldCLI(t, nil, c.args...)
			if err != nil || errOut != "" {
				t.Fatalf("got error %v, stderr %q; want exit 0 with the help on stdout", err, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("help: got\n%s\nwant it to mention %q", out, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("help: got\n%s\nwant no %q (another command's)", out, n)
				}
			}
		})
	}
}

func TestCLICommandList(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, _, err := heraldCLI(t, nil, args...)
		if err != nil {
			t.Fatalf("herald %v: got %v, want exit 0", args, err)
		}
		for _, cmd := range []string{"serve", "migrate", "fcm-emulator", "bench", "app create", "app list", "app show", "app consent-import", "app tag-import", "version"} {
			n := 0
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "  "+cmd+" ") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("herald %v: got %d lines for %q in\n%s\nwant one", args, n, cmd, out)
			}
		}
	}
	out, _, err := heraldCLI(t, nil, "version")
	if err != nil || !strings.HasPrefix(out, "herald ") || !strings.Contains(out, "go1.") {
		t.Errorf("herald version: got %q, %v; want the version and Go version", out, err)
	}
}

func TestCLIUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra"}, `serve: unexpected argument "extra" (see ` + "`herald serve --help`)"},
		{[]string{"migrate", "--data-dir", "x", "now"}, `migrate: unexpected argument "now"`},
		{[]string{"app", "list", "everything"}, `app list: unexpected argument "everything"`},
		{[]string{"app", "show", "app_1", "app_2"}, `app show: unexpected argument "app_2"`},
		{[]string{"app", "show"}, `app show: missing <appId>`},
		{[]string{"app", "consent-import", "--file", "x.jsonl"}, `app consent-import: missing <appId>`},
		{[]string{"app", "consent-import", "app_1"}, `app consent-import: --file is required`},
		{[]string{"app", "tag-import", "--file", "x.csv"}, `app tag-import: missing <appId>`},
		{[]string{"app", "tag-import", "app_1"}, `app tag-import: --file is required`},
		{[]string{"app", "create", "--tierr", "gold"}, `flag provided but not defined: --tierr`},
		{[]string{"app", "create", "-tierr=gold"}, `flag provided but not defined: -tierr`},
		{[]string{"bench", "--users", "many"}, `invalid value "many" for flag --users`},
		{[]string{"version", "--short"}, `flag provided but not defined: --short`},
		{[]string{"app", "remove"}, `app: unknown command "remove"`},
		{[]string{"app"}, `app: no command given`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		// A setting given as a flag is named as the flag, one given in
		// the environment as the variable.
		{[]string{"serve", "--master-key", "short", "--data-dir", "unused"}, "--master-key: master key must be"},
		{[]string{"serve", "--log-format", "xml", "--data-dir", "unused"}, `--log-format: "xml" is not text or json`},
		{[]string{"migrate", "--log-level", "loud", "--data-dir", "unused"}, `--log-level: "loud" is not debug`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, _, err := heraldCLI(t, nil, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	env := map[string]string{"HERALD_LOG_FORMAT": "xml"}
	_, _, err := heraldCLI(t, func(k string) string { return env[k] }, "serve", "--data-dir", "unused")
	if err == nil || !strings.Contains(err.Error(), `HERALD_LOG_FORMAT: "xml"`) {
		t.Errorf("HERALD_LOG_FORMAT=xml: got %v, want the variable named", err)
	}
}

// TestCLIAdminErrors: a refusal by the admin API prints its code, message
// and every detail, the fields named as the flags the user typed.
func TestCLIAdminErrors(t *testing.T) {
	t.Parallel()
	e := start(t)
	admin := []string{"--server", e.svc.AdminURL, "--token", e.adminTok}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"app", "create", "--name", "Shop", "--tier", "gold"},
			[]string{"admin API answered 400 ERR-AB-VAL-00", "--tier: must be free, basic, business or enterprise"}},
		{[]string{"app", "create", "--tier", "basic", "--time-zone", "Mars/Olympus"},
			[]string{"--name: is required", "--time-zone: must be an IANA time zone name such as Asia/Seoul"}},
		{[]string{"app", "create", "--name", "Low", "--tier", "basic", "--app-user"},
			[]string{"--app-user: needs the business tier or higher (the tier is basic)"}},
		{[]string{"app", "show", "app_missing"}, []string{"admin API answered 404"}},
		{[]string{"app", "create", "--name", "Ads", "--ad-sender-name", "Co", "--ad-opt-out", " "},
			[]string{"--ad-sender-contact: is required", "--ad-opt-out: must not be empty"}},
	}
	for _, c := range cases {
		_, _, err := heraldCLI(t, nil, append(c.args, admin...)...)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("herald %v: got %v, want it to say %q", c.args, err, w)
			}
		}
	}
	_, _, err := heraldCLI(t, nil, "app", "list", "--server", e.svc.AdminURL, "--token", "wrong")
	if err == nil || !strings.Contains(err.Error(), "admin API answered 401") {
		t.Errorf("wrong token: got %v, want the 401 shown", err)
	}
}
