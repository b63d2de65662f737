package admin

import (
	"context"
	"sync"
	"time"

	"github.com/heraldpush/herald"
)

// Sessions keeps the dashboard's sessions on the server, so that signing
// out ends a session for good: a copied cookie is refused afterwards. IDs
// are hashes of the cookie's nonce, never the cookie itself.
type Sessions interface {
	// CreateSession records a session that ends at expires.
	CreateSession(ctx context.Context, id string, expires time.Time) error
	// SessionExpires returns when a live session ends; herald.ErrNotFound
	// when there is no such session (never made, or signed out).
	SessionExpires(ctx context.Context, id string) (time.Time, error)
	// DeleteSession ends a session; ending an unknown one is no error.
	DeleteSession(ctx context.Context, id string) error
}

// memorySessions keeps sessions in this process: a restart signs everyone
// out, and on several nodes a session works only where it was made. It
// stands in until the store keeps sessions.
type memorySessions struct {
	mu       sync.Mutex
	sessions map[string]time.Time
	now      func() time.Time
}

// newMemorySessions returns an empty session store on the clock now.
func newMemorySessions(now func() time.Time) *memorySessions {
	return &memorySessions{sessions: map[string]time.Time{}, now: now}
}

// CreateSession records a session and forgets the expired ones.
func (m *memorySessions) CreateSession(_ context.Context, id string, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, exp := range m.sessions {
		if !now.Before(exp) {
			delete(m.sessions, k)
		}
	}
	m.sessions[id] = expires
	return nil
}

// SessionExpires returns when the session ends; ErrNotFound when there is
// none.
func (m *memorySessions) SessionExpires(_ context.Context, id string) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.sessions[id]
	if !ok {
		return time.Time{}, herald.ErrNotFound
	}
	return exp, nil
}

// DeleteSession ends a session.
func (m *memorySessions) DeleteSession(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}
