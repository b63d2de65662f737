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
// the badge, old for the image, resent) and, from version 2, its failed
// attempts. Numbers are varints, strings length prefixed. Engine-neutral:
// a BLOB on SQLite, a BYTEA on PostgreSQL.
const slotsVersion = 2

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
		n += 24 + len(d.UserID) + len(d.DeviceID) + len(d.Token) + len(d.Platform) + len(d.AppSourceVersion)
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
	}
	return b
}

// decodeSlots decodes a chunk's slots as pending deliveries of chunk.
func decodeSlots(b []byte, chunk int) ([]herald.Delivery, error) {
	if len(b) == 0 {
		return nil, nil
	}
	version := b[0]
	if version != 1 && version != slotsVersion {
		return nil, errSlots
	}
	r := slotReader{b: b[1:]}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return nil, errSlots
	}
	ds := make([]herald.Delivery, n)
	for i := range ds {
		d := &ds[i]
		d.Seq, d.RecipientIdx = int(r.uvarint()), int(r.uvarint())
		d.UserID, d.DeviceID, d.Token = r.string(), r.string(), r.string()
		d.Platform, d.AppSourceVersion = herald.Platform(r.string()), r.string()
		d.TokenUpdatedAt = time.UnixMilli(r.varint()).UTC()
		flags := r.byte()
		d.OldForBadge, d.OldForImage, d.Resent = flags&slotOldForBadge != 0, flags&slotOldForImage != 0, flags&slotResent != 0
		if version >= 2 {
			d.Attempts = int(r.uvarint())
		}
		d.Chunk, d.State = chunk, herald.DeliveryPending
	}
	if r.err != nil {
		return nil, r.err
	}
	return ds, nil
}

// slotReader reads the encoding; the first error sticks.
type slotReader struct {
	b   []byte
	err error
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

func (r *slotReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

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
