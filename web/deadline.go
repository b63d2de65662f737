package web

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// RequestDeadline bounds each request's work, the store's above all: a
// database that does not answer (frozen, or a black-holed network path)
// makes a request answer 503 when it passes, within DESIGN.md section 4's
// 10 seconds, instead of holding it for as long as the database is gone.
const RequestDeadline = 8 * time.Second

// RetryUnavailable is the Retry-After of a 503: long enough for a
// restarted database or a failed-over node to answer again.
const RetryUnavailable = 5 * time.Second

// Deadline gives every request's context a deadline d from its start, so
// every store call made for it ends by then (both engines' drivers stop
// at a context's deadline); Error answers a request whose deadline passed
// 503 ERR-AB-SYS-01. A handler that streams a body of any length moves
// the deadline on as it goes (Extend).
func Deadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := newMovingDeadline(r.Context(), d)
		defer ctx.cancel(context.Canceled)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Extend gives the request of ctx a fresh allowance of d from now: its
// context's deadline (set by Deadline; nothing when there is none) and,
// through w, its connection's read and write deadlines (the server's
// ReadTimeout and WriteTimeout, which bound the whole request). A handler
// that streams its body calls it before each part (a batch of an import),
// so that each part is bounded, not the whole. A deadline already passed
// stays passed.
func Extend(ctx context.Context, w http.ResponseWriter, d time.Duration) {
	if m, ok := ctx.Value(movingKey{}).(*movingDeadline); ok {
		m.extend(d)
	}
	rc := http.NewResponseController(w)
	at := time.Now().Add(d)
	_ = rc.SetReadDeadline(at) // unsupported (a test's recorder): the server's own timeouts stand
	_ = rc.SetWriteDeadline(at)
}

type movingKey struct{}

// movingDeadline is a request's context with a deadline Extend may move
// later: its Done closes when the deadline passes or the request's own
// context ends. Contexts derived from it see the deadline it has when
// they ask (context.WithTimeout asks once, at its start).
type movingDeadline struct {
	context.Context // the request's: its values, and its end
	done            chan struct{}
	stop            func() bool

	mu       sync.Mutex
	deadline time.Time
	timer    *time.Timer
	err      error
	// after are the functions AfterFunc registered, by id, run when the
	// context ends.
	after  map[int]func()
	nextID int
}

func newMovingDeadline(parent context.Context, d time.Duration) *movingDeadline {
	m := &movingDeadline{Context: parent, done: make(chan struct{}), deadline: time.Now().Add(d)}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.timer = time.AfterFunc(d, m.expire)
	m.stop = context.AfterFunc(parent, func() { m.cancel(parent.Err()) })
	return m
}

// expire ends the context unless its deadline moved meanwhile.
func (m *movingDeadline) expire() {
	m.mu.Lock()
	if left := time.Until(m.deadline); left > 0 {
		m.timer.Reset(left)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	m.cancel(context.DeadlineExceeded)
}

func (m *movingDeadline) extend(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		m.deadline = time.Now().Add(d)
	}
}

func (m *movingDeadline) cancel(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return
	}
	m.err = err
	m.timer.Stop()
	m.stop()
	close(m.done)
	for _, f := range m.after {
		go f()
	}
	m.after = nil
}

// AfterFunc runs f in a goroutine of its own once the context ends, as
// context.AfterFunc does; stop unregisters it, reporting whether it had
// not run yet. With it the context package joins contexts derived from
// this one (every store call makes one) to its end without a goroutine
// watching each.
func (m *movingDeadline) AfterFunc(f func()) (stop func() bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		go f()
		return func() bool { return false }
	}
	if m.after == nil {
		m.after = map[int]func(){}
	}
	id := m.nextID
	m.nextID++
	m.after[id] = f
	return func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		_, waiting := m.after[id]
		delete(m.after, id)
		return waiting
	}
}

func (m *movingDeadline) Deadline() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deadline, true
}

func (m *movingDeadline) Done() <-chan struct{} { return m.done }

func (m *movingDeadline) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

func (m *movingDeadline) Value(key any) any {
	if key == (movingKey{}) {
		return m
	}
	return m.Context.Value(key)
}
