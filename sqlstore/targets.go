package sqlstore

import (
	"context"
	"errors"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/heraldpush/herald"
)

// targets knows, for the pushes devices report events about, which app
// each belongs to and which devices it was sent to, read from the push's
// chunk slots (the devices the fan-out planned, written before any of a
// chunk's sends) and kept in memory: an event costs no read of its own.
// Slots never change once written, so a push's set only grows: a device
// not in it is looked for again in the chunks written since, until the
// push has ended (then every chunk is known). Devices are kept as 64-bit
// hashes (8 bytes each, a false match about one in 2^64/n); the memory is
// bounded by maxTargets, the pushes read longest ago dropped first.
type targets struct {
	seed maphash.Seed
	mu   sync.Mutex
	// pushes by id; order lists them as they were first read.
	pushes map[string]*pushTargets
	order  []string
	size   int
}

// maxTargets bounds the devices kept over all pushes (16 MiB of hashes).
const maxTargets = 2 << 20

// maxSets bounds the sorted runs a push's devices are kept in.
const maxSets = 8

func newTargets() *targets {
	return &targets{seed: maphash.MakeSeed(), pushes: map[string]*pushTargets{}}
}

// pushTargets is one push's known devices.
type pushTargets struct {
	// loaded is closed once the first read ended, with err when it
	// failed; appID is "" for an unknown push.
	loaded chan struct{}
	err    error
	appID  string
	mu     sync.RWMutex
	// sets are sorted runs of device hashes, one per read.
	sets [][]uint64
	n    int
	// chunks is how many of the push's chunks were read; ended that the
	// push had ended when they were, so there are no others.
	chunks int
	ended  bool
}

func (p *pushTargets) has(h uint64) bool {
	for _, set := range p.sets {
		if _, ok := slices.BinarySearch(set, h); ok {
			return true
		}
	}
	return false
}

// sentTo reports whether the app's push was sent to the device: false for
// an unknown push or another app's.
func (s *Store) sentTo(ctx context.Context, appID, pushID, deviceID string) (bool, error) {
	h := maphash.String(s.targets.seed, deviceID)
	p, err := s.pushTargets(ctx, pushID)
	if p == nil || err != nil || p.appID != appID {
		return false, err
	}
	p.mu.RLock()
	found, ended := p.has(h), p.ended
	p.mu.RUnlock()
	if found || ended {
		return found, nil
	}
	// The push may have chunks written since it was read.
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := s.readChunks(ctx, pushID, p); err != nil {
		return false, err
	}
	return p.has(h), nil
}

// pushTargets returns a push's targets, read once however many requests
// ask at the same time; nil for an unknown push (not kept: it may be
// stored later).
func (s *Store) pushTargets(ctx context.Context, pushID string) (*pushTargets, error) {
	t := s.targets
	t.mu.Lock()
	p := t.pushes[pushID]
	if p == nil {
		p = &pushTargets{loaded: make(chan struct{})}
		t.pushes[pushID] = p
		t.mu.Unlock()
		// Others wait on this read: the first asker's end does not cut it.
		loadCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventWriteTimeout)
		s.loadTargets(loadCtx, pushID, p)
		cancel()
	} else {
		t.mu.Unlock()
	}
	select {
	case <-p.loaded:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.err != nil || p.appID == "" {
		return nil, p.err
	}
	return p, nil
}

// loadTargets reads a push's targets into p, which waiters share; a push
// that is unknown, or could not be read, is forgotten again.
func (s *Store) loadTargets(ctx context.Context, pushID string, p *pushTargets) {
	defer close(p.loaded)
	t := s.targets
	err := s.reader().queryRow(ctx, `SELECT app_id FROM pushes WHERE id = ?`, pushID).Scan(&p.appID)
	if err == nil {
		err = s.readChunks(ctx, pushID, p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil || p.appID == "" {
		if !errors.Is(err, herald.ErrNotFound) {
			p.err = err
		}
		p.appID = ""
		delete(t.pushes, pushID)
		return
	}
	t.order = append(t.order, pushID)
	t.size += p.n
	for t.size > maxTargets && len(t.order) > 1 {
		old := t.pushes[t.order[0]]
		t.size -= old.n // its later growth is not counted: a bound, not a tally
		delete(t.pushes, t.order[0])
		t.order = t.order[1:]
	}
}

// readChunks adds the devices of the push's chunks not read yet (and of
// its delivery rows that are no slot's, which pushes stored before chunks
// had slots have). The push's status is read first: when it had ended,
// every chunk was written before.
func (s *Store) readChunks(ctx context.Context, pushID string, p *pushTargets) error {
	if p.ended {
		return nil
	}
	status, err := pushStatus(ctx, s.reader(), pushID)
	if err != nil {
		return err
	}
	var hashes []uint64
	add := func(deviceID string) { hashes = append(hashes, maphash.String(s.targets.seed, deviceID)) }
	next := p.chunks
	err = s.reader().each(ctx, func(row scanner) error {
		var chunk int
		var slots []byte
		if err := row.Scan(&chunk, &slots); err != nil {
			return err
		}
		ds, err := decodeSlots(slots, chunk)
		for _, d := range ds {
			add(d.DeviceID)
		}
		next = max(next, chunk+1)
		return err
	}, `SELECT chunk, slots FROM push_chunks WHERE push_id = ? AND chunk >= ? ORDER BY chunk`, pushID, p.chunks)
	if err != nil {
		return err
	}
	if p.chunks == 0 {
		err = s.reader().each(ctx, func(row scanner) error {
			var id string
			err := row.Scan(&id)
			add(id)
			return err
		}, `SELECT device_id FROM deliveries WHERE push_id = ? AND slot = FALSE AND state IN (?, ?, ?, ?)`,
			pushID, herald.DeliverySent, herald.DeliveryPending, herald.DeliveryInflight, herald.DeliveryRetry)
		if err != nil {
			return err
		}
	}
	p.chunks = next
	p.ended = status == herald.StatusDone || status == herald.StatusFailed || status == herald.StatusCancelled
	if len(hashes) == 0 {
		return nil
	}
	slices.Sort(hashes)
	p.sets, p.n = append(p.sets, hashes), p.n+len(hashes)
	if len(p.sets) > maxSets {
		// A push read page by page while it fans out: one run again, so
		// a lookup stays a search or two.
		all := slices.Concat(p.sets...)
		slices.Sort(all)
		p.sets = [][]uint64{all}
	}
	return nil
}
