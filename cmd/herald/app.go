package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// appUsage is the answer to `herald app --help`.
const appUsage = `usage: herald app <create|list|show|consent-import> [flags]

Operator commands that call the admin API of a running herald serve.

commands:
  app create   create an app and print its keys (the secret key is shown once)
  app list     list the apps
  app show     show one app
  app consent-import  import consent collected before Herald, with its dates

Run ` + "`herald app <command> --help`" + ` for the flags of one command.
`

// runApp is `herald app create|list|show`: operator commands that call the
// admin API.
func runApp(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, appUsage)
		return errors.New("app: no command given (create, list or show)")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, appUsage)
		return nil
	case "create", "list", "show":
	case "consent-import":
		return runConsentImport(ctx, args[1:], getenv, stdout, stderr)
	default:
		fmt.Fprint(stderr, appUsage)
		return fmt.Errorf("app: unknown command %q (create, list or show)", args[0])
	}
	verb := args[0]
	cmd, create := appCommand(verb)
	server := cmd.fs.String("server", "", "admin API base `URL` (default http://$HERALD_ADMIN_ADDR, else http://127.0.0.1:8081)")
	token := cmd.fs.String("token", "", "admin token (default $HERALD_ADMIN_TOKEN, else the admin-token file of $HERALD_DATA_DIR or ./herald-data)")
	asJSON := cmd.fs.Bool("json", false, "print the admin API's JSON answer")
	positional, err := cmd.parse(args[1:], stdout)
	if err != nil {
		return err
	}
	method, path, body := appRequest(verb, positional, *create)
	c := adminClient{base: *server, token: *token}
	if err := c.defaults(getenv); err != nil {
		return err
	}
	raw, err := c.do(ctx, method, path, body)
	if err != nil {
		return namedAsFlags(err, appCreateFlags)
	}
	if *asJSON {
		_, err := stdout.Write(raw)
		return err
	}
	return printApps(stdout, verb, raw)
}

// appCommand is the help and flags of one app command; create's settings
// are read into the returned appFlags.
func appCommand(verb string) (*command, *appFlags) {
	var f appFlags
	switch verb {
	case "create":
		cmd := newCommand("app create", "herald app create --name NAME [--tier free] [--app-user] [--time-zone Asia/Seoul] [flags]",
			"Creates an app through the admin API and prints its id, API key and secret key; the secret key is\n"+
				"shown only now. A new app's time zone is Asia/Seoul unless --time-zone says otherwise: it decides\n"+
				"when the night window (21:00-08:00) of marketing pushes is.")
		cmd.fs.StringVar(&f.name, "name", "", "app name (required)")
		cmd.fs.StringVar(&f.tier, "tier", "", "free|basic|business|enterprise (default free)")
		cmd.fs.BoolVar(&f.appUser, "app-user", false, "enable the app-user feature (business or enterprise tier only)")
		cmd.fs.StringVar(&f.timeZone, "time-zone", "", "IANA time zone of the app (default Asia/Seoul)")
		return cmd, &f
	case "show":
		return newCommand("app show", "herald app show <appId> [flags]", "Shows one app: tier, features, FCM credentials, time zone and API key.", "appId"), &f
	}
	return newCommand("app list", "herald app list [flags]", "Lists the apps: id, name, tier, features, FCM credentials, time zone and API key."), &f
}

// appFlags are the settings `app create` takes.
type appFlags struct {
	name, tier, timeZone string
	appUser              bool
}

// appCreateFlags names the admin API's fields by the flags that set them,
// so that a refusal speaks of what the user typed.
var appCreateFlags = map[string]string{"name": "--name", "tier": "--tier", "appUserEnabled": "--app-user", "timeZone": "--time-zone"}

// appRequest is the admin API call an app command makes.
func appRequest(verb string, positional []string, create appFlags) (method, path string, body any) {
	switch verb {
	case "create":
		req := map[string]any{}
		if create.name != "" {
			req["name"] = create.name
		}
		if create.tier != "" {
			req["tier"] = create.tier
		}
		if create.appUser {
			req["appUserEnabled"] = true
		}
		if create.timeZone != "" {
			req["timeZone"] = create.timeZone
		}
		return http.MethodPost, "/admin/v1/apps", req
	case "show":
		return http.MethodGet, "/admin/v1/apps/" + url.PathEscape(positional[0]), nil
	}
	return http.MethodGet, "/admin/v1/apps", nil
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

// apiError is an admin API refusal: its status, code, message and the
// details naming each problem.
type apiError struct {
	Status  int
	Code    string
	Message string
	Details []struct{ Field, Reason string }
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("admin API answered %d %s: %s", e.Status, e.Code, e.Message)
	for _, d := range e.Details {
		msg += fmt.Sprintf("\n  %s: %s", d.Field, d.Reason)
	}
	return msg
}

// answerError turns an admin API error body into an error that names each
// problem in its details, so the operator sees why (for example that the
// app-user feature needs the business tier).
func answerError(status int, raw []byte) error {
	e := &apiError{Status: status}
	if json.Unmarshal(raw, e) != nil || e.Code == "" {
		e.Message = strings.TrimSpace(string(raw))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
	}
	return e
}

// namedAsFlags renames the details of an admin API refusal after the flags
// that set those fields.
func namedAsFlags(err error, flags map[string]string) error {
	var e *apiError
	if !errors.As(err, &e) {
		return err
	}
	for i, d := range e.Details {
		if f, ok := flags[d.Field]; ok {
			e.Details[i].Field = f
		}
	}
	return e
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
