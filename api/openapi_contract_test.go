package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/heraldpush/herald/api"
)

// oasdiff finds the breaking changes between two OpenAPI documents; go run
// fetches it through the module proxy (or the module cache), pinned, so it
// is no dependency of Herald's module.
const oasdiff = "github.com/oasdiff/oasdiff@v1.37.0"

// releasedDoc is a copy of the document of the last release: what app
// teams generated their clients from (docs/changes.md).
const releasedDoc = "testdata/released/openapi.yaml"

// TestOpenAPIContract holds api/openapi.yaml to the last released
// document: its info.version is a semantic version no lower than the
// release's; a version that moved has its section in docs/changes.md; and
// a breaking change (oasdiff's level ERR: a member, route, answer or enum
// value gone, a type changed, a field made required or nullable) fails
// unless the major version moved and that section names the change's id.
func TestOpenAPIContract(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs oasdiff through go run")
	}
	released, err := os.ReadFile(releasedDoc)
	if err != nil {
		t.Fatal(err)
	}
	was, now := docVersion(t, released), docVersion(t, api.OpenAPI)
	if compareVersions(now, was) < 0 {
		t.Fatalf("info.version %s is lower than the released %s", fmtVersion(now), fmtVersion(was))
	}
	changes, err := os.ReadFile(filepath.Join("..", "docs", "changes.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := changesSection(string(changes), fmtVersion(now))
	if now != was && section == "" {
		t.Errorf("info.version moved from %s to %s: docs/changes.md has no \"## %s\" section saying what changed",
			fmtVersion(was), fmtVersion(now), fmtVersion(now))
	}
	breaking := breakingChanges(t, released, api.OpenAPI)
	for _, c := range breaking {
		switch {
		case addableInMinor[c.ID] && compareVersions(now, was) > 0 && strings.Contains(section, c.ID):
			// docs/changes.md's rules: a minor version may add an enum
			// value to an answer, named in its section.
		case now[0] == was[0]:
			t.Errorf("breaking change without a new major version (released %s, now %s): %s %s %s: %s",
				fmtVersion(was), fmtVersion(now), c.ID, c.Operation, c.Path, c.Text)
		case !strings.Contains(section, c.ID):
			t.Errorf("breaking change not in docs/changes.md's \"## %s\": %s %s %s: %s", fmtVersion(now), c.ID, c.Operation, c.Path, c.Text)
		}
	}
	t.Logf("released %s, now %s: %d breaking changes", fmtVersion(was), fmtVersion(now), len(breaking))
}

// addableInMinor are the changes oasdiff counts as breaking that
// docs/changes.md allows in a minor version when its section names them:
// an enum value added to an answer (a client must take values it does not
// know, as the rules say).
var addableInMinor = map[string]bool{"response-property-enum-value-added": true}

// TestOpenAPIContractFindsBreaks proves the check above can fail: a copy
// of the document with an enum value removed and an answer's member gone
// has breaking changes.
func TestOpenAPIContractFindsBreaks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs oasdiff through go run")
	}
	broken := bytes.Replace(api.OpenAPI, []byte("enum: [viewer, operator, admin]"), []byte("enum: [viewer, admin]"), 1)
	if bytes.Equal(broken, api.OpenAPI) {
		t.Fatal("the role enum this test edits is not in the document")
	}
	ids := map[string]bool{}
	for _, c := range breakingChanges(t, api.OpenAPI, broken) {
		ids[c.ID] = true
	}
	if !ids["request-property-enum-value-removed"] {
		t.Errorf("removing an enum value: got breaking changes %v, want request-property-enum-value-removed", ids)
	}
}

// breakingChange is one of oasdiff's findings.
type breakingChange struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Level     int    `json:"level"`
	Operation string `json:"operation"`
	Path      string `json:"path"`
}

// breakingChanges runs oasdiff on the two documents and returns its
// findings of level ERR (3).
func breakingChanges(t *testing.T, base, revision []byte) []breakingChange {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"base.yaml": base, "revision.yaml": revision} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gobin, "run", oasdiff, "breaking", "base.yaml", "revision.yaml", "--format", "json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oasdiff: %v\n%s", err, stderr.Bytes())
	}
	var all []breakingChange
	if err := json.Unmarshal(out, &all); err != nil {
		t.Fatalf("oasdiff's answer: %v\n%s", err, out)
	}
	var errs []breakingChange
	for _, c := range all {
		if c.Level >= 3 {
			errs = append(errs, c)
		}
	}
	return errs
}

// docVersion is a document's info.version as major, minor, patch.
func docVersion(t *testing.T, doc []byte) [3]int {
	t.Helper()
	d, err := openapi3.NewLoader().LoadFromData(doc)
	if err != nil {
		t.Fatal(err)
	}
	m := semver.FindStringSubmatch(d.Info.Version)
	if m == nil {
		t.Fatalf("info.version %q is not a semantic version (MAJOR.MINOR.PATCH)", d.Info.Version)
	}
	var v [3]int
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v
}

var semver = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$`)

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			return a[i] - b[i]
		}
	}
	return 0
}

func fmtVersion(v [3]int) string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// changesSection returns the text of docs/changes.md's "## version"
// section up to the next "## ", or "" when it has none.
func changesSection(doc, version string) string {
	_, rest, ok := strings.Cut(doc, "\n## "+version+"\n")
	if !ok {
		return ""
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}
