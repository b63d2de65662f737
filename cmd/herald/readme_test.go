package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/server"
)

// readmeExample returns the shell blocks of the README section "Example:
// from a new app to a push".
func readmeExample(t *testing.T) (setup, steps string) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "### Example: from a new app to a push")
	if !ok {
		t.Fatal("README: no section \"Example: from a new app to a push\"")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(sec, -1)
	if len(blocks) != 2 {
		t.Fatalf("README example: got %d shell blocks, want 2 (the terminals, then the steps)", len(blocks))
	}
	return blocks[0][1], blocks[1][1]
}

// shellCommands splits a shell block into commands: continuation lines
// joined, comments and blank lines dropped.
func shellCommands(block string) []string {
	var out []string
	for _, c := range strings.Split(strings.ReplaceAll(block, "\\\n", " "), "\n") {
		if c = strings.TrimSpace(c); c != "" && !strings.HasPrefix(c, "#") {
			out = append(out, c)
		}
	}
	return out
}

// commandLine splits `VAR=v … ./herald args…` into its variables and the
// herald arguments.
func commandLine(t *testing.T, line string) (map[string]string, []string) {
	t.Helper()
	env := map[string]string{}
	words := strings.Fields(line)
	for len(words) > 0 && strings.Contains(words[0], "=") {
		k, v, _ := strings.Cut(words[0], "=")
		env[k], words = v, words[1:]
	}
	if len(words) == 0 || words[0] != "./herald" {
		t.Fatalf("README: got %q, want a ./herald command", line)
	}
	return env, words[1:]
}

var (
	placeholder = regexp.MustCompile(`(\w+)=(\w+)…`)
	assignment  = regexp.MustCompile(`^[A-Z_]+=`)
)

// TestReadmeNewApp follows the README's "from a new app to a push" to the
// letter: the emulator writes the service-account file, serve sends to it,
// and the third terminal's commands run in bash with curl; only the
// addresses are moved to free ports and the copied values filled in.
func TestReadmeNewApp(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("the README example needs curl")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the README example needs bash")
	}
	t.Parallel()
	setup, steps := readmeExample(t)
	dir := t.TempDir()
	terminals := shellCommands(setup)
	if len(terminals) != 2 {
		t.Fatalf("README: got %d commands in the first block, want the emulator and serve", len(terminals))
	}

	_, emuArgs := commandLine(t, terminals[0])
	for i, a := range emuArgs {
		if i > 0 && emuArgs[i-1] == "--service-account" {
			emuArgs[i] = filepath.Join(dir, a)
		}
	}
	emu := runInBackground(t, nil, append(emuArgs, "--addr", "127.0.0.1:0")...)
	emuURL := emu.waitOutput(regexp.MustCompile(`FCM emulator on (\S+) `))[1]
	emu.waitOutput(regexp.MustCompile(`wrote service-account file`))

	vars, serveArgs := commandLine(t, terminals[1])
	for k, v := range vars {
		vars[k] = strings.ReplaceAll(v, "http://127.0.0.1:9099", emuURL)
	}
	serveArgs = append(serveArgs, "--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
		"--data-dir", filepath.Join(dir, "herald-data"), "--log-level", "warn")
	serve := runInBackground(t, func(k string) string { return vars[k] }, serveArgs...)
	urls := serve.waitOutput(listening)

	moved := strings.NewReplacer("http://127.0.0.1:8080", urls[1], "http://127.0.0.1:8081", urls[2], "http://127.0.0.1:9099", emuURL)
	e := &env{t: t, svc: &service{Server: &server.Server{PublicURL: urls[1], AdminURL: urls[2]}}, adminTok: readAdminToken(t, filepath.Join(dir, "herald-data")), emuURL: emuURL}
	e.bind()
	var p pushView
	// A reader runs step 8 after reading step 7's answer: by then the push
	// is done, which the test waits for rather than racing the send.
	waitForPush := func(cmd string, values map[string]string) {
		if p.PushID == "" && strings.Contains(cmd, "/api/app-user/v2/marketing") {
			p = e.WaitFinal(values["PUSH_ID"], 20*time.Second)
		}
	}
	values, outputs := runSteps(t, dir, shellCommands(moved.Replace(steps)), waitForPush)
	if p.PushID == "" {
		t.Fatal("README: no consent call after the push (step 8)")
	}
	if p.Status != "done" || p.Counts.Sent != 1 {
		t.Fatalf("the README's push: got status %s, %d sent, want done with 1 sent", p.Status, p.Counts.Sent)
	}
	got := e.Received("fcm-token-1")
	if len(got) != 1 || !strings.Contains(string(got[0].Message), "Your order has shipped") {
		t.Fatalf("emulator: got %d messages for the README's token, want the README's push", len(got))
	}
	// Step 8: the consent answer, the withdrawal, and the user it leaves.
	for _, want := range []string{`{"marketing":true,"marketingNight":true}`, `{"message":"The withdrawal process has been executed."}`} {
		if !slices.ContainsFunc(outputs, func(o string) bool { return strings.Contains(o, want) }) {
			t.Errorf("README step 8: no answer %s in\n%s", want, strings.Join(outputs, "\n"))
		}
	}
	u := e.UserView(testApp{ID: values["APP_ID"]}, "user-1")
	if u.State != "withdrawn" || len(u.Devices) != 0 || u.Marketing {
		t.Fatalf("README step 8: got user %+v, want user-1 withdrawn with no device and no consent", u)
	}
}

// runSteps runs the commands in bash in dir, in order, with the variables
// set so far; a `VAR=prefix…` line takes the value from the previous
// command's output; before, when not nil, is called before each command is
// run. It returns the variables and each command's output.
func runSteps(t *testing.T, dir string, cmds []string, before func(cmd string, values map[string]string)) (map[string]string, []string) {
	t.Helper()
	var outputs []string
	var preamble strings.Builder
	values := map[string]string{}
	var last string
	for _, c := range cmds {
		if ps := placeholder.FindAllStringSubmatch(c, -1); ps != nil {
			for _, p := range ps {
				v := regexp.MustCompile(p[2] + `[0-9A-Za-z_-]+`).FindString(last)
				if v == "" {
					t.Fatalf("README: %s: no %s… in the previous answer:\n%s", p[1], p[2], last)
				}
				values[p[1]] = v
				preamble.WriteString(p[1] + "=" + v + "\n")
			}
			continue
		}
		if assignment.MatchString(c) {
			preamble.WriteString(c + "\n")
			continue
		}
		if before != nil {
			before(c, values)
		}
		cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+preamble.String()+c)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), `"code":"ERR-`) {
			t.Fatalf("README step %q: got %v\n%s", c, err, out)
		}
		last = string(out)
		outputs = append(outputs, last)
	}
	return values, outputs
}
