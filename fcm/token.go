package fcm

import (
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// DefaultTokenRefreshMargin is how long before its expiry a cached access
// token is replaced (Google's live an hour).
const DefaultTokenRefreshMargin = time.Minute

// uncached is an expiry buffer longer than any token lives: given to
// oauth2.ReuseTokenSourceWithExpiry it makes the source fetch on every
// call, leaving the caching to tokenCache.
const uncached = 100 * 365 * 24 * time.Hour

// tokenCache keeps an account's access token and fetches a new one ahead
// of its expiry, by the client's clock. The margin is the configured one,
// or half the token's lifetime when that is shorter: with oauth2's fixed
// 10 s margin, a token endpoint answering expires_in: 5 made every send
// fetch a token, and a margin at least the lifetime would do the same.
type tokenCache struct {
	fetch  oauth2.TokenSource // every call fetches
	now    func() time.Time
	margin time.Duration

	mu        sync.Mutex
	auth      string    // "Bearer " and the access token; "" before the first fetch
	refreshAt time.Time // zero: the token does not expire
}

// newTokenCache caches the tokens of src, which may itself be an oauth2
// reuse source: it is made to fetch on every call.
func newTokenCache(src oauth2.TokenSource, now func() time.Time, margin time.Duration) *tokenCache {
	return &tokenCache{fetch: oauth2.ReuseTokenSourceWithExpiry(nil, src, uncached), now: now, margin: margin}
}

// Authorization returns the cached token as a request's authorization
// header value, or fetches one when there is none or its refresh time has
// come. A failed fetch is not cached. The value is made once per token:
// joined per send, it cost each send an allocation and a copy of the
// token (Google's run to a few hundred bytes).
func (t *tokenCache) Authorization() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.auth != "" && (t.refreshAt.IsZero() || now.Before(t.refreshAt)) {
		return t.auth, nil
	}
	tok, err := t.fetch.Token()
	if err != nil {
		return "", err
	}
	t.auth, t.refreshAt = "Bearer "+tok.AccessToken, time.Time{}
	if life, expires := lifetime(tok, now); expires {
		t.refreshAt = refreshTime(now, life, t.margin)
	}
	return t.auth, nil
}

// lifetime is how long tok, fetched at now, is valid: the token endpoint's
// expires_in, read on the cache's clock (oauth2 sets Expiry by the wall
// clock), else what Expiry leaves. expires is false for a token without
// an expiry.
func lifetime(tok *oauth2.Token, now time.Time) (life time.Duration, expires bool) {
	if secs, ok := tok.Extra("expires_in").(float64); ok && secs > 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if tok.Expiry.IsZero() {
		return 0, false
	}
	return tok.Expiry.Sub(now), true
}

// refreshTime is when a token fetched at now and valid for life is
// replaced: margin before it expires, the margin at most half the
// lifetime so that a short-lived token still serves the sends of its
// first half instead of each send fetching one.
func refreshTime(now time.Time, life, margin time.Duration) time.Time {
	return now.Add(life - min(margin, life/2))
}
