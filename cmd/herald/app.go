package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// runApp is `herald app create|list|show`: operator commands that call the
// admin API.
func runApp(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: herald app create|list|show [flags]")
	}
	verb := args[0]
	fs := flag.NewFlagSet("app "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "admin API base URL (default http://$HERALD_ADMIN_ADDR)")
	token := fs.String("token", "", "admin token (default $HERALD_ADMIN_TOKEN or <data dir>/admin-token)")
	asJSON := fs.Bool("json", false, "print the JSON answer")
	var create appFlags
	fs.StringVar(&create.name, "name", "", "app name (create)")
	fs.StringVar(&create.tier, "tier", "", "free|basic|business|enterprise (create)")
	fs.BoolVar(&create.appUser, "app-user", false, "enable the app-user feature (create)")
	fs.StringVar(&create.timeZone, "time-zone", "", "IANA time zone (create)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	// `app show <appId>` may carry flags after the id too.
	var positional []string
	for fs.NArg() > 0 {
		positional = append(positional, fs.Arg(0))
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return err
		}
	}
	method, path, body, err := appRequest(verb, positional, create)
	if err != nil {
		return err
	}
	c := adminClient{base: *server, token: *token}
	if err := c.defaults(getenv); err != nil {
		return err
	}
	raw, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := stdout.Write(raw)
		return err
	}
	return printApps(stdout, verb, raw)
}

// appFlags are the settings `app create` takes.
type appFlags struct {
	name, tier, timeZone string
	appUser              bool
}

// appRequest is the admin API call an app command makes.
func appRequest(verb string, positional []string, create appFlags) (method, path string, body any, err error) {
	switch verb {
	case "create":
		req := map[string]any{"name": create.name}
		if create.tier != "" {
			req["tier"] = create.tier
		}
		if create.appUser {
			req["appUserEnabled"] = true
		}
		if create.timeZone != "" {
			req["timeZone"] = create.timeZone
		}
		return http.MethodPost, "/admin/v1/apps", req, nil
	case "list":
		return http.MethodGet, "/admin/v1/apps", nil, nil
	case "show":
		if len(positional) != 1 {
			return "", "", nil, errors.New("usage: herald app show <appId>")
		}
		return http.MethodGet, "/admin/v1/apps/" + url.PathEscape(positional[0]), nil, nil
	}
	return "", "", nil, fmt.Errorf("unknown app command %q (create, list, show)", verb)
}

type adminClient struct{ base, token string }

func (c *adminClient) defaults(getenv func(string) string) error {
	if c.base == "" {
		addr := getenv("HERALD_ADMIN_ADDR")
		if addr == "" {
			addr = "127.0.0.1:8081"
		}
		c.base = "http://" + addr
	}
	if c.token == "" {
		c.token = getenv("HERALD_ADMIN_TOKEN")
	}
	if c.token == "" {
		dir := getenv("HERALD_DATA_DIR")
		if dir == "" {
			dir = "./herald-data"
		}
		b, err := os.ReadFile(filepath.Join(dir, "admin-token"))
		if err != nil {
			return errors.New("no admin token: pass --token or set HERALD_ADMIN_TOKEN")
		}
		c.token = strings.TrimSpace(string(b))
	}
	return nil
}

func (c *adminClient) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.base, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, answerError(resp.StatusCode, raw)
	}
	return raw, nil
}

// answerError turns an admin API error body into an error that names each
// problem in its details, so the operator sees why (for example that the
// app-user feature needs the business tier).
func answerError(status int, raw []byte) error {
	var e struct {
		Code, Message string
		Details       []struct{ Field, Reason string }
	}
	json.Unmarshal(raw, &e)
	msg := fmt.Sprintf("admin API answered %d %s: %s", status, e.Code, e.Message)
	for _, d := range e.Details {
		msg += fmt.Sprintf("\n  %s: %s", d.Field, d.Reason)
	}
	return errors.New(msg)
}

type appView struct {
	AppID, Name, Tier, TimeZone, APIKey, SecretKey string
	AppUserEnabled, HasFcmCredentials              bool
}

// appUser shows the app-user feature: on, off, or inactive when an app
// stored before the tier rule has it on below the business tier.
func (a appView) appUser() string {
	switch {
	case !a.AppUserEnabled:
		return "off"
	case a.Tier != "business" && a.Tier != "enterprise":
		return "inactive (tier below business)"
	}
	return "on"
}

func printApps(w io.Writer, verb string, raw []byte) error {
	var apps []appView
	if verb == "list" {
		var l struct{ Apps []appView }
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		apps = l.Apps
	} else {
		var a appView
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		apps = []appView{a}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "APP ID\tNAME\tTIER\tAPP-USER\tFCM\tTIME ZONE\tAPI KEY")
	for _, a := range apps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%s\t%s\n", a.AppID, a.Name, a.Tier, a.appUser(), a.HasFcmCredentials, a.TimeZone, a.APIKey)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(apps) == 1 && apps[0].SecretKey != "" {
		fmt.Fprintf(w, "secret key (shown once): %s\n", apps[0].SecretKey)
	}
	return nil
}
