package audience

import (
	"encoding/json"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	now := time.Date(2025, 6, 11, 13, 0, 0, 0, time.UTC)
	ana := Subject{
		Tags:     Tags{"plan": String("gold"), "age": Number(31), "vip": Bool(true), "since": String("2024-03-01"), "empty": String("")},
		Platform: "ios", Locale: "ko-KR", TimeZone: "Asia/Seoul", AppSourceVersion: "1.10.0-beta", Marketing: true,
		CreatedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), LastSeenAt: now.Add(-72 * time.Hour),
	}
	// An unmapped device: no user, so no tags.
	anon := Subject{Platform: "android", AppSourceVersion: "bad", CreatedAt: ana.CreatedAt.Add(-time.Millisecond), LastSeenAt: now.Add(time.Hour)}
	for _, tc := range []struct {
		filter    string
		ana, anon bool
	}{
		{`{"tag":"plan","eq":"gold"}`, true, false},
		{`{"tag":"plan","ne":"gold"}`, false, true},
		{`{"tag":"nope","ne":"gold"}`, true, true},
		{`{"tag":"nope","eq":"gold"}`, false, false},
		{`{"not":{"tag":"nope","eq":"gold"}}`, true, true},
		{`{"tag":"age","eq":"31"}`, false, false},
		{`{"tag":"age","ne":"31"}`, true, true},
		{`{"tag":"age","in":["31",31.0]}`, true, false},
		{`{"tag":"vip","eq":true}`, true, false},
		{`{"tag":"vip","in":[1,"true"]}`, false, false},
		{`{"tag":"vip","exists":true}`, true, false},
		{`{"tag":"vip","exists":false}`, false, true},
		{`{"tag":"nope","exists":false}`, true, true},
		{`{"tag":"age","gt":30.5}`, true, false},
		{`{"tag":"age","lte":31}`, true, false},
		{`{"tag":"age","lt":31}`, false, false},
		{`{"tag":"age","gt":"30"}`, false, false},
		{`{"tag":"plan","gt":1}`, false, false},
		{`{"tag":"since","gte":"2024-01-01"}`, true, false},
		{`{"tag":"since","lt":"2024-03-01T00"}`, true, false},
		{`{"tag":"plan","prefix":"go"}`, true, false},
		{`{"tag":"plan","prefix":"gold!"}`, false, false},
		{`{"tag":"empty","prefix":""}`, true, false},
		{`{"tag":"age","prefix":"3"}`, false, false},
		{`{"field":"platform","eq":"ios"}`, true, false},
		{`{"field":"platform","in":["android","web"]}`, false, true},
		{`{"field":"locale","prefix":"ko"}`, true, false},
		{`{"field":"locale","ne":"ko-KR"}`, false, true},
		{`{"field":"locale","exists":false}`, false, true},
		{`{"field":"timeZone","in":["Asia/Seoul"]}`, true, false},
		{`{"field":"appSourceVersion","eq":"1.10.0-beta"}`, true, false},
		{`{"field":"appSourceVersion","prefix":"1.1"}`, true, false},
		{`{"field":"appSourceVersion","gt":"1.9.9"}`, true, false},
		{`{"field":"appSourceVersion","lt":"1.9.9"}`, false, false},
		{`{"field":"appSourceVersion","lte":"1.10.0"}`, true, false},
		{`{"not":{"field":"appSourceVersion","gte":"0.0.0"}}`, false, true},
		{`{"field":"marketing","eq":true}`, true, false},
		{`{"field":"marketing","ne":true}`, false, true},
		{`{"field":"marketingNight","eq":false}`, true, true},
		{`{"field":"lastSeenDays","eq":3}`, true, false},
		{`{"field":"lastSeenDays","gt":2}`, true, false},
		{`{"field":"lastSeenDays","lt":3}`, false, true},
		{`{"field":"lastSeenDays","eq":0}`, false, false}, // seen an hour ahead of now: -1 days
		{`{"field":"lastSeenDays","lte":0}`, false, true},
		{`{"field":"createdAt","eq":"2025-01-01"}`, true, false},
		{`{"field":"createdAt","lt":"2025-01-01T09:00:00+09:00"}`, false, true},
		{`{"field":"createdAt","gte":"2024-12-31T23:59:59.999Z"}`, true, true},
		{`{"and":[{"tag":"plan","eq":"gold"},{"field":"platform","eq":"ios"},{"field":"lastSeenDays","lte":7}]}`, true, false},
		{`{"or":[{"tag":"plan","eq":"gold"},{"field":"platform","eq":"android"}]}`, true, true},
		{`{"not":{"or":[{"tag":"plan","eq":"gold"},{"field":"platform","eq":"android"}]}}`, false, false},
	} {
		f, details := Parse(json.RawMessage(tc.filter))
		if details != nil {
			t.Errorf("%s: %v", tc.filter, details)
			continue
		}
		if got := f.Match(ana, now); got != tc.ana {
			t.Errorf("%s on a mapped device: got %v, want %v", tc.filter, got, tc.ana)
		}
		if got := f.Match(anon, now); got != tc.anon {
			t.Errorf("%s on an unmapped device: got %v, want %v", tc.filter, got, tc.anon)
		}
	}
	if (Filter{}).Match(ana, now) {
		t.Error("the zero filter: got a match, want none")
	}
}

func TestFloorDiv(t *testing.T) {
	for _, tc := range []struct{ a, want int64 }{{0, 0}, {dayMS - 1, 0}, {dayMS, 1}, {-1, -1}, {-dayMS, -1}, {-dayMS - 1, -2}} {
		if got := floorDiv(tc.a, dayMS); got != tc.want {
			t.Errorf("floorDiv(%d): got %d, want %d", tc.a, got, tc.want)
		}
	}
}
