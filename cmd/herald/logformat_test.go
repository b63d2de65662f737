package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
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
