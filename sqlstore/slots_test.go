package sqlstore

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

func TestSlotsRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 123e6, time.UTC)
	in := []herald.Delivery{
		{Seq: 0, RecipientIdx: 0, UserID: "u1", DeviceID: "d1", Token: "t1", Platform: herald.PlatformAndroid, AppSourceVersion: "1.4.0",
			TokenUpdatedAt: at, OldForBadge: true, OldForImage: true},
		{Seq: 300, RecipientIdx: 299, UserID: "사용자", DeviceID: "d2", Token: string(make([]byte, 300)), Platform: herald.PlatformIOS,
			AppSourceVersion: "2.0.0", TokenUpdatedAt: time.UnixMilli(-5).UTC(), OldForImage: true, Resent: true, Attempts: 3, Locale: "ko-KR"},
		{Seq: 301, UserID: "", DeviceID: "d3", Token: "t3"},
	}
	out, err := decodeSlots(encodeSlots(in), 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("got %d slots, want %d", len(out), len(in))
	}
	for i, want := range in {
		want.Chunk, want.State = 7, herald.DeliveryPending
		if got := out[i]; got != want && !(got.TokenUpdatedAt.Equal(want.TokenUpdatedAt) && sameBut(got, want)) {
			t.Errorf("slot %d: got %+v, want %+v", i, got, want)
		}
	}
	if ds, err := decodeSlots(nil, 0); err != nil || len(ds) != 0 {
		t.Errorf("no slots: got (%v, %v), want none", ds, err)
	}
}

// sameBut compares two deliveries apart from their times.
func sameBut(a, b herald.Delivery) bool {
	a.TokenUpdatedAt, b.TokenUpdatedAt = time.Time{}, time.Time{}
	return a == b
}

// TestSlotsVersion1 reads slots written before version 2 (no resent flag,
// no attempts): chunks recorded by an older release still decode.
func TestSlotsVersion1(t *testing.T) {
	t.Parallel()
	v1 := []byte{1, 1, 5, 0, 1, 'u', 1, 'd', 1, 't', 0, 0, 0, slotOldForBadge}
	out, err := decodeSlots(v1, 2)
	want := herald.Delivery{Seq: 5, UserID: "u", DeviceID: "d", Token: "t", TokenUpdatedAt: time.UnixMilli(0).UTC(), OldForBadge: true,
		Chunk: 2, State: herald.DeliveryPending}
	if err != nil || len(out) != 1 || !sameBut(out[0], want) {
		t.Errorf("got (%+v, %v), want %+v", out, err, want)
	}
}

// TestSlotsVersion2 reads slots written before version 3 (no locale).
func TestSlotsVersion2(t *testing.T) {
	t.Parallel()
	v2 := []byte{2, 1, 5, 0, 1, 'u', 1, 'd', 1, 't', 0, 0, 0, slotResent, 3}
	out, err := decodeSlots(v2, 2)
	want := herald.Delivery{Seq: 5, UserID: "u", DeviceID: "d", Token: "t", TokenUpdatedAt: time.UnixMilli(0).UTC(), Resent: true,
		Attempts: 3, Chunk: 2, State: herald.DeliveryPending}
	if err != nil || len(out) != 1 || !sameBut(out[0], want) {
		t.Errorf("got (%+v, %v), want %+v", out, err, want)
	}
}

func TestSlotsMalformed(t *testing.T) {
	t.Parallel()
	good := encodeSlots([]herald.Delivery{{Seq: 1, UserID: "u", DeviceID: "d", Token: "t"}})
	for name, b := range map[string][]byte{
		"version":   append([]byte{9}, good[1:]...),
		"truncated": good[:len(good)-2],
		"count":     {slotsVersion, 0xff, 0xff, 0x03},
	} {
		if _, err := decodeSlots(b, 0); !errors.Is(err, errSlots) {
			t.Errorf("%s: got %v, want errSlots", name, err)
		}
	}
}
