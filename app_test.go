package herald_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

func TestValidAPIKey(t *testing.T) {
	t.Parallel()
	good := "hk_" + strings.Repeat("aZ09", 8)
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{"OK", good, true},
		{"Generated", herald.NewAPIKey(), true},
		{"ErrEmpty", "", false},
		{"ErrPrefixOnly", "hk_", false},
		{"ErrShort", good[:len(good)-1], false},
		{"ErrLong", good + "a", false},
		{"ErrWrongPrefix", "hs_" + good[3:], false},
		{"ErrUpperPrefix", "HK_" + good[3:], false},
		{"ErrNoUnderscore", "hkx" + good[3:], false},
		{"ErrDash", good[:10] + "-" + good[11:], false},
		{"ErrUnderscore", good[:10] + "_" + good[11:], false},
		{"ErrSpace", good[:10] + " " + good[11:], false},
		{"ErrNonASCII", good[:33] + "é", false},
		{"ErrSecretKey", herald.NewSecretKey(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := herald.ValidAPIKey(tt.key); got != tt.want {
				t.Errorf("ValidAPIKey(%q): got %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestNewSecretKeyFormat(t *testing.T) {
	t.Parallel()
	k := herald.NewSecretKey()
	if len(k) != 43 || !strings.HasPrefix(k, "hs_") {
		t.Errorf("got %q, want hs_ and 40 base62 characters", k)
	}
	if herald.NewSecretKey() == k {
		t.Errorf("got the same secret twice, want fresh ones")
	}
}

func TestSecretMatches(t *testing.T) {
	t.Parallel()
	secret := herald.NewSecretKey()
	hash := herald.HashSecret(secret)
	tests := []struct {
		name      string
		presented string
		want      bool
	}{
		{"OK", secret, true},
		{"ErrOther", herald.NewSecretKey(), false},
		{"ErrEmpty", "", false},
		{"ErrPrefix", secret[:len(secret)-1], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := herald.SecretMatches(hash, tt.presented); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if strings.Contains(string(hash), secret) {
		t.Errorf("hash contains the secret")
	}
}

func TestAppUserAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tier    herald.Tier
		enabled bool
		want    bool
	}{
		{herald.TierFree, true, false},
		{herald.TierBasic, true, false},
		{herald.TierBusiness, true, true},
		{herald.TierEnterprise, true, true},
		{herald.TierBusiness, false, false},
		{herald.TierEnterprise, false, false},
	}
	for _, tt := range tests {
		a := herald.App{Tier: tt.tier, AppUserEnabled: tt.enabled}
		if got := a.AppUserAllowed(); got != tt.want {
			t.Errorf("tier %s enabled %v: got %v, want %v", tt.tier, tt.enabled, got, tt.want)
		}
	}
}

func TestAppLocation(t *testing.T) {
	t.Parallel()
	tests := []struct{ zone, want string }{
		{"", "Asia/Seoul"},
		{"Nowhere/Atlantis", "Asia/Seoul"},
		{"Europe/Paris", "Europe/Paris"},
	}
	for pass := range 2 { // the second from the zones loaded
		for _, tt := range tests {
			if got := (herald.App{TimeZone: tt.zone}).Location().String(); got != tt.want {
				t.Errorf("pass %d, zone %q: got %s, want %s", pass, tt.zone, got, tt.want)
			}
		}
	}
}

func TestNewIDSortable(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 6, 11, 22, 4, 30, 0, time.UTC)
	a, b := herald.NewID("push_", t0), herald.NewID("push_", t0.Add(time.Millisecond))
	if !strings.HasPrefix(a, "push_") || len(a) != len("push_")+22 {
		t.Errorf("got %q, want push_ and 22 characters", a)
	}
	if a >= b {
		t.Errorf("got %q >= %q, want ids sorted by time", a, b)
	}
}

func TestNewIDOrderWithinAMillisecond(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	prev := herald.NewID("push_", now)
	for range 1000 {
		id := herald.NewID("push_", now)
		if id <= prev {
			t.Fatalf("got %s after %s, want IDs of one millisecond in the order they were made", id, prev)
		}
		prev = id
	}
}
