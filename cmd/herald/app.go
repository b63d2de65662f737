package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/heraldpush/herald/client"
)

// appUsage is the answer to `herald app --help`.
const appUsage = `usage: herald app <create|list|show|update|credentials|webhook|consent-import|tag-import> [flags]

Operator commands that call the admin API of a running herald serve.

commands:
  app create        create an app and print its keys (the secret key is shown once)
  app list          list the apps
  app show          show one app
  app update        change an app's settings (tier, features, time zone, send rate, ad settings)
  app credentials   upload (or --delete) an app's FCM service-account file
  app webhook       set (or --delete) an app's webhook URL and print its signing secret
  app consent-import  import consent collected before Herald, with its original dates
  app tag-import    import users' tags from a CSV file

Run ` + "`herald app <command> --help`" + ` for the flags of one command.
`

// appVerbs are the app commands.
var appVerbs = []string{"create", "list", "show", "update", "credentials", "webhook"}

// runApp is `herald app <verb>`: operator commands that call the admin API.
func runApp(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "consent-import" {
		return runConsentImport(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "tag-import" {
		return runTagImport(ctx, args[1:], getenv, stdout, stderr)
	}
	g := adminGroup{name: "app", usage: appUsage, verbs: appVerbs, command: appCommand, flags: appSettingFlags}
	return g.run(ctx, args, getenv, stdout, stderr)
}

// adminGroup is a command group whose verbs each make an admin API call
// (`herald app`, `herald operator`, `herald audit`).
type adminGroup struct {
	name, usage string
	verbs       []string
	command     func(verb string) (*command, buildCall)
	// flags names the fields of a refusal's details by the flags that
	// gave them.
	flags map[string]string
}

// run is `herald <group> <verb>`: the group's help, or its verb's call.
func (g adminGroup) run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, g.usage)
		return fmt.Errorf("%s: no command given (%s)", g.name, strings.Join(g.verbs, ", "))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, g.usage)
		return nil
	}
	if !slices.Contains(g.verbs, args[0]) {
		fmt.Fprint(stderr, g.usage)
		return fmt.Errorf("%s: unknown command %q (%s)", g.name, args[0], strings.Join(g.verbs, ", "))
	}
	cmd, build := g.command(args[0])
	return runAdminCall(ctx, cmd, build, args[1:], getenv, stdout, g.flags)
}

// runAdminCall runs one command that makes an admin API call (`herald app
// …`, `herald operator …`): its flags with --server, --token and --json,
// the call, and its answer printed. A refusal names fields by the flags
// that gave them (flags, unless the call has its own).
func runAdminCall(ctx context.Context, cmd *command, build buildCall, args []string, getenv func(string) string, stdout io.Writer, flags map[string]string) error {
	server := cmd.fs.String("server", "", "admin API base `URL` (default http://$HERALD_ADMIN_ADDR, else http://127.0.0.1:8081)")
	token := cmd.fs.String("token", "", "admin token (default $HERALD_ADMIN_TOKEN, else the admin-token file of $HERALD_DATA_DIR or ./herald-data)")
	asJSON := cmd.fs.Bool("json", false, "print the admin API's JSON answer")
	positional, err := cmd.parse(args, stdout)
	if err != nil {
		return err
	}
	req, err := build(positional, setFlags(cmd))
	if err != nil {
		return cmd.explain(err)
	}
	c := client.Admin{Base: *server, Token: *token}
	if err := c.Defaults(getenv); err != nil {
		return err
	}
	raw, err := c.Do(ctx, req.method, req.path, req.body)
	if err != nil {
		if req.flags != nil {
			flags = req.flags
		}
		return namedAsFlags(err, flags)
	}
	if *asJSON || req.print == nil {
		_, err := stdout.Write(raw)
		return err
	}
	return req.print(stdout, raw)
}

