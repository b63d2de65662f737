package sqlstore

import (
	"context"
	"errors"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/heraldpush/herald"
)

// targets knows, for the pushes devices report events about, which app
// each belongs to, where each device's slots are (chunk and position, read
// from the push's chunk slots) and how far each chunk's sends are settled,
// kept in memory so that an event for a device sent the push costs no read
// of its own. It is a fast path only: a device it cannot show was sent
// (its slot not settled when last read, a delivery row, a retry chunk) is
// judged in the event's transaction (see judgeSlots), which is the rule.
//
// Slots never change once written, so a push's slots only grow: a device
// not among them is looked for again in the chunks written since, until
// the push has ended. Chunks' cursors and delivery rows are read again at
// most every targetsRefresh while the push sends. Devices are kept as
// 64-bit hashes (16 bytes a slot with its place, a false match about one in
// 2^64/n, which the transaction's check of the slot's device catches); the
// memory is bounded by maxTargets, the pushes read longest ago dropped
// first.
type targets struct {
	seed maphash.Seed
	mu   sync.Mutex
	// pushes by id; order lists them as they were first read.
	pushes map[string]*pushTargets
	order  []string
	size   int
}

// maxTargets bounds the slots kept over all pushes (32 MiB of them).
const maxTargets = 2 << 20

// maxSets bounds the sorted runs a push's slots are kept in.
const maxSets = 8

// targetsRefresh is how often a sending push's cursors and delivery rows
// are read again for the fast path.
const targetsRefresh = 100 * time.Millisecond

func newTargets() *targets {
	return &targets{seed: maphash.MakeSeed(), pushes: map[string]*pushTargets{}}
}

// slotRef is a slot of a push: its device's hash, its chunk and position.
type slotRef struct {
	h          uint64
	chunk, pos int32
}

// pushTargets is one push's known slots.
type pushTargets struct {
	// loaded is closed once the first read ended, with err when it
	// failed; appID is "" for an unknown push.
	loaded chan struct{}
	err    error
	appID  string
	mu     sync.RWMutex
	// sets are runs of slots sorted by hash, one per read.
	sets [][]slotRef
	n    int
	// fanout is how many fan-out chunks (0, 1, …) were read, retry how
	// many retry chunks (-1, -2, …).
	fanout, retry int
	// settled is each chunk's cursor as last read.
	settled map[int32]int32
	// sentRows are the devices with a delivery row recorded sent (a
	// resend, or a push from before chunk slots); unsent those with any
	// other row or a slot in a retry chunk: left to the transaction.
	sentRows, unsent map[uint64]bool
	// readAt is when cursors and rows were last read; final that the push
	// had ended then, so nothing changes any more.
	readAt time.Time
	final  bool
}

// verdict is what the cache knows of a device and a push.
type verdict int

const (
	// notPlanned: the push has no slot for the device (or is unknown, or
	// another app's).
	notPlanned verdict = iota
	// sentTo: a slot of the device was settled sent.
	sentTo
	// unsettled: the device has slots, none known sent; the event's
	// transaction judges them.
	unsettled
)

// judge returns what p knows of the device hashed h, and its slots. The
// caller holds p.mu.
func (p *pushTargets) judge(h uint64) (verdict, []slotRef) {
	if p.sentRows[h] {
		return sentTo, nil
	}
	var refs []slotRef
	for _, set := range p.sets {
		i, _ := slices.BinarySearchFunc(set, h, func(r slotRef, h uint64) int {
			switch {
			case r.h < h:
				return -1
			case r.h > h:
				return 1
			}
			return 0
		})
		for ; i < len(set) && set[i].h == h; i++ {
			refs = append(refs, set[i])
		}
	}
	if len(refs) == 0 {
		if p.unsent[h] {
			return unsettled, nil // a row only (a push from before slots)
		}
		return notPlanned, nil
	}
	if !p.unsent[h] {
		for _, r := range refs {
			if r.pos < p.settled[r.chunk] {
				return sentTo, nil
			}
		}
	}
	return unsettled, refs
}

// sentState reports what the cache knows of the app's push and the
// device, reading the push again when it may have changed.
func (s *PushStore) sentState(ctx context.Context, appID, pushID, deviceID string) (verdict, []slotRef, error) {
	h := maphash.String(s.targets.seed, deviceID)
	p, err := s.pushTargets(ctx, pushID)
	if p == nil || err != nil || p.appID != appID {
		return notPlanned, nil, err
	}
	p.mu.RLock()
	v, refs := p.judge(h)
	final, stale := p.final, s.Now().Sub(p.readAt) >= targetsRefresh
	p.mu.RUnlock()
	if v == sentTo || final || v == unsettled && !stale {
		return v, refs, nil
	}
	// The push may have chunks written, or sends settled, since it was
	// read.
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := s.readChunks(ctx, pushID, p, stale); err != nil {
		return notPlanned, nil, err
	}
	v, refs = p.judge(h)
	return v, refs, nil
}

