package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditCommands: herald audit head prints the chain's signed head;
// herald audit verify --head proves the chain holds it, and refuses a head
// the master key did not sign.
func TestAuditCommands(t *testing.T) {
	t.Parallel()
	e := start(t)
	herald, must := e.cli(t)
	must("app", "create", "--name", "Audited")
	out := must("audit", "head")
	var head struct {
		Seq  int64  `json:"seq"`
		Hash string `json:"hash"`
		HMAC string `json:"hmac"`
		At   string `json:"at"`
	}
	if err := json.Unmarshal([]byte(out), &head); err != nil || head.Seq < 1 || len(head.Hash) != 64 || len(head.HMAC) != 64 || head.At == "" {
		t.Fatalf("audit head: got %q (%v), want {seq, hash, hmac, at}", out, err)
	}
	file := filepath.Join(t.TempDir(), "head.json")
	os.WriteFile(file, []byte(out), 0o600)
	if out := must("audit", "verify", "--head", file); !strings.Contains(out, `"ok":true`) {
		t.Errorf("audit verify --head: got %q, want ok", out)
	}
	head.HMAC = strings.Repeat("0", 64)
	forged, _ := json.Marshal(head)
	os.WriteFile(file, forged, 0o600)
	if _, err := herald("audit", "verify", "--head", file); err == nil || !strings.Contains(err.Error(), "head") {
		t.Errorf("audit verify with a forged head: got %v, want a refusal naming the head", err)
	}
}
