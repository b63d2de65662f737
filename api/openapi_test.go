package api_test

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/api"
)

// The document is read with a small line scanner rather than a YAML
// library: api/openapi.yaml is written in plain block style (two-space
// indentation, flow collections only on one line), which
// TestOpenAPIWellFormed holds it to, so its paths and operations can be
// found line by line without adding a dependency.

var (
	pathKey   = regexp.MustCompile(`^  (/\S*):$`)
	methodKey = regexp.MustCompile(`^    (get|put|post|delete|options|head|patch|trace):$`)
	// pathItemKey names the other fields a Path Item may have at that level.
	pathItemKey = regexp.MustCompile(`^    (summary|description|servers|parameters):`)
)

// optionalRoutes are documented but registered outside the route tables,
// so the test neither demands them nor flags them: cmd/herald serves
// /metrics on the admin listener through admin.Config.Extra, which
// admin.Routes cannot see. When admin.Routes lists it, it is checked like
// any other route.
var optionalRoutes = []string{"GET /metrics"}

// pendingRoutes are fixed by DESIGN.md sections 6 and 7 and documented
// before their handlers land (other branches build them): a documented
// route here need not be registered yet. Once it is, it is checked like
// any other; empty this list when they have all landed.
var pendingRoutes = []string{
	"POST /api/sdk/v2/events",
	"GET /admin/v1/apps/{appId}/overview",
	"GET /admin/v1/apps/{appId}/users",
	"POST /admin/v1/apps/{appId}/reconfirmation/run",
	"POST /admin/v1/apps/{appId}/consent-import",
}

// sdkPreflight is the prefix route that answers every CORS preflight of
// the SDK API; the document repeats it on each SDK path, as a validator
// matches a request to the concrete path before a templated one.
const sdkPreflight = "OPTIONS /api/sdk/v2/{path}"

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	documented, problems := documentedOperations(api.OpenAPI)
	for _, p := range problems {
		t.Error(p)
	}

	registered := map[string]bool{}
	for _, pattern := range append(api.Routes(), admin.Routes()...) {
		registered[openAPIRoute(pattern)] = true
	}

	var missing, unknown []string
	for r := range registered {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for r := range documented {
		if strings.HasPrefix(r, "OPTIONS /api/sdk/v2/") && registered[sdkPreflight] {
			continue
		}
		if !registered[r] && !slices.Contains(optionalRoutes, r) && !slices.Contains(pendingRoutes, r) {
			unknown = append(unknown, r)
		}
	}
	slices.Sort(missing)
	slices.Sort(unknown)
	if len(missing) == 0 && len(unknown) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("api/openapi.yaml and api.Routes() ∪ admin.Routes() disagree.")
	if len(missing) > 0 {
		fmt.Fprintf(&b, "\nregistered but not documented (%d) — describe them in api/openapi.yaml:", len(missing))
		for _, r := range missing {
			b.WriteString("\n    " + r)
		}
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&b, "\ndocumented but not registered (%d) — register them in the route tables, or remove them from api/openapi.yaml:", len(unknown))
		for _, r := range unknown {
			b.WriteString("\n    " + r)
		}
	}
	t.Error(b.String())
}

// openAPIRoute turns a ServeMux pattern into the "METHOD /path" form of the
// document: "{name...}" and "{$}" become OpenAPI templates, and a trailing
// slash pattern, which ServeMux matches as a prefix ("OPTIONS /api/sdk/v2/",
// the SDK's CORS preflight), is documented as "/prefix/{path}".
func openAPIRoute(pattern string) string {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "ANY", pattern
	}
	path = strings.ReplaceAll(path, "{$}", "")
	path = regexp.MustCompile(`\{(\w+)\.\.\.\}`).ReplaceAllString(path, "{$1}")
	if len(path) > 1 && strings.HasSuffix(path, "/") {
		path += "{path}"
	}
	return method + " " + path
}

