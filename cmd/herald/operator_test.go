package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestOperatorCommands: herald operator add prints a setup link on the
// admin listener, list shows the operator, update changes role and apps,
// token prints a token that works as a Bearer with the operator's role,
// disable ends it, and refusals name the flag.
func TestOperatorCommands(t *testing.T) {
	t.Parallel()
	e := start(t)
	herald, must := e.cli(t)
	var app struct{ AppID string }
	json.Unmarshal([]byte(must("app", "create", "--name", "Shop", "--json")), &app)

	out := must("operator", "add", "--email", "mina@example.com", "--name", "Mina", "--role", "viewer", "--apps", app.AppID)
	link := regexp.MustCompile(`setup link \(shown once, works once within 24 hours\): (\S+)`).FindStringSubmatch(out)
	if link == nil || !strings.HasPrefix(link[1], e.svc.AdminURL+"/setup?token=") {
		t.Fatalf("operator add: got %q, want the setup link on the admin listener", out)
	}
	id := regexp.MustCompile(`op_\w+`).FindString(out)
	if list := must("operator", "list"); !strings.Contains(list, id) || !strings.Contains(list, "mina@example.com") || !strings.Contains(list, app.AppID) {
		t.Errorf("operator list: got %q", list)
	}
	if out := must("operator", "update", id, "--role", "operator", "--apps", "all", "--name", "Mina Park"); !strings.Contains(out, "operator") || !strings.Contains(out, "Mina Park") || !strings.Contains(out, "  all  ") {
		t.Errorf("operator update: got %q", out)
	}
	out = must("operator", "token", id, "--name", "ci", "--days", "30")
	token := regexp.MustCompile(`token: (hop_\S+)`).FindStringSubmatch(out)
	if token == nil {
		t.Fatalf("operator token: got %q, want the token", out)
	}
	me := func() (int, string) {
		req, _ := http.NewRequest("GET", e.svc.AdminURL+"/admin/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+token[1])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var o struct{ Role string }
		json.NewDecoder(res.Body).Decode(&o)
		return res.StatusCode, o.Role
	}
	if status, role := me(); status != http.StatusOK || role != "operator" {
		t.Errorf("the printed token: %d %s, want 200 as an operator", status, role)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"operator", "add", "--email", "MINA@example.com", "--name", "M", "--role", "viewer"}, "409"},
		{[]string{"operator", "add", "--email", "x@example.com", "--name", "X", "--role", "boss"}, "--role"},
		{[]string{"operator", "add", "--email", "x@example.com", "--role", "viewer"}, "--name"},
		{[]string{"operator", "token", id, "--name", "ci", "--days", "400"}, "--days"},
		{[]string{"operator", "update", id}, "no setting given"},
	} {
		if _, err := herald(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("herald %v: got %v, want an error naming %s", c.args, err, c.want)
		}
	}

	if out := must("operator", "disable", id); !strings.Contains(out, "disabled") {
		t.Errorf("operator disable: got %q", out)
	}
	if status, _ := me(); status != http.StatusUnauthorized {
		t.Errorf("the token of a disabled operator: %d, want 401", status)
	}
}

// TestAdminURL: HERALD_ADMIN_URL (or --admin-url) is read and checked, and
// setup links start with it.
func TestAdminURL(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string, args ...string) (config, error) {
		return loadConfig(args, func(k string) string { return env[k] }, io.Discard)
	}
	if c, err := load(map[string]string{"HERALD_ADMIN_URL": "https://herald-admin.example.com"}); err != nil || c.Admin.AdminURL != "https://herald-admin.example.com" {
		t.Errorf("HERALD_ADMIN_URL: got (%q, %v)", c.Admin.AdminURL, err)
	}
	for _, bad := range []string{"herald-admin.example.com", "ftp://x", "https://", "https://x/?a=b"} {
		if _, err := load(nil, "--admin-url", bad); err == nil || !strings.Contains(err.Error(), "--admin-url") {
			t.Errorf("--admin-url %s: got %v, want an error naming it", bad, err)
		}
	}

	e := start(t, func(c *config) { c.Admin.AdminURL = "https://herald-admin.example.com/" })
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"operator", "add", "--email", "a@example.com", "--name", "A", "--role", "admin",
		"--server", e.svc.AdminURL, "--token", e.adminTok}, func(string) string { return "" }, &out, &errOut)
	if err != nil || !strings.Contains(out.String(), "https://herald-admin.example.com/setup?token=") {
		t.Errorf("operator add behind HERALD_ADMIN_URL: got (%q, %v), want the link on it", out.String(), err)
	}
}

// cli runs herald commands against e's admin listener with the owner's
// token: herald returns the output and error, must fails t on an error.
func (e *env) cli(t *testing.T) (herald func(args ...string) (string, error), must func(args ...string) string) {
	herald = func(args ...string) (string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		args = append(args, "--server", e.svc.AdminURL, "--token", e.adminTok)
		err := run(context.Background(), args, func(string) string { return "" }, &out, &errOut)
		return out.String(), err
	}
	must = func(args ...string) string {
		t.Helper()
		out, err := herald(args...)
		if err != nil {
			t.Fatalf("herald %v: %v", args, err)
		}
		return out
	}
	return herald, must
}
