package identity

import (
	"strings"
	"testing"
)

// TestPasswordHash: the hash is argon2id in PHC form at the settings
// password.go names, a fresh salt each time, and verifies only its own
// password; a hash of another form is an error, never a match.
func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h := NewHasher()
	a, b := h.Hash("correct horse battery"), h.Hash("correct horse battery")
	if !strings.HasPrefix(a, "$argon2id$v=19$m=19456,t=2,p=1$") || a == b {
		t.Fatalf("hashes: got %q and %q, want argon2id PHC strings with their own salts", a, b)
	}
	for _, c := range []struct {
		password string
		want     bool
	}{{"correct horse battery", true}, {"correct horse batterY", false}, {"", false}} {
		if ok, err := h.Verify(c.password, a); ok != c.want || err != nil {
			t.Errorf("verify(%q): got %v, %v, want %v", c.password, ok, err, c.want)
		}
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
		"$argon2id$v=16$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA", "$argon2id$v=19$m=0,t=2,p=1$c2FsdA$aGFzaA"} {
		if ok, err := h.Verify("x", bad); ok || err == nil {
			t.Errorf("verify against %q: got %v, %v, want an error", bad, ok, err)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", maxPassword)
	for _, c := range []struct {
		password, confirm string
		ok                bool
	}{
		{"elevenchars", "elevenchars", false},
		{"twelve chars", "twelve chars", true},
		{"열두글자비밀번호입니다요", "열두글자비밀번호입니다요", true}, // 12 characters, 36 bytes
		{"twelve chars", "twelve charz", false},
		{long, long, true},
		{long + "x", long + "x", false},
	} {
		if got := CheckPassword(c.password, c.confirm); (got == "") != c.ok {
			t.Errorf("CheckPassword(%q, %q): got %q, want ok %v", c.password, c.confirm, got, c.ok)
		}
	}
}
