package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
)

// TestJSONLogDurations: a JSON log line writes a duration as milliseconds
// (a number), the unit docs/operations.md gives; text keeps Go's text.
func TestJSONLogDurations(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := config{LogFormat: "json", LogLevel: "info"}
	c.logger(&out).Info("request", "latency", 1500*time.Microsecond)
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("log line %q: %v", out.String(), err)
	}
	if got, ok := line["latency"].(float64); !ok || got != 1.5 {
		t.Errorf("latency: got %#v, want 1.5 (milliseconds)", line["latency"])
	}
	out.Reset()
	c.LogFormat = "text"
	c.logger(&out).Info("request", "latency", 1500*time.Microsecond)
	if !strings.Contains(out.String(), "latency=1.5ms") {
		t.Errorf("text log: got %q, want latency=1.5ms", out.String())
	}
}

// TestAnnounce: the start banner is text, or with --log-format json one
// JSON object naming the listeners.
func TestAnnounce(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	text := "herald: public API on http://a, admin on http://b"
	(&config{LogFormat: "text"}).announce(&out, text, "listening", "public", "http://a", "admin", "http://b")
	if out.String() != text+"\n" {
		t.Errorf("text banner: got %q, want %q", out.String(), text+"\n")
	}
	out.Reset()
	(&config{LogFormat: "json"}).announce(&out, text, "listening", "public", "http://a", "admin", "http://b")
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("json banner %q: %v", out.String(), err)
	}
	if line["msg"] != "listening" || line["public"] != "http://a" || line["admin"] != "http://b" {
		t.Errorf("json banner: got %v, want msg listening with both addresses", line)
	}
}

// TestDocumentedPushLogFields: the log lines of a push carry the fields
// docs/operations.md's table lists for them, and no listed field is
// missing (it listed suppressed counts on "push fanned out", which only
// "push done" has).
func TestDocumentedPushLogFields(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string][]string{}
	for _, row := range strings.Split(string(doc), "\n") {
		for _, msg := range []string{"push fanned out", "push done"} {
			if strings.HasPrefix(row, "| `"+msg+"`") {
				cells := strings.Split(row, "|")
				for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(cells[3], -1) {
					documented[msg] = append(documented[msg], m[1])
				}
			}
		}
	}
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "logs-", "u1")
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "t", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(res.PushID, 10*time.Second)
	waitFor(t, "push done logged", 5*time.Second, func() bool { return strings.Contains(e.logs.String(), `msg="push done"`) })
	for msg, fields := range documented {
		var line string
		for _, l := range strings.Split(e.logs.String(), "\n") {
			if strings.Contains(l, `msg="`+msg+`"`) && strings.Contains(l, res.PushID) {
				line = l
			}
		}
		if line == "" {
			t.Errorf("%s: no log line for push %s", msg, res.PushID)
			continue
		}
		for _, f := range fields {
			if !strings.Contains(line, " "+f+"=") {
				t.Errorf("%s: docs list %s, the line %q has none", msg, f, line)
			}
		}
	}
	if len(documented) != 2 {
		t.Errorf("docs/operations.md: found rows for %v, want push fanned out and push done", documented)
	}
}
