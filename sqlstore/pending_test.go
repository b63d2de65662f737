package sqlstore

import (
	"errors"
	"testing"

	"github.com/heraldpush/herald"
)

// TestSlotAt: an event's judgement reads one slot, and finds a seq, as
// decodeSlots reads them all.
func TestSlotAt(t *testing.T) {
	t.Parallel()
	in := []herald.Delivery{
		{Seq: 4, UserID: "u1", DeviceID: "d1", Token: "t1", Platform: herald.PlatformAndroid, AppSourceVersion: "1.0.0"},
		{Seq: 300, RecipientIdx: 2, UserID: "사용자", DeviceID: "d2", Token: string(make([]byte, 300)), Resent: true, Attempts: 2},
		{Seq: 7, DeviceID: "d3", OldForBadge: true},
	}
	for _, b := range [][]byte{encodeSlots(in), {1, 1, 5, 0, 1, 'u', 1, 'd', 1, 't', 0, 0, 0, slotResent}} {
		all, err := decodeSlots(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		for pos, want := range all {
			got, ok, err := slotAt(b, pos)
			if err != nil || !ok || got != (slotFacts{seq: want.Seq, deviceID: want.DeviceID, resent: want.Resent}) {
				t.Errorf("slotAt %d: got (%+v, %v, %v), want %+v", pos, got, ok, err, want)
			}
			if i, ok, err := slotOfSeq(b, want.Seq); err != nil || !ok || i != pos {
				t.Errorf("slotOfSeq %d: got (%d, %v, %v), want %d", want.Seq, i, ok, err, pos)
			}
		}
		if _, ok, err := slotAt(b, len(all)); ok || err != nil {
			t.Errorf("slotAt past the end: got (%v, %v), want not found", ok, err)
		}
		if _, ok, err := slotOfSeq(b, 99); ok || err != nil {
			t.Errorf("slotOfSeq of no slot: got (%v, %v), want not found", ok, err)
		}
	}
	if _, _, err := slotAt([]byte{slotsVersion, 2, 1, 0, 9}, 1); !errors.Is(err, errSlots) {
		t.Errorf("malformed: got %v, want errSlots", err)
	}
	if _, ok, err := slotAt(nil, 0); ok || err != nil {
		t.Errorf("no slots: got (%v, %v), want not found", ok, err)
	}
}