// pushTargets returns a push's targets, read once however many requests
// ask at the same time; nil for an unknown push (not kept: it may be
// stored later). The first asker reads on its own context: a waiter whose
// context is still alive when that read ended with the asker's, reads
// again.
func (s *PushStore) pushTargets(ctx context.Context, pushID string) (*pushTargets, error) {
	t := s.targets
	for {
		t.mu.Lock()
		p := t.pushes[pushID]
		if p == nil {
			p = &pushTargets{loaded: make(chan struct{})}
			t.pushes[pushID] = p
			t.mu.Unlock()
			s.loadTargets(ctx, pushID, p)
		} else {
			t.mu.Unlock()
		}
		select {
		case <-p.loaded:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if ctxErr(p.err) && ctx.Err() == nil {
			continue // the asker that read went; this one reads again
		}
		if p.err != nil || p.appID == "" {
			return nil, p.err
		}
		return p, nil
	}
}

// ctxErr reports an error that is a context's end.
func ctxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// loadTargets reads a push's targets into p, which waiters share; a push
// that is unknown, or could not be read, is forgotten again.
func (s *PushStore) loadTargets(ctx context.Context, pushID string, p *pushTargets) {
	defer close(p.loaded)
	t := s.targets
	err := s.reader().queryRow(ctx, `SELECT app_id FROM pushes WHERE id = ?`, pushID).Scan(&p.appID)
	if err == nil {
		err = s.readChunks(ctx, pushID, p, true)
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

// readChunks adds the slots of the push's chunks not read yet (fan-out
// chunks and retry chunks) and, with all, reads every chunk's cursor and
// the push's delivery rows again. The push's status is read first: when
// it had ended, every send was recorded before. The caller holds p.mu
// (or is its only reader).
func (s *PushStore) readChunks(ctx context.Context, pushID string, p *pushTargets, all bool) error {
	if p.final {
		return nil
	}
	now := s.Now()
	status, err := pushStatus(ctx, s.reader(), pushID)
	if err != nil {
		return err
	}
	if p.settled == nil {
		p.settled, p.sentRows, p.unsent = map[int32]int32{}, map[uint64]bool{}, map[uint64]bool{}
	}
	var refs []slotRef
	fanout, retry := p.fanout, p.retry
	err = s.reader().each(ctx, func(row scanner) error {
		var chunk, settled int
		var slots []byte
		if err := row.Scan(&chunk, &settled, &slots); err != nil {
			return err
		}
		ds, err := decodeSlots(slots, chunk)
		for i, d := range ds {
			h := maphash.String(s.targets.seed, d.DeviceID)
			refs = append(refs, slotRef{h: h, chunk: int32(chunk), pos: int32(i)})
			if chunk < 0 {
				p.unsent[h] = true
			}
		}
		p.settled[int32(chunk)] = int32(settled)
		if chunk >= 0 {
			fanout = max(fanout, chunk+1)
		} else {
			retry = max(retry, -chunk)
		}
		return err
	}, `SELECT chunk, settled, slots FROM push_chunks WHERE push_id = ? AND (chunk >= ? OR chunk < ?)`, pushID, p.fanout, -p.retry)
	if err != nil {
		return err
	}
	if all {
		if err := s.readCursors(ctx, pushID, p); err != nil {
			return err
		}
		p.readAt, p.final = now, status.Ended()
	}
	p.fanout, p.retry = fanout, retry
	if len(refs) == 0 {
		return nil
	}
	cmpRef := func(a, b slotRef) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	}
	slices.SortFunc(refs, cmpRef)
	p.sets, p.n = append(p.sets, refs), p.n+len(refs)
	if len(p.sets) > maxSets {
		// A push read page by page while it fans out: one run again, so
		// a lookup stays a search or two.
		all := slices.Concat(p.sets...)
		slices.SortFunc(all, cmpRef)
		p.sets = [][]slotRef{all}
	}
	return nil
}

// readCursors reads every chunk's cursor and the push's delivery rows.
// The cursors are read first: a row is written with the cursor that
// settles its slot, so the rows read after hold those of every slot the
// cursors show settled.
func (s *PushStore) readCursors(ctx context.Context, pushID string, p *pushTargets) error {
	err := s.reader().each(ctx, func(row scanner) error {
		var chunk, settled int
		err := row.Scan(&chunk, &settled)
		p.settled[int32(chunk)] = int32(settled)
		return err
	}, `SELECT chunk, settled FROM push_chunks WHERE push_id = ?`, pushID)
	if err != nil {
		return err
	}
	return s.reader().each(ctx, func(row scanner) error {
		var id string
		var state herald.DeliveryState
		if err := row.Scan(&id, &state); err != nil {
			return err
		}
		h := maphash.String(s.targets.seed, id)
		if state == herald.DeliverySent {
			p.sentRows[h] = true
		} else {
			p.unsent[h] = true
		}
		return nil
	}, `SELECT device_id, state FROM deliveries WHERE push_id = ?`, pushID)
}
