package api

import (
	"sync"
	"time"

	"github.com/heraldpush/herald"
)

// appCacheValidity is how long the SDK API trusts an app it read by API
// key before reading it again.
const appCacheValidity = time.Second

// maxCachedApps bounds the cache; past it, entries are dropped.
const maxCachedApps = 10_000

// appCache keeps the apps the SDK API authenticated recently, by API key,
// so that a registration does not read its app each time (a fifth of a
// registration's CPU). Only the SDK API uses it: its calls need of the app
// nothing but its id, which never changes for an API key, and no secret
// key or endpoint gate (a reissued secret, a changed setting) is checked
// on them, except identity verification, which reads the app again
// whenever the cached one has it on (see identityProof), so that a rotated
// identity secret takes effect at once. An app deleted meanwhile is caught by the store itself, which
// writes nothing for a missing app and answers not found; the SDK
// handlers then forget the key and read the app again (see appGone), so
// the caller gets the answer an uncached read gives. The Server API reads
// the app on every request: its secret key and gates take effect at once.
type appCache struct {
	mu   sync.Mutex
	apps map[string]cachedApp
}

type cachedApp struct {
	app   herald.App
	until time.Time
}

func newAppCache() *appCache { return &appCache{apps: map[string]cachedApp{}} }

// get returns the app cached for apiKey, unless absent or too old.
func (c *appCache) get(apiKey string, now time.Time) (herald.App, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.apps[apiKey]
	if !ok || !now.Before(e.until) {
		return herald.App{}, false
	}
	return e.app, true
}

// put caches app for apiKey until appCacheValidity from now.
func (c *appCache) put(apiKey string, app herald.App, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.apps) >= maxCachedApps {
		for k, e := range c.apps {
			if !now.Before(e.until) {
				delete(c.apps, k)
			}
		}
		if len(c.apps) >= maxCachedApps {
			clear(c.apps)
		}
	}
	c.apps[apiKey] = cachedApp{app: app, until: now.Add(appCacheValidity)}
}

// forget drops apiKey's entry.
func (c *appCache) forget(apiKey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.apps, apiKey)
}
