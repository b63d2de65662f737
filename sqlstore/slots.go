package sqlstore

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/heraldpush/herald"
)

// A chunk's slots are stored as one value: a version byte, the number of
// slots, then per slot its seq, recipient index, user, device, token,
// platform, app version, token refresh time (ms), a flags byte (old for
// the badge, old for the image, resent), from version 2 its failed
// attempts and from version 3 the device's locale (herald.Delivery.Locale).
// Numbers are varints, strings length prefixed. Engine-neutral: a BLOB on
// SQLite, a BYTEA on PostgreSQL.
const slotsVersion = 3

const (
	slotOldForBadge = 1 << iota
	slotOldForImage
	slotResent
)

// errSlots is a stored chunk whose slots cannot be read.
var errSlots = errors.New("sqlstore: malformed chunk slots")

// encodeSlots encodes a chunk's deliveries, in order.
func encodeSlots(ds []herald.Delivery) []byte {
	n := 8
	for _, d := range ds {
		n += 25 + len(d.UserID) + len(d.DeviceID) + len(d.Token) + len(d.Platform) + len(d.AppSourceVersion) + len(d.Locale)
	}
	b := make([]byte, 0, n)
	b = append(b, slotsVersion)
	b = binary.AppendUvarint(b, uint64(len(ds)))
	for _, d := range ds {
		b = binary.AppendUvarint(b, uint64(d.Seq))
		b = binary.AppendUvarint(b, uint64(d.RecipientIdx))
		for _, s := range []string{d.UserID, d.DeviceID, d.Token, string(d.Platform), d.AppSourceVersion} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
		b = binary.AppendVarint(b, d.TokenUpdatedAt.UnixMilli())
		var flags byte
		if d.OldForBadge {
			flags |= slotOldForBadge
		}
		if d.OldForImage {
			flags |= slotOldForImage
		}
		if d.Resent {
			flags |= slotResent
		}
		b = append(b, flags)
		b = binary.AppendUvarint(b, uint64(d.Attempts))
		b = binary.AppendUvarint(b, uint64(len(d.Locale)))
		b = append(b, d.Locale...)
	}
	return b
}

// decodeSlots decodes a chunk's slots as pending deliveries of chunk.
func decodeSlots(b []byte, chunk int) ([]herald.Delivery, error) {
	r, n, err := openSlots(b)
	if err != nil || n == 0 {
		return nil, err
	}
	ds := make([]herald.Delivery, n)
	for i := range ds {
		s := r.slot()
		ds[i] = herald.Delivery{Seq: int(s.seq), RecipientIdx: int(s.recipient), UserID: string(s.user), DeviceID: string(s.device),
			Token: string(s.token), Platform: herald.Platform(s.platform), AppSourceVersion: string(s.appVersion),
			TokenUpdatedAt: time.UnixMilli(s.refreshed).UTC(), OldForBadge: s.flags&slotOldForBadge != 0,
			OldForImage: s.flags&slotOldForImage != 0, Resent: s.flags&slotResent != 0, Attempts: int(s.attempts), Locale: string(s.locale),
			Chunk: chunk, State: herald.DeliveryPending}
	}
	if r.err != nil {
		return nil, r.err
	}
	return ds, nil
}

// eachSlot calls fn with each slot of a chunk's slots, in order, until fn
// returns false; it allocates nothing (the slot's strings are b's bytes,
// borrowed for the call).
func eachSlot(b []byte, fn func(i int, s *rawSlot) bool) error {
	r, n, err := openSlots(b)
	if err != nil || n == 0 {
		return err
	}
	for i := 0; i < n; i++ {
		s := r.slot()
		if r.err != nil || !fn(i, &s) {
			break
		}
	}
	return r.err
}

// rawSlot is one slot as encoded, its strings borrowed from the encoding.
type rawSlot struct {
	seq, recipient                            uint64
	user, device, token, platform, appVersion []byte
	refreshed                                 int64
	flags                                     byte
	attempts                                  uint64
	locale                                    []byte
}

// openSlots reads the version and count of a chunk's slots (none for
// nil) and returns a reader at the first slot.
func openSlots(b []byte) (*slotReader, int, error) {
	if len(b) == 0 {
		return nil, 0, nil
	}
	if b[0] < 1 || b[0] > slotsVersion {
		return nil, 0, errSlots
	}
	r := &slotReader{b: b[1:], version: b[0]}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return nil, 0, errSlots
	}
	return r, int(n), nil
}

// slot reads the next slot.
func (r *slotReader) slot() rawSlot {
	s := rawSlot{seq: r.uvarint(), recipient: r.uvarint()}
	s.user, s.device, s.token, s.platform, s.appVersion = r.bytes(), r.bytes(), r.bytes(), r.bytes(), r.bytes()
	s.refreshed, s.flags = r.varint(), r.byte()
	if r.version >= 2 {
		s.attempts = r.uvarint()
	}
	if r.version >= 3 {
		s.locale = r.bytes()
	}
	return s
}

// slotReader reads the encoding of a version; the first error sticks.
type slotReader struct {
	b       []byte
	version byte
	err     error
}

func (r *slotReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *slotReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes reads a length-prefixed string, borrowed from the encoding.
func (r *slotReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// string reads a length-prefixed string.
func (r *slotReader) string() string { return string(r.bytes()) }

func (r *slotReader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *slotReader) fail() {
	if r.err == nil {
		r.err = errSlots
	}
	r.b = nil
}