// setFlags is the set of flags given on the command line (not defaulted).
func setFlags(cmd *command) map[string]bool {
	set := map[string]bool{}
	cmd.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// adminCall is the admin API call a command makes and how its answer
// is printed (nil: as the JSON it is). body is marshalled as JSON, or sent
// as it is when it is a []byte.
type adminCall struct {
	method, path string
	body         any
	print        func(io.Writer, []byte) error
	// flags names the fields of a refusal's details by the flags that
	// gave them (default: the command group's, e.g. appSettingFlags).
	flags map[string]string
}

// buildCall turns a command's positional arguments and the flags given
// into its admin API call, or a usage error.
type buildCall func(positional []string, set map[string]bool) (adminCall, error)

// appCommand is the help and flags of one app command, and how it builds
// its call from them.
func appCommand(verb string) (*command, buildCall) {
	switch verb {
	case "create":
		return createCommand()
	case "show":
		return newCommand("app show", "herald app show <appId> [flags]", "Shows one app: tier, features, FCM credentials, time zone and API key, then its sandbox, send\n"+
				"rate, ad prefix check and footer, webhook and consent notices.", "appId"),
			func(pos []string, _ map[string]bool) (adminCall, error) {
				return adminCall{method: http.MethodGet, path: appPath(pos[0]), print: printShownApp}, nil
			}
	case "update":
		return updateCommand()
	case "credentials":
		return credentialsCommand()
	case "webhook":
		return webhookCommand()
	}
	return newCommand("app list", "herald app list [flags]", "Lists the apps: id, name, tier, features, FCM credentials, time zone and API key."),
		func([]string, map[string]bool) (adminCall, error) {
			return adminCall{method: http.MethodGet, path: "/admin/v1/apps", print: printAppList}, nil
		}
}

// appPath is the admin API path of one app.
func appPath(appID string) string { return "/admin/v1/apps/" + url.PathEscape(appID) }

// appSettingFlags names the admin API's fields by the flags that set them,
// so that a refusal speaks of what the user typed.
var appSettingFlags = map[string]string{
	"name": "--name", "tier": "--tier", "appUserEnabled": "--app-user", "timeZone": "--time-zone",
	"registered": "--registered", "sendRatePerMinute": "--send-rate", "sandbox": "--sandbox",
	"adPrefixCheck": "--ad-prefix-check", "adSender": "--ad-sender-name/--ad-sender-contact",
	"adSender.name": "--ad-sender-name", "adSender.contact": "--ad-sender-contact", "adOptOut": "--ad-opt-out",
	"url": "--url", "webhookEvents": "--webhook-events",
}

// createCommand is `app create`.
func createCommand() (*command, buildCall) {
	cmd := newCommand("app create", "herald app create --name NAME [--tier free] [--app-user] [--time-zone Asia/Seoul] [flags]",
		"Creates an app through the admin API and prints its id, API key and secret key; the secret key is\n"+
			"shown only now. A new app's time zone is Asia/Seoul unless --time-zone says otherwise: it decides\n"+
			"when the night window (21:00-08:00) of marketing pushes is. Advertising pushes are refused until\n"+
			"the footer's settings (--ad-sender-name, --ad-sender-contact, --ad-opt-out) are set: every ad\n"+
			"states who sends it, how to reach them and how to refuse (Network Act art. 50(4)).")
	name := cmd.fs.String("name", "", "app name (required)")
	tier := cmd.fs.String("tier", "", "free|basic|business|enterprise (default free)")
	appUser := cmd.fs.Bool("app-user", false, "enable the app-user feature (business or enterprise tier only)")
	timeZone := cmd.fs.String("time-zone", "", "IANA time zone of the app (default Asia/Seoul)")
	ad := addAdFlags(cmd)
	return cmd, func(_ []string, set map[string]bool) (adminCall, error) {
		req := map[string]any{}
		if *name != "" {
			req["name"] = *name
		}
		if *tier != "" {
			req["tier"] = *tier
		}
		if *appUser {
			req["appUserEnabled"] = true
		}
		if *timeZone != "" {
			req["timeZone"] = *timeZone
		}
		ad.add(req, set)
		return adminCall{method: http.MethodPost, path: "/admin/v1/apps", body: req, print: printApp}, nil
	}
}

// updateCommand is `app update`: a PATCH of the settings whose flags are
// given, and only those.
func updateCommand() (*command, buildCall) {
	cmd := newCommand("app update", "herald app update <appId> [--tier business] [--app-user] [--time-zone Z] [--send-rate N] [--ad-sender-name N --ad-sender-contact C] [--ad-opt-out TEXT] [--webhook-events LIST] [flags]",
		"Changes the settings of an app whose flags are given; the others keep their values. Boolean\n"+
			"settings take =false to turn them off (--app-user=false). --ad-sender-name and --ad-sender-contact\n"+
			"go together: the sender named in the footer of every ad (Network Act art. 50(4)).", "appId")
	name := cmd.fs.String("name", "", "app name")
	tier := cmd.fs.String("tier", "", "free|basic|business|enterprise")
	appUser := cmd.fs.Bool("app-user", false, "the app-user feature (business or enterprise tier only)")
	registered := cmd.fs.Bool("registered", false, "the mobile app is registered with the platform")
	timeZone := cmd.fs.String("time-zone", "", "IANA time zone of the app")
	sendRate := cmd.fs.Int("send-rate", 0, "FCM sends a minute for the app (1 to 10000000)")
	sandbox := cmd.fs.Bool("sandbox", false, "sandbox: FCM validate_only, nothing charged")
	adCheck := cmd.fs.Bool("ad-prefix-check", false, "the (광고) rule and the ad footer (apps under Korean law)")
	events := cmd.fs.String("webhook-events", "", "the event types the app's webhook is sent, comma-separated, e.g.\n"+
		"push.undeliverable,consent.changed,push.sent,push.failed (\"\" for none; docs/webhooks.md)")
	ad := addAdFlags(cmd)
	return cmd, func(pos []string, set map[string]bool) (adminCall, error) {
		req := map[string]any{}
		for flagName, v := range map[string]any{"name": name, "tier": tier, "app-user": appUser, "registered": registered,
			"time-zone": timeZone, "send-rate": sendRate, "sandbox": sandbox, "ad-prefix-check": adCheck} {
			if set[flagName] {
				req[appSettingFlagField(flagName)] = v
			}
		}
		if set["webhook-events"] {
			list := []string{}
			for e := range strings.SplitSeq(*events, ",") {
				if e = strings.TrimSpace(e); e != "" {
					list = append(list, e)
				}
			}
			req["webhookEvents"] = list
		}
		ad.add(req, set)
		if len(req) == 0 {
			return adminCall{}, errors.New("no setting given: name at least one flag to change")
		}
		return adminCall{method: http.MethodPatch, path: appPath(pos[0]), body: req, print: printApp}, nil
	}
}

// adFlags are the ad footer's flags of app create and app update.
type adFlags struct{ senderName, senderContact, optOut *string }

// addAdFlags adds the ad footer's flags to cmd.
func addAdFlags(cmd *command) adFlags {
	return adFlags{
		senderName:    cmd.fs.String("ad-sender-name", "", "who sends the app's ads, in their footer (at most 100 characters; with --ad-sender-contact)"),
		senderContact: cmd.fs.String("ad-sender-contact", "", "how to reach the sender, in the ads' footer (at most 100 characters; with --ad-sender-name)"),
		optOut:        cmd.fs.String("ad-opt-out", "", "how to refuse ads, the footer's last line, e.g. \"수신거부: 마이 > 설정 > 알림\" (at most 200 characters)"),
	}
}

// add puts the ad footer's flags given into a create or update body: the
// sender whole when either of its flags is (the admin API names the one
// missing), the opt-out text on its own.
func (f adFlags) add(req map[string]any, set map[string]bool) {
	if set["ad-sender-name"] || set["ad-sender-contact"] {
		sender := map[string]any{}
		if set["ad-sender-name"] {
			sender["name"] = *f.senderName
		}
		if set["ad-sender-contact"] {
			sender["contact"] = *f.senderContact
		}
		req["adSender"] = sender
	}
	if set["ad-opt-out"] {
		req["adOptOut"] = *f.optOut
	}
}

// appSettingFlagField is the admin API field a flag of app update sets.
func appSettingFlagField(flagName string) string {
	for field, f := range appSettingFlags {
		if f == "--"+flagName {
			return field
		}
	}
	return flagName
}

// credentialsCommand is `app credentials`: the FCM service-account file
// uploaded as it is, or removed.
func credentialsCommand() (*command, buildCall) {
	cmd := newCommand("app credentials", "herald app credentials <appId> (--file service-account.json | --delete) [flags]",
		"Uploads the app's FCM service-account file (from the Firebase console: Project settings >\n"+
			"Service accounts > Generate new private key), or removes it with --delete. The file is checked\n"+
			"and stored encrypted; pushes of an app without one are refused.", "appId")
	file := cmd.fs.String("file", "", "the service-account JSON `file`")
	del := cmd.fs.Bool("delete", false, "remove the app's FCM credentials")
	return cmd, func(pos []string, set map[string]bool) (adminCall, error) {
		path := appPath(pos[0]) + "/fcm-credentials"
		switch {
		case set["file"] == *del:
			return adminCall{}, errors.New("give --file FILE or --delete")
		case *del:
			return adminCall{method: http.MethodDelete, path: path, print: printDone("FCM credentials removed")}, nil
		}
		b, err := os.ReadFile(*file)
		if err != nil {
			return adminCall{}, fmt.Errorf("--file: %w", err)
		}
		// the file is the request's body: a refusal's "body" is --file
		return adminCall{method: http.MethodPut, path: path, body: b, print: printCredentials(b), flags: map[string]string{"body": "--file"}}, nil
	}
}

// webhookCommand is `app webhook`: the app's webhook URL set (printing
// its signing secret) or removed.
func webhookCommand() (*command, buildCall) {
	cmd := newCommand("app webhook", "herald app webhook <appId> (--url URL | --delete) [flags]",
		"Sets the URL Herald posts the app's unreachable users and consent changes to, signed per\n"+
			"Standard Webhooks, and prints the signing secret (whsec_…); --delete removes it.", "appId")
	u := cmd.fs.String("url", "", "the webhook `URL` (https, a public address)")
	del := cmd.fs.Bool("delete", false, "remove the app's webhook")
	return cmd, func(pos []string, set map[string]bool) (adminCall, error) {
		path := appPath(pos[0]) + "/webhook"
		switch {
		case set["url"] == *del:
			return adminCall{}, errors.New("give --url URL or --delete")
		case *del:
			return adminCall{method: http.MethodDelete, path: path, print: printDone("webhook removed")}, nil
		}
		return adminCall{method: http.MethodPut, path: path, body: map[string]string{"url": *u}, print: printFields("url", "secret")}, nil
	}
}

// namedAsFlags renames the details of an admin API refusal after the flags
// that set those fields.
func namedAsFlags(err error, flags map[string]string) error {
	var e *client.AdminError
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
	AdPrefixCheck                                  bool
	AdSender                                       *struct{ Name, Contact string }
	AdOptOut                                       *string
	Sandbox                                        bool
	SendRatePerMinute                              int
	WebhookURL                                     *string
	ConsentNotice                                  struct{ Enabled bool }
	Reconfirmation                                 struct {
		Enabled  bool
		LeadDays int
	}
}

// printSettings shows the settings of one app that the table leaves out,
// one a line, so that app show without --json tells everything an
// operator sets.
func (a appView) printSettings(w io.Writer) {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	sandbox := "off"
	if a.Sandbox {
		sandbox = "on (FCM validate_only: nothing is delivered or charged)"
	}
	fmt.Fprintf(w, "sandbox: %s\n", sandbox)
	fmt.Fprintf(w, "send rate: %d a minute\n", a.SendRatePerMinute)
	fmt.Fprintf(w, "ad prefix check: %s\n", onOff(a.AdPrefixCheck))
	a.printAdFooter(w)
	webhook := "none"
	if a.WebhookURL != nil {
		webhook = *a.WebhookURL
	}
	fmt.Fprintf(w, "webhook: %s\n", webhook)
	fmt.Fprintf(w, "consent notice: %s\n", onOff(a.ConsentNotice.Enabled))
	reconfirmation := "off"
	if a.Reconfirmation.Enabled {
		reconfirmation = fmt.Sprintf("on (%d days before the two-year date)", a.Reconfirmation.LeadDays)
	}
	fmt.Fprintf(w, "reconfirmation: %s\n", reconfirmation)
}

// printAdFooter shows the ad footer's settings of one app, and what an ad
// of the app meets without them.
func (a appView) printAdFooter(w io.Writer) {
	switch {
	case !a.AdPrefixCheck:
		fmt.Fprintln(w, "ad footer: off (adPrefixCheck is off: no (광고) rule, no footer)")
	case a.AdSender == nil || a.AdOptOut == nil:
		fmt.Fprintln(w, "ad footer: not set: advertising pushes are refused until --ad-sender-name, --ad-sender-contact and --ad-opt-out are set")
	default:
		fmt.Fprintf(w, "ad footer: %q (appended to the body of every advertising message)\n", "\n"+a.AdSender.Name+" "+a.AdSender.Contact+"\n"+*a.AdOptOut)
	}
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

// printAppList prints the apps of a list answer as a table.
func printAppList(w io.Writer, raw []byte) error {
	var l struct{ Apps []appView }
	if err := json.Unmarshal(raw, &l); err != nil {
		return err
	}
	return printApps(w, l.Apps)
}

// printApp prints one app's answer as a table, and its secret key when the
// answer has it (create).
func printApp(w io.Writer, raw []byte) error {
	var a appView
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	return printApps(w, []appView{a})
}

// printShownApp prints one app as printApp does, and its other settings.
func printShownApp(w io.Writer, raw []byte) error {
	var a appView
	if err := json.Unmarshal(raw, &a); err != nil {
		return err
	}
	if err := printApps(w, []appView{a}); err != nil {
		return err
	}
	a.printSettings(w)
	return nil
}

func printApps(w io.Writer, apps []appView) error {
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

// printCredentials prints what the service-account file just stored
// names (the answer, the app, never holds the file): the Firebase project
// the app's pushes go to and the service account that sends them.
func printCredentials(file []byte) func(io.Writer, []byte) error {
	return func(w io.Writer, raw []byte) error {
		var a appView
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		var sa struct {
			ProjectID   string `json:"project_id"`
			ClientEmail string `json:"client_email"`
		}
		json.Unmarshal(file, &sa) // the server accepted it: it is a service account
		_, err := fmt.Fprintf(w, "FCM credentials stored for app %s (%s)\nFirebase project: %s\nservice account: %s\n",
			a.AppID, a.Name, sa.ProjectID, sa.ClientEmail)
		return err
	}
}

// printFields prints the named string members of a JSON answer, one a line.
func printFields(names ...string) func(io.Writer, []byte) error {
	return func(w io.Writer, raw []byte) error {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		for _, n := range names {
			fmt.Fprintf(w, "%s: %v\n", n, m[n])
		}
		return nil
	}
}

// printDone prints msg for an answer with nothing to show.
func printDone(msg string) func(io.Writer, []byte) error {
	return func(w io.Writer, _ []byte) error {
		_, err := fmt.Fprintln(w, msg)
		return err
	}
}
