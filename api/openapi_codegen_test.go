package api_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/api"
)

// oapiCodegen is the Go client generator app teams use, at the newest
// version the module proxy serves; go run fetches it through the proxy (or
// the module cache), so it is no dependency of Herald's module.
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// clientModule is the go.mod of the generated client: the modules the
// default output (types, client, echo server, embedded spec) imports, at
// the versions this test was written with.
const clientModule = `module example.com/heraldclient

go 1.26

require (
	github.com/getkin/kin-openapi v0.142.0
	github.com/labstack/echo/v4 v4.16.0
	github.com/oapi-codegen/runtime v1.9.0
	go.yaml.in/yaml/v3 v3.0.4
)
`

// untypedField finds a struct field typed interface{} (or any), what a
// schema no Go type fits generates: a member that should have had a type.
var untypedField = regexp.MustCompile(`(?m)^\s+\w+\s+\*?(interface\{\}|any)\s+` + "`json:\"([^\"]+)\"")

// TestOpenAPIGoClient generates the Go client with oapi-codegen's default
// settings from api/openapi.yaml, as an app team would, and builds and vets
// it with testdata/goclient/use.go, which makes the README's calls through
// it; testdata/goclient/roundtrip_test.go then decodes and re-encodes
// through the generated types every push answer (and the apps' answers) a
// live server gives (liveEnv.clientAnswers), which must come out
// unchanged. It needs the
// module proxy or a module cache holding oapi-codegen.
func TestOpenAPIGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generating and compiling the oapi-codegen client takes a minute")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	t.Parallel() // a go subprocess of its own: nothing shared with the other tests
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) []byte {
		cmd := exec.CommandContext(ctx, gobin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %v: %v\n%s%s", args, err, out, stderr.Bytes())
		}
		return out
	}
	write("openapi.yaml", api.OpenAPI)
	client := run("run", oapiCodegen, "-package", "heraldclient", "openapi.yaml")
	for _, m := range untypedField.FindAllSubmatch(client, -1) {
		t.Errorf("generated member %q is typed %s: give its schema a type", m[2], m[1])
	}
	write("client.go", client)
	use, err := os.ReadFile(filepath.Join("testdata", "goclient", "use.go"))
	if err != nil {
		t.Fatal(err)
	}
	write("use.go", use)
	roundTrip, err := os.ReadFile(filepath.Join("testdata", "goclient", "roundtrip_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	write("roundtrip_test.go", roundTrip)
	if err := os.Mkdir(filepath.Join(dir, "answers"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, a := range newLiveEnv(t).clientAnswers() {
		write(filepath.Join("answers", fmt.Sprintf("%02d_%s_%s.json", i, strings.ReplaceAll(a.name, " ", "-"), a.schema)), a.body)
	}
	write("go.mod", []byte(clientModule))
	run("mod", "tidy")
	run("vet", "./...")
	run("test", "-count=1", "./...")

	// The last release's clients keep working: every constant its
	// document generated is generated still, and its scenario code
	// compiles against the new client (docs/changes.md).
	released := filepath.Join("testdata", "released")
	write("released.yaml", readFile(t, filepath.Join(released, "openapi.yaml")))
	now := generatedConsts(client)
	for name, was := range generatedConsts(run("run", oapiCodegen, "-package", "heraldclient", "released.yaml")) {
		if got, ok := now[name]; !ok {
			t.Errorf("the released client's constant %s (%s) is no longer generated", name, was)
		} else if got != was {
			t.Errorf("the released client's constant %s: was %s, now %s", name, was, got)
		}
	}
	for _, name := range []string{"use.go", "roundtrip_test.go"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("use.go", readFile(t, filepath.Join(released, "goclient", "use.go")))
	run("vet", "./...")
}

// readFile returns a file's bytes or fails t.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// generatedConst finds a constant of generated code: its name, type and
// value.
var generatedConst = regexp.MustCompile(`(?m)^\t(\w+)\s+(\w+)\s+=\s+(.+)$`)

// generatedConsts maps each constant of generated code to its type and
// value.
func generatedConsts(code []byte) map[string]string {
	out := map[string]string{}
	for _, m := range generatedConst.FindAllSubmatch(code, -1) {
		out[string(m[1])] = string(m[2]) + " = " + string(m[3])
	}
	return out
}
