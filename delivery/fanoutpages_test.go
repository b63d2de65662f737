package delivery

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// pagesStore is a fan-out's store whose device reads wait until the test
// lets each go, counting those in at once.
type pagesStore struct {
	Store // nil: any other method panics
	mu    sync.Mutex
	cond  *sync.Cond
	in    int // device reads in progress
	most  int // the most in at once
	let   int // device reads let go, and not yet taken
}

func (s *pagesStore) PushRecord(_ context.Context, id string) (herald.Push, error) {
	return herald.Push{ID: id, AppID: "app_1", Kind: herald.KindUsers, Status: herald.StatusSending}, nil
}

func (s *pagesStore) FanoutProgress(context.Context, string) (sendstore.FanoutCursor, bool, error) {
	return sendstore.FanoutCursor{}, false, nil
}

func (s *pagesStore) App(_ context.Context, id string) (herald.App, error) {
	return herald.App{ID: id}, nil
}

func (s *pagesStore) Recipients(context.Context, string) ([]herald.Recipient, error) {
	return []herald.Recipient{{UserID: "u1"}}, nil
}

func (s *pagesStore) DevicesOfUsers(context.Context, string, []string) (map[string][]herald.Device, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.in++
	s.most = max(s.most, s.in)
	s.cond.Broadcast()
	for s.let == 0 {
		s.cond.Wait()
	}
	s.let--
	s.in--
	return nil, nil
}

func (s *pagesStore) StartSending(context.Context, string, sendstore.Fanout) (bool, error) {
	return true, nil
}

// TestFanoutPagesPerCore: however many fan-outs start at once, at most one
// page per core is planned and recorded at a time, and every fan-out ends.
func TestFanoutPagesPerCore(t *testing.T) {
	t.Parallel()
	store := &pagesStore{}
	store.cond = sync.NewCond(&store.mu)
	s := New(Config{Store: store})
	places := cap(s.pages)
	if places != runtime.GOMAXPROCS(0) {
		t.Fatalf("places: got %d, want one per core (%d)", places, runtime.GOMAXPROCS(0))
	}
	const fanouts = 12
	errs := make(chan error, fanouts)
	for range fanouts {
		go func() { errs <- s.fanout(context.Background(), FanoutArgs{PushID: "push_1"}, time.Time{}, 0) }()
	}
	for left := fanouts; left > 0; left-- {
		store.mu.Lock()
		for store.in < min(places, left) {
			store.cond.Wait()
		}
		store.mu.Unlock()
		for range 100 { // the others, were they not held back, would come in now
			runtime.Gosched()
		}
		store.mu.Lock()
		store.let++
		store.cond.Broadcast()
		store.mu.Unlock()
	}
	for range fanouts {
		if err := <-errs; err != nil {
			t.Fatalf("fanout: %v", err)
		}
	}
	if store.most > places {
		t.Errorf("pages at once: got %d, want at most %d", store.most, places)
	}
}
