package herald

import (
	"testing"
	"time"
)

func TestChargeAndRefund(t *testing.T) {
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Skip("no time zone data")
	}
	// 23:30 UTC is 08:30 the next day in Seoul: charged on Seoul's day.
	at := time.Date(2026, 3, 1, 23, 30, 0, 0, time.UTC)
	cs := Charge("app", "push", 5, at, seoul)
	if len(cs) != 1 || cs[0].Day != "2026-03-02" || cs[0].Half != 5 {
		t.Fatalf("charge: got %+v, want 5 half units on 2026-03-02", cs)
	}
	if got := Charge("app", "push", 0, at, seoul); got != nil {
		t.Errorf("zero charge: got %+v, want none", got)
	}
	later := at.Add(48 * time.Hour)
	rs := Refund(append(cs, UsageEntry{Half: -5}), later)
	if len(rs) != 1 || rs[0].Day != "2026-03-02" || rs[0].Half != -5 || !rs[0].At.Equal(later) {
		t.Errorf("refund: got %+v, want -5 on the charge's day, at the refund time", rs)
	}
}
