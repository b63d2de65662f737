package api

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 6, 11, 22, 0, 0, 0, time.UTC)
	t.Run("BurstThenRefill", func(t *testing.T) {
		t.Parallel()
		l := newLimiter(10) // bursts of 20
		for i := range 20 {
			if ok, _ := l.allow("a", t0); !ok {
				t.Fatalf("request %d: refused within the burst", i)
			}
		}
		ok, wait := l.allow("a", t0)
		if ok || wait != 100*time.Millisecond {
			t.Fatalf("past the burst: got (%v, %s), want (false, 100ms)", ok, wait)
		}
		if ok, _ := l.allow("b", t0); !ok {
			t.Errorf("another key: refused, want its own bucket")
		}
		if ok, _ := l.allow("a", t0.Add(100*time.Millisecond)); !ok {
			t.Errorf("after 100ms: refused, want one token back")
		}
	})
	t.Run("EmptyTakesNothing", func(t *testing.T) {
		t.Parallel()
		l := newLimiter(0.5) // bursts of 1
		if empty, _ := l.empty("a", t0); empty {
			t.Fatalf("unknown key: got empty, want not")
		}
		l.allow("a", t0)
		for range 3 {
			if empty, wait := l.empty("a", t0); !empty || wait != 2*time.Second {
				t.Fatalf("after its one token: got (%v, %s), want (true, 2s)", empty, wait)
			}
		}
		if empty, _ := l.empty("a", t0.Add(2*time.Second)); empty {
			t.Errorf("after 2s: got empty, want a token back")
		}
	})
	t.Run("ForgetsIdleBuckets", func(t *testing.T) {
		t.Parallel()
		l := newLimiter(5)
		for i := range 1000 {
			l.allow(fmt.Sprint(i), t0)
		}
		l.allow("late", t0.Add(l.idle/2))
		if n := l.size(); n != 1001 {
			t.Fatalf("before the idle period: got %d buckets, want 1001", n)
		}
		l.allow("new", t0.Add(l.idle))
		if n := l.size(); n != 2 {
			t.Errorf("after the idle period: got %d buckets, want 2 (late and new)", n)
		}
	})
	t.Run("Bounded", func(t *testing.T) {
		t.Parallel()
		l := newLimiter(1)
		for i := range maxBuckets + 50 {
			l.allow(fmt.Sprint(i), t0)
		}
		if n := l.size(); n != maxBuckets {
			t.Errorf("got %d buckets, want at most %d", n, maxBuckets)
		}
	})
	t.Run("None", func(t *testing.T) {
		t.Parallel()
		l := newLimiter(0)
		if ok, _ := l.allow("a", t0); !ok {
			t.Errorf("no limit: refused")
		}
		if empty, _ := l.empty("a", t0); empty {
			t.Errorf("no limit: got empty")
		}
	})
}

func TestClientAddr(t *testing.T) {
	t.Parallel()
	tests := []struct{ remote, want string }{
		{"192.0.2.7:51234", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:443", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"not an address", "not an address"},
	}
	for _, tt := range tests {
		r := &http.Request{RemoteAddr: tt.remote}
		if got := clientAddr(r); got != tt.want {
			t.Errorf("clientAddr(%q): got %q, want %q", tt.remote, got, tt.want)
		}
	}
}
