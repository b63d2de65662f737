package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
)

// commands lists every command, one line each, for `herald --help`.
var commands = []struct{ name, summary string }{
	{"serve", "run the public API, the admin listener (dashboard, admin API, /metrics) and the delivery workers"},
	{"migrate", "apply the database migrations and exit"},
	{"backup", "copy the embedded store while it serves, and check the copy"},
	{"restore", "fill an empty data dir from a backup, holding the pushes that were due or sending"},
	{"fcm-emulator", "run an FCM HTTP v1 emulator for local work and tests; --service-account writes a file for it"},
	{"bench", "measure end-to-end delivery through the Server API against an emulator"},
	{"app create", "create an app through the admin API and print its keys (the secret is shown once)"},
	{"app list", "list the apps"},
	{"app show", "show one app"},
	{"app update", "change an app's settings"},
	{"app credentials", "upload or remove an app's FCM service-account file"},
	{"app webhook", "set or remove an app's webhook"},
	{"app consent-import", "import consent collected before Herald, with its original dates"},
	{"app tag-import", "import users' tags from a CSV file"},
	{"operator add", "add a named operator (role, apps) and print their one-use setup link"},
	{"operator list", "list the operators"},
	{"operator update", "change an operator's role, apps or name"},
	{"operator disable", "disable an operator, ending their sessions and API tokens"},
	{"operator token", "make an operator's API token and print it (shown once)"},
	{"audit head", "print the access records' signed head, to keep outside the database"},
	{"audit verify", "verify the access records' chain, against a kept head with --head"},
	{"healthcheck", "exit 0 when the local service answers /readyz with 200 (a container's health check)"},
	{"version", "print the version of this binary"},
	{"help", "print this list, or `herald help <command>` for a command's flags"},
}

// usageText is the answer to `herald --help`.
func usageText() string {
	var b strings.Builder
	b.WriteString("usage: herald <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-14s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun `herald <command> --help` for the flags of one command.\n")
	return b.String()
}

// errHelp is returned by a command whose help was asked for and printed:
// run answers it with success.
var errHelp = errors.New("help shown")

// command is one command's flags and help: its synopsis line, what it does,
// and the number of positional arguments it takes.
type command struct {
	fs *flag.FlagSet
	// name is the command as typed after herald, e.g. "app create".
	name     string
	synopsis string
	about    string
	// args names the positional arguments, e.g. ["appId"]; none when empty.
	args []string
}

// newCommand starts the flag set of `herald <name>` (name may be two
// words, "app create"); the flag package's own messages are not printed,
// parse says what went wrong instead.
func newCommand(name, synopsis, about string, args ...string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &command{fs: fs, name: name, synopsis: synopsis, about: about, args: args}
}

// usage writes the command's help: synopsis, description, flags.
func (c *command) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", c.synopsis, c.about)
	first := true
	c.fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprint(w, "\nflags:\n")
			first = false
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n        %s", line, usage)
		if !isZeroDefault(f) {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// isZeroDefault reports whether a flag's default is its type's zero value,
// which the help leaves out.
func isZeroDefault(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	return f.DefValue == z.Interface().(flag.Value).String()
}

// parse reads args: flags may come before, between or after the
// positional arguments. --help (or -h) writes the help to stdout and
// returns errHelp; a wrong flag or a wrong number of arguments is an error
// naming the flag as it was typed.
func (c *command) parse(args []string, stdout io.Writer) ([]string, error) {
	var positional []string
	rest := args
	for {
		if err := c.fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.usage(stdout)
				return nil, errHelp
			}
			return nil, c.explain(typedFlag(err, args))
		}
		if c.fs.NArg() == 0 {
			break
		}
		positional = append(positional, c.fs.Arg(0))
		rest = c.fs.Args()[1:]
	}
	if len(positional) > len(c.args) {
		extra := positional[len(c.args)]
		return nil, c.explain(fmt.Errorf("unexpected argument %q", extra))
	}
	if len(positional) < len(c.args) {
		return nil, c.explain(fmt.Errorf("missing <%s>", c.args[len(positional)]))
	}
	return positional, nil
}

// explain adds where to look for help to a usage error.
func (c *command) explain(err error) error {
	return fmt.Errorf("%s: %w (see `herald %s --help`)", c.name, err, c.name)
}

// flagInError finds the flag name in the flag package's messages, which
// always write it with one dash.
var flagInError = regexp.MustCompile(`(: |flag )-([^\s=:]+)`)

// typedFlag rewrites a flag package error so that it names the flag as the
// user typed it (--tier, not -tier).
func typedFlag(err error, args []string) error {
	msg := err.Error()
	m := flagInError.FindStringSubmatchIndex(msg)
	if m == nil {
		return err
	}
	name := msg[m[4]:m[5]]
	typed := "--" + name
	for _, a := range args {
		if a == "--" {
			break
		}
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name && strings.HasPrefix(a, "-") {
			typed, _, _ = strings.Cut(a, "=")
			break
		}
	}
	return errors.New(msg[:m[4]-1] + typed + msg[m[5]:])
}
