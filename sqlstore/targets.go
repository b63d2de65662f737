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
	appID string
	mu    sync.RWMutex
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
	t := s.targets
	h := maphash.String(t.seed, deviceID)
	t.mu.Lock()
	p := t.pushes[pushID]
	t.mu.Unlock()
	if p == nil {
		var err error
		if p, err = s.loadTargets(ctx, pushID); p == nil || err != nil {
			return false, err
		}
	}
	if p.appID != appID {
		return false, nil
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

// loadTargets reads a push's targets and keeps them; nil for an unknown
// push.
func (s *Store) loadTargets(ctx context.Context, pushID string) (*pushTargets, error) {
	p := &pushTargets{}
	err := s.reader().queryRow(ctx, `SELECT app_id FROM pushes WHERE id = ?`, pushID).Scan(&p.appID)
	if errors.Is(err, herald.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if err := s.readChunks(ctx, pushID, p); err != nil {
		return nil, err
	}
	t := s.targets
	t.mu.Lock()
	defer t.mu.Unlock()
	if kept := t.pushes[pushID]; kept != nil {
		return kept, nil // read at the same time by another request
	}
	t.pushes[pushID], t.order = p, append(t.order, pushID)
	t.size += p.n
	for t.size > maxTargets && len(t.order) > 1 {
		old := t.pushes[t.order[0]]
		t.size -= old.n // its later growth is not counted: a bound, not a tally
		delete(t.pushes, t.order[0])
		t.order = t.order[1:]
	}
	return p, nil
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
