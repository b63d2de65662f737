package api

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

func TestAppCache(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 6, 11, 22, 0, 0, 0, time.UTC)
	t.Run("ValidThenExpired", func(t *testing.T) {
		t.Parallel()
		c := newAppCache()
		c.put("k", herald.App{ID: "app_1"}, t0)
		if a, ok := c.get("k", t0.Add(appCacheValidity-time.Nanosecond)); !ok || a.ID != "app_1" {
			t.Errorf("within validity: got %q %v, want app_1 true", a.ID, ok)
		}
		if _, ok := c.get("k", t0.Add(appCacheValidity)); ok {
			t.Error("at the end of validity: got a hit, want none")
		}
	})
	t.Run("Forget", func(t *testing.T) {
		t.Parallel()
		c := newAppCache()
		c.put("k", herald.App{ID: "app_1"}, t0)
		c.forget("k")
		if _, ok := c.get("k", t0); ok {
			t.Error("after forget: got a hit, want none")
		}
	})
	t.Run("Bounded", func(t *testing.T) {
		t.Parallel()
		c := newAppCache()
		for i := range maxCachedApps {
			c.put(strconv.Itoa(i), herald.App{ID: "app"}, t0)
		}
		c.put("old", herald.App{ID: "app"}, t0) // full, none expired: emptied
		if n := len(c.apps); n != 1 {
			t.Errorf("full with none expired: got %d entries after put, want 1", n)
		}
		for i := range maxCachedApps - 1 {
			c.put(strconv.Itoa(i), herald.App{ID: "app"}, t0.Add(appCacheValidity))
		}
		c.put("new", herald.App{ID: "app"}, t0.Add(appCacheValidity)) // "old" expired: only it dropped
		if _, ok := c.get("old", t0); ok || len(c.apps) != maxCachedApps {
			t.Errorf("full with one expired: got %d entries (old kept %v), want %d without old", len(c.apps), ok, maxCachedApps)
		}
	})
}