func TestOpenAPIRoute(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"GET /admin/v1/apps/{appId}", "GET /admin/v1/apps/{appId}"},
		{"OPTIONS /api/sdk/v2/", "OPTIONS /api/sdk/v2/{path}"},
		{"GET /files/{name...}", "GET /files/{name}"},
		{"GET /{$}", "GET /"},
		{"GET /healthz", "GET /healthz"},
	}
	for _, tt := range tests {
		if got := openAPIRoute(tt.pattern); got != tt.want {
			t.Errorf("openAPIRoute(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}

// documentedOperations returns the "METHOD /path" of every operation under
// paths:, and what is wrong with how they are written.
func documentedOperations(doc []byte) (map[string]bool, []string) {
	ops := map[string]bool{}
	var problems []string
	paths := map[string]bool{}
	inPaths, path := false, ""
	for i, line := range lines(doc) {
		no := i + 1
		switch {
		case line == "paths:":
			inPaths = true
			continue
		case !inPaths || blankOrComment(line):
			continue
		case indentOf(line) == 0:
			inPaths = false
			continue
		}
		if m := pathKey.FindStringSubmatch(line); m != nil {
			path = m[1]
			if paths[path] {
				problems = append(problems, fmt.Sprintf("line %d: path %s appears twice", no, path))
			}
			paths[path] = true
			continue
		}
		if indentOf(line) == 2 {
			problems = append(problems, fmt.Sprintf("line %d: %q is not a path key (want `  /path:`)", no, line))
			continue
		}
		if m := methodKey.FindStringSubmatch(line); m != nil {
			op := strings.ToUpper(m[1]) + " " + path
			if ops[op] {
				problems = append(problems, fmt.Sprintf("line %d: operation %s appears twice", no, op))
			}
			ops[op] = true
			continue
		}
		if indentOf(line) == 4 && !pathItemKey.MatchString(line) {
			problems = append(problems, fmt.Sprintf("line %d: %q is neither an HTTP method nor a Path Item field", no, strings.TrimSpace(line)))
		}
	}
	if len(ops) == 0 {
		problems = append(problems, "no operations found under paths:")
	}
	return ops, problems
}

func TestOpenAPIWellFormed(t *testing.T) {
	doc := api.OpenAPI
	if !regexp.MustCompile(`^openapi: ["']?3\.1\.\d+["']?\n`).Match(doc) {
		first, _, _ := bytes.Cut(doc, []byte("\n"))
		t.Errorf("first line = %q, want openapi: 3.1.x", first)
	}
	for _, p := range indentationProblems(doc) {
		t.Error(p)
	}
	for _, key := range []string{"info", "servers", "paths", "components"} {
		if !slices.Contains(lines(doc), key+":") {
			t.Errorf("top-level %s: missing", key)
		}
	}
	for _, url := range []string{"http://127.0.0.1:8080", "http://127.0.0.1:8081"} {
		if !slices.Contains(lines(doc), "  - url: "+url) {
			t.Errorf("servers: no entry for %s", url)
		}
	}
	// Generated clients carry the document to app teams, who cannot look
	// up the project's own specification sections or issues.
	for _, cite := range regexp.MustCompile(`(?i)\b(spec(ification)? (section )?\d[\d.]*|issue \d+|DESIGN(\.md)? \d+)`).FindAll(doc, -1) {
		t.Errorf("the document cites %q, which its readers cannot look up", cite)
	}
}

func TestOpenAPIReferencesResolve(t *testing.T) {
	defined := componentNames(api.OpenAPI)
	ref := regexp.MustCompile(`\$ref: ['"]?(#/[^'"\s]+)['"]?`)
	for i, line := range lines(api.OpenAPI) {
		if m := ref.FindStringSubmatch(line); m != nil && !defined[m[1]] {
			t.Errorf("line %d: $ref %s names no component", i+1, m[1])
		}
	}
}

// componentNames returns "#/components/<section>/<name>" for every
// component the document defines.
func componentNames(doc []byte) map[string]bool {
	names := map[string]bool{}
	section := regexp.MustCompile(`^  (\w+):$`)
	name := regexp.MustCompile(`^    ([^\s:'"]+):`)
	in, current := false, ""
	for _, line := range lines(doc) {
		switch {
		case line == "components:":
			in = true
		case blankOrComment(line) || !in:
		case indentOf(line) == 0:
			in = false
		case section.MatchString(line):
			current = section.FindStringSubmatch(line)[1]
		case name.MatchString(line) && current != "":
			names["#/components/"+current+"/"+name.FindStringSubmatch(line)[1]] = true
		}
	}
	return names
}

func TestOpenAPIOperationsAreComplete(t *testing.T) {
	ids := map[string]int{}
	opID := regexp.MustCompile(`^      operationId: (\S+)$`)
	var op string
	var start int
	var hasResponses, hasSecurity bool
	finish := func() {
		if op == "" {
			return
		}
		if !hasResponses {
			t.Errorf("line %d: %s has no responses", start, op)
		}
		if !hasSecurity {
			t.Errorf("line %d: %s does not say its security (use security: [] for none)", start, op)
		}
	}
	path, inPaths := "", false
	for i, line := range lines(api.OpenAPI) {
		if blankOrComment(line) {
			continue
		}
		if line == "paths:" {
			inPaths = true
			continue
		}
		if indentOf(line) <= 4 {
			finish()
			op = ""
		}
		if indentOf(line) == 0 {
			inPaths = false
		}
		if m := pathKey.FindStringSubmatch(line); m != nil && inPaths {
			path = m[1]
		}
		if m := methodKey.FindStringSubmatch(line); m != nil && inPaths {
			op, start, hasResponses, hasSecurity = strings.ToUpper(m[1])+" "+path, i+1, false, false
		}
		if op == "" {
			continue
		}
		hasResponses = hasResponses || line == "      responses:"
		hasSecurity = hasSecurity || strings.HasPrefix(line, "      security:")
		if m := opID.FindStringSubmatch(line); m != nil {
			if prev, dup := ids[m[1]]; dup {
				t.Errorf("line %d: operationId %s already used on line %d", i+1, m[1], prev)
			}
			ids[m[1]] = i + 1
		}
	}
	finish()
}

// TestOpenAPIErrorCodes holds the document to the error codes of spec
// section 7 and DESIGN.md section 4, each with its message to the letter.
func TestOpenAPIErrorCodes(t *testing.T) {
	codes := map[string]string{
		"ERR-AB-VAL-00": "Incorrect request. Server cannot understand request.",
		"ERR-AB-KSY-11": "Required parameters missing.",
		"ERR-AB-AGK-11": "Api key not found.",
		"ERR-AB-SGK-11": "Secret key not found.",
		"ERR-AB-AGK-12": "Invalid api key type.",
		"ERR-AB-KSY-13": "Provided key information not found. Please check your key again.",
		"ERR-AB-SGK-13": "Incorrect secret key.",
		"ERR-AB-ACS-31": "This app is unable to handle user preference.",
		"ERR-AB-ACS-32": "User withdrawn. Please re-register.",
		"ERR-AB-ACS-33": "User not found.",
		"ERR-AB-ACS-21": "This app is unable to handle user preference.",
		"ERR-AB-ACS-22": "User already withdrawn.",
		"ERR-AB-ACS-23": "User not found.",
		"ERR-AB-PSS-91": "App data not found.",
		"ERR-AB-PSS-92": "FCM Account data not found.",
		"ERR-AB-RTL-01": "Too many requests.",
		"ERR-AB-IDM-01": "Idempotency key reused with a different request.",
		"ERR-AB-SYS-00": "Internal server error.",
		"ERR-AB-SCH-01": "Scheduled push can no longer be changed.",
		"ERR-AB-SYS-01": "Service temporarily unavailable.",
		"ERR-AB-VAL-02": "No device to send to.",
		"ERR-AB-CFG-01": "Feature not enabled for this app.",
		"ERR-AB-SDK-31": "Identity verification failed.",
	}
	// Each code has an example whose body carries "code: X" then
	// "message: M" on the next line.
	ls := lines(api.OpenAPI)
	for code, message := range codes {
		found := false
		for i := 0; i+1 < len(ls) && !found; i++ {
			found = strings.TrimSpace(ls[i]) == "code: "+code && strings.TrimSpace(ls[i+1]) == "message: "+message
		}
		if !found {
			t.Errorf("no example error body with code %s and message %q", code, message)
		}
	}
}

// indentationProblems checks that the document keeps to the block style
// the scanners above rely on: spaces only, two per level, a key with no
// value followed by a line one level deeper, nothing deeper after a
// scalar, dedents only to a level that is open, flow collections closed on
// their line, and no key twice in one mapping.
func indentationProblems(doc []byte) []string {
	var problems []string
	report := func(no int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("line %d: ", no)+fmt.Sprintf(format, args...))
	}
	type level struct {
		indent int
		keys   map[string]int
	}
	stack := []level{{0, map[string]int{}}}
	blockScalar := regexp.MustCompile(`(^|:\s+)[|>][+-]?$`)
	key := regexp.MustCompile(`^('[^']*'|"[^"]*"|[^'"\s#\[{][^:#]*?)\s*:(\s|$)`)
	prevContent, prevOpens := 0, false // content indent of the line before, and whether it was "key:"
	scalarAt := -1                     // the indent a block scalar's text must exceed, while in one
	lastNo := 0
	for i, line := range lines(doc) {
		no := i + 1
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := indentOf(line)
		if scalarAt >= 0 {
			if indent > scalarAt {
				continue
			}
			scalarAt = -1
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		lastNo = no
		if lead := line[:len(line)-len(strings.TrimLeft(line, " \t"))]; strings.Contains(lead, "\t") {
			report(no, "tab in indentation")
		}
		if indent%2 != 0 {
			report(no, "indented by %d spaces, want a multiple of 2", indent)
		}
		switch {
		case prevOpens && indent != prevContent+2:
			report(no, "indented by %d after a key with no value at %d, want %d", indent, prevContent, prevContent+2)
		case !prevOpens && i > 0 && indent > prevContent:
			report(no, "indented by %d after a scalar at %d", indent, prevContent)
		}
		popped := false
		for len(stack) > 1 && stack[len(stack)-1].indent > indent {
			stack, popped = stack[:len(stack)-1], true
		}
		if top := stack[len(stack)-1].indent; top < indent {
			if popped {
				report(no, "dedent to %d, a level never opened", indent)
			}
			stack = append(stack, level{indent, map[string]int{}})
		}
		content, rest := indent, strings.TrimSpace(line)
		if rest == "-" || strings.HasPrefix(rest, "- ") {
			// A sequence item opens a fresh mapping two columns in.
			content, rest = indent+2, strings.TrimSpace(rest[1:])
			stack = append(stack, level{content, map[string]int{}})
		}
		if (strings.HasPrefix(valueOf(rest), "[") && !strings.HasSuffix(rest, "]")) ||
			(strings.HasPrefix(valueOf(rest), "{") && !strings.HasSuffix(rest, "}")) {
			report(no, "flow collection not closed on its line")
		}
		if m := key.FindStringSubmatch(rest); m != nil {
			k := strings.Trim(m[1], `'"`)
			keys := stack[len(stack)-1].keys
			if first, dup := keys[k]; dup {
				report(no, "key %q repeats the one on line %d", k, first)
			}
			keys[k] = no
		}
		prevContent, prevOpens = content, strings.HasSuffix(rest, ":") && key.MatchString(rest)
		if blockScalar.MatchString(rest) {
			scalarAt, prevOpens = content, false
		}
	}
	if prevOpens {
		report(lastNo, "key with no value at the end of the document")
	}
	return problems
}

// valueOf returns what follows "key: " in s, or s when it has no key.
func valueOf(s string) string {
	if _, v, ok := strings.Cut(s, ": "); ok && !strings.HasPrefix(s, "'") && !strings.HasPrefix(s, `"`) {
		return strings.TrimSpace(v)
	}
	return s
}

func TestIndentationProblems(t *testing.T) {
	tests := []struct {
		name, doc string
		want      int
	}{
		{"OK", "a:\n  b: 1\n  c:\n    - d: 2\n      e: 3\n    - f\n  g: |\n    text\n\n    more\nh: [1, 2]\n", 0},
		{"OddIndent", "a:\n   b: 1\n", 2},
		{"DeeperAfterScalar", "a: 1\n  b: 2\n", 1},
		{"KeyWithoutValue", "a:\nb: 1\n", 1},
		{"DuplicateKey", "a:\n  b: 1\n  b: 2\n", 1},
		{"SameKeyInTwoItems", "a:\n  - b: 1\n  - b: 2\n", 0},
		{"UnopenedDedent", "a:\n  b:\n    c:\n      d: 1\n   e: 2\n", 2},
		{"OpenFlow", "a: [1, 2\n", 1},
		{"Tab", "a:\n\tb: 1\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := indentationProblems([]byte(tt.doc)); len(got) != tt.want {
				t.Errorf("got %d problems %q, want %d", len(got), got, tt.want)
			}
		})
	}
}

func lines(doc []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), "\r"))
	}
	return out
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func blankOrComment(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// TestOpenAPIListsForbidden: every admin route that answers 403 to some
// caller (a role below the one it needs, a scoped admin, the owner's token
// on an operator's own account) says so in the document.
func TestOpenAPIListsForbidden(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for pattern, need := range admin.APINeeds() {
		if !need.Refuses() {
			continue
		}
		method, path, _ := strings.Cut(openAPIRoute(pattern), " ")
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil {
			continue // TestOpenAPIDocumentsEveryRoute names it
		}
		if item.GetOperation(method).Responses.Value("403") == nil {
			missing = append(missing, method+" "+path)
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("%s answers 403 to a caller below what it needs; the document lists no 403", m)
	}
}
