package main

import (
	"encoding/json"
	"testing"
)

// fieldOf digs a string out of a JSON object by path.
func fieldOf(t *testing.T, raw json.RawMessage, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

func tokenOf(t *testing.T, raw json.RawMessage) string { return fieldOf(t, raw, "token") }
