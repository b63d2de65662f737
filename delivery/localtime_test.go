package delivery

import (
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// TestPlanLocalTime: a local-time push's fan-out puts each device whose
// zone's time is ahead in a zone part of that instant (one run of chunks
// per instant, earliest first), sends at once the devices whose time has
// come (late when it came before the accept), defers to its own 08:00 a
// device whose zone's time is at night and that lacks night consent, and
// leaves a device lacking consent in its zone part, judged when sent.
func TestPlanLocalTime(t *testing.T) {
	t.Parallel()
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	seoul, london, ny := zone("Asia/Seoul"), zone("Europe/London"), zone("America/New_York")
	uid := func(s string) *string { return &s }
	all, day, none := herald.Consent{Marketing: true, MarketingNight: true}, herald.Consent{Marketing: true}, herald.Consent{}
	dev := func(id, tz string, c herald.Consent) herald.Device {
		return herald.Device{ID: id, Token: "tok-" + id, UserID: uid(id), TimeZone: tz, Consent: c}
	}
	// 22:00 on 2026-12-06: accepted at 20:00 in Seoul, fanned out at 22:30 there.
	wall := time.Date(2026, 12, 6, 22, 0, 0, 0, herald.FirstZone)
	accepted := time.Date(2026, 12, 6, 20, 0, 0, 0, seoul)
	now := time.Date(2026, 12, 6, 22, 30, 0, 0, seoul)
	start := herald.LocalStart(time.Date(2026, 12, 6, 22, 0, 0, 0, seoul), seoul)
	p := herald.Push{Kind: herald.KindUsers, Content: herald.Content{Title: "(광고) sale"}, NightPolicy: herald.NightDefer, LocalTime: true,
		ScheduledAt: &start, CreatedAt: accepted}
	if !p.LocalWall().Equal(wall) {
		t.Fatalf("wall: got %v, want %v", p.LocalWall(), wall)
	}
	devices := []herald.Device{
		dev("kiri", "Pacific/Kiritimati", all), // 22:00 came before the accept: late, now
		dev("seoul", "", all),                  // the app's zone: 22:00 came after the accept: now, not late
		dev("lon-all", "Europe/London", all),   // 22:00 in London, night, night consent: its zone part
		dev("lon-day", "Europe/London", day),   // night there, no night consent: London's next 08:00
		dev("lon-none", "Europe/London", none), // no consent now: in its zone part, judged when sent
		dev("ny", "America/New_York", all),
	}
	var groups []recipientDevices
	for i, d := range devices {
		groups = append(groups, recipientDevices{r: herald.Recipient{UserID: d.ID}, idx: i, devices: []herald.Device{d}})
	}
	rule := nightRule{now: now, loc: seoul, charged: true, wall: wall, accepted: accepted}
	var to sendstore.FanoutCursor
	ds, waiting, late := plan(p, groups, rule, 2, &to)
	lonAt, nyAt := time.Date(2026, 12, 6, 22, 0, 0, 0, london), time.Date(2026, 12, 6, 22, 0, 0, 0, ny)
	lonMorning := time.Date(2026, 12, 7, 8, 0, 0, 0, london)
	want := []sendstore.DeferredChunk{{Chunk: 1, Until: lonAt, ZonePart: true}, {Chunk: 2, Until: nyAt, ZonePart: true},
		{Chunk: 3, Until: lonMorning, RefundHalf: 1}}
	if len(waiting) != len(want) {
		t.Fatalf("waiting chunks: got %+v, want %+v", waiting, want)
	}
	for i := range want {
		if waiting[i].Chunk != want[i].Chunk || !waiting[i].Until.Equal(want[i].Until) || waiting[i].ZonePart != want[i].ZonePart ||
			waiting[i].RefundHalf != want[i].RefundHalf {
			t.Errorf("waiting chunk %d: got %+v, want %+v", i, waiting[i], want[i])
		}
	}
	chunks := map[string]int{"kiri": 0, "seoul": 0, "lon-all": 1, "lon-none": 1, "ny": 2, "lon-day": 3}
	for _, d := range ds {
		if d.State != herald.DeliveryPending || d.Chunk != chunks[d.DeviceID] {
			t.Errorf("%s: got %s in chunk %d, want pending in chunk %d", d.DeviceID, d.State, d.Chunk, chunks[d.DeviceID])
		}
	}
	if late != 1 || to.Chunk != 4 || to.Seq != 6 {
		t.Errorf("got %d late, cursor %+v; want 1 late (kiri), 4 chunks, 6 seqs", late, to)
	}
}
