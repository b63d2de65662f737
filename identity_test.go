package herald_test

import (
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

const testIdentitySecret = "hi_0123456789abcdefghijklmnopqrstuvwxyzABCD"

// TestIdentityToken holds IdentityToken to what `openssl dgst -sha256
// -hmac SECRET` prints for the userId (docs/operations.md's recipe).
func TestIdentityToken(t *testing.T) {
	t.Parallel()
	for user, want := range map[string]string{
		"alice": "b84fc6d8b28fe6792d1293ee3ade1638a2604410b95e2e17eb582cc16cd036f2",
		"사용자-7": "d053329e976059cc17f12324de3a6f340bd508ced75ae5e1bfd772ceabdcaf49",
	} {
		if got := herald.IdentityToken(testIdentitySecret, user); got != want {
			t.Errorf("IdentityToken(%q): got %s, want %s", user, got, want)
		}
	}
}

func TestIdentityProofVerifies(t *testing.T) {
	t.Parallel()
	alice := herald.IdentityToken(testIdentitySecret, "alice")
	tests := []struct {
		name  string
		proof herald.IdentityProof
		want  bool
	}{
		{"OK", herald.IdentityProof{Secret: testIdentitySecret, Token: alice}, true},
		{"Capitals", herald.IdentityProof{Secret: testIdentitySecret, Token: strings.ToUpper(alice)}, true},
		{"ErrNoToken", herald.IdentityProof{Secret: testIdentitySecret}, false},
		{"ErrOtherUser", herald.IdentityProof{Secret: testIdentitySecret, Token: herald.IdentityToken(testIdentitySecret, "bob")}, false},
		{"ErrOtherSecret", herald.IdentityProof{Secret: herald.NewIdentitySecret(), Token: alice}, false},
		{"ErrNoSecret", herald.IdentityProof{Token: herald.IdentityToken("", "alice")}, false},
		{"ErrTruncated", herald.IdentityProof{Secret: testIdentitySecret, Token: alice[:63]}, false},
	}
	for _, tc := range tests {
		if got := tc.proof.Verifies("alice"); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNewIdentitySecret(t *testing.T) {
	t.Parallel()
	a, b := herald.NewIdentitySecret(), herald.NewIdentitySecret()
	if !strings.HasPrefix(a, "hi_") || len(a) != 43 || a == b {
		t.Errorf("got %q and %q, want two different hi_ and 40 characters", a, b)
	}
}
