package sendstore

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/heraldpush/herald"
)

// job is a send job as the tests number it.
type job string

func (j job) Kind() string { return string(j) }

// retryJob is a push's retry job before it is numbered.
type retryJob string

func (j retryJob) ForChunk(chunk int) herald.Job { return job(string(j) + "." + strconv.Itoa(chunk)) }

func rng(settled, marked int) Range { return Range{Settled: settled, Marked: marked} }

// slot is the slot of seq, to device dN with token tN of user uN.
func slot(seq int) herald.Delivery {
	n := strconv.Itoa(seq)
	return herald.Delivery{Seq: seq, UserID: "u" + n, DeviceID: "d" + n, Token: "t" + n, State: herald.DeliveryPending}
}

// target is slot seq's target at pos, owned by its user when owned.
func target(pos, seq int, owned bool) SlotTarget {
	d := slot(seq)
	t := SlotTarget{Pos: pos, DeviceID: d.DeviceID, Token: d.Token}
	if owned {
		t.Owner = &d.UserID
	}
	return t
}

// holding is device dN holding token tN, mapped to uN.
func holding(n int) Holding {
	u := "u" + strconv.Itoa(n)
	return Holding{Token: "t" + strconv.Itoa(n), User: &u}
}

// holdings are the devices of slots 0 to n-1, as planned.
func holdings(n int) map[string]Holding {
	m := map[string]Holding{}
	for i := range n {
		m["d"+strconv.Itoa(i)] = holding(i)
	}
	return m
}

func failed(d herald.Delivery, reason string) herald.Delivery {
	d.State, d.Error = herald.DeliveryFailed, reason
	return d
}

func inChunk(d herald.Delivery, chunk int) herald.Delivery {
	d.Chunk = chunk
	return d
}

// TestApply runs every transition of the chunk machine: what a step does
// to a chunk, given the facts the store loads.
func TestApply(t *testing.T) {
	t.Parallel()
	moved := holdings(4)
	moved["d2"] = Holding{Token: "t2-new", User: moved["d2"].User} // d2's token refreshed
	gone := holdings(4)
	delete(gone, "d1")
	owner := holdings(4)
	owner["d1"] = Holding{Token: "t1", User: new("u9")} // d1 now someone else's
	unmapped := holdings(4)
	unmapped["d1"] = Holding{Token: "t1"}
	retry := &RetryChunk{Slots: []herald.Delivery{failed(slot(1), "UNAVAILABLE")}, Job: retryJob("send")}
	dead := []DeadToken{{DeviceID: "d0", Token: "t0"}}
	for _, tc := range []struct {
		name  string
		chunk Chunk
		step  ChunkStep
		facts Facts
		want  Chunk
		eff   Effects
		err   error // ErrChunkMoved; errOutOfRange for any other error
	}{{
		name:  "mark",
		chunk: Chunk{},
		step:  ChunkStep{New: rng(0, 3), Targets: []SlotTarget{target(0, 0, true), target(1, 1, true), target(2, 2, true)}},
		facts: Facts{Devices: holdings(3)},
		want:  Chunk{Range: rng(0, 3)},
	}, {
		name:  "mark without a target: slots judged final",
		chunk: Chunk{Range: rng(0, 1)},
		step:  ChunkStep{Old: rng(0, 1), New: rng(0, 4)},
		want:  Chunk{Range: rng(0, 4)},
	}, {
		name:  "settle: counted first sends",
		chunk: Chunk{Range: rng(0, 3)},
		step:  ChunkStep{Old: rng(0, 3), New: rng(3, 3), SentOldBadge: 1, SentOldImage: 2},
		want:  Chunk{Range: rng(3, 3)},
		eff:   Effects{Sent: 3, SentOldBadge: 1, SentOldImage: 2},
	}, {
		name:  "settle and mark in one step: rows and dead tokens",
		chunk: Chunk{Range: rng(0, 2)},
		step: ChunkStep{Old: rng(0, 2), New: rng(2, 3), Rows: []herald.Delivery{failed(slot(0), "x")}, Drop: dead,
			Targets: []SlotTarget{target(2, 2, true)}},
		facts: Facts{Devices: holdings(3)},
		want:  Chunk{Range: rng(2, 3)},
		eff:   Effects{Sent: 1, Rows: []herald.Delivery{failed(slot(0), "x")}, Drop: dead},
	}, {
		name:  "trim: the token moved",
		chunk: Chunk{},
		step:  ChunkStep{New: rng(0, 4), Targets: []SlotTarget{target(0, 0, true), target(2, 2, true), target(3, 3, true)}},
		facts: Facts{Devices: moved},
		want:  Chunk{Range: rng(0, 2)},
	}, {
		name:  "trim: the device is gone",
		chunk: Chunk{},
		step:  ChunkStep{New: rng(0, 3), Targets: []SlotTarget{target(0, 0, false), target(1, 1, false), target(2, 2, false)}},
		facts: Facts{Devices: gone},
		want:  Chunk{Range: rng(0, 1)},
	}, {
		name:  "trim: the device is another user's",
		chunk: Chunk{},
		step:  ChunkStep{New: rng(0, 2), Targets: []SlotTarget{target(0, 0, true), target(1, 1, true)}},
		facts: Facts{Devices: owner},
		want:  Chunk{Range: rng(0, 1)},
	}, {
		name:  "trim: the device is no user's",
		chunk: Chunk{},
		step:  ChunkStep{New: rng(0, 2), Targets: []SlotTarget{target(0, 0, true), target(1, 1, true)}},
		facts: Facts{Devices: unmapped},
		want:  Chunk{Range: rng(0, 1)},
	}, {
		name:  "no trim: a target without owner needs only its token",
		chunk: Chunk{},
		step:  ChunkStep{New: rng(0, 2), Targets: []SlotTarget{target(0, 0, false), target(1, 1, false)}},
		facts: Facts{Devices: owner},
		want:  Chunk{Range: rng(0, 2)},
	}, {
		name:  "trim at the first target: nothing marked",
		chunk: Chunk{Range: rng(1, 2)},
		step:  ChunkStep{Old: rng(1, 2), New: rng(2, 4), Targets: []SlotTarget{target(2, 2, true), target(3, 3, true)}},
		facts: Facts{Devices: moved},
		want:  Chunk{Range: rng(2, 2)},
		eff:   Effects{Sent: 1},
	}, {
		name:  "retry chunk: numbered, its slots and job with it",
		chunk: Chunk{Range: rng(0, 3)},
		step:  ChunkStep{Old: rng(0, 3), New: rng(3, 3), Retry: retry},
		facts: Facts{RetryChunk: -2},
		want:  Chunk{Range: rng(3, 3)},
		eff: Effects{Sent: 2, Retry: &NumberedChunk{Chunk: -2, Slots: []herald.Delivery{inChunk(failed(slot(1), "UNAVAILABLE"), -2)},
			Job: job("send.-2")}},
	}, {
		name:  "retry chunk of a push no longer sending: failed rows, stopped",
		chunk: Chunk{Range: rng(0, 3)},
		step:  ChunkStep{Old: rng(0, 3), New: rng(3, 4), Retry: retry},
		want:  Chunk{Range: rng(3, 4), Stopped: true},
		eff:   Effects{Sent: 2, Rows: []herald.Delivery{failed(slot(1), "UNAVAILABLE")}},
	}, {
		name:  "stopped: settles, marks nothing",
		chunk: Chunk{Range: rng(0, 1), Stopped: true},
		step:  ChunkStep{Old: rng(0, 1), New: rng(1, 3), Targets: []SlotTarget{target(1, 1, true), target(2, 2, true)}},
		facts: Facts{Devices: holdings(3)},
		want:  Chunk{Range: rng(1, 1), Stopped: true},
		eff:   Effects{Sent: 1},
	}, {
		name:  "stopped: the retry chunk's slots fail",
		chunk: Chunk{Range: rng(0, 2), Stopped: true},
		step:  ChunkStep{Old: rng(0, 2), New: rng(1, 2), Retry: retry},
		facts: Facts{RetryChunk: -1},
		want:  Chunk{Range: rng(1, 2), Stopped: true},
		eff:   Effects{Rows: []herald.Delivery{failed(slot(1), "UNAVAILABLE")}},
	}, {
		name:  "moved: a stale range",
		chunk: Chunk{Range: rng(0, 2)},
		step:  ChunkStep{Old: rng(0, 1), New: rng(1, 1), Rows: []herald.Delivery{failed(slot(0), "x")}, Retry: nil, Drop: dead},
		want:  Chunk{Range: rng(0, 2)},
		err:   ErrChunkMoved,
	}, {
		name:  "moved: a stale cursor",
		chunk: Chunk{Range: rng(1, 2)},
		step:  ChunkStep{Old: rng(0, 2), New: rng(2, 2), Retry: retry},
		facts: Facts{RetryChunk: -1},
		want:  Chunk{Range: rng(1, 2)},
		err:   ErrChunkMoved,
	}, {
		name: "out of range: settle past the range",
		step: ChunkStep{New: rng(1, 1)},
		err:  errOutOfRange,
	}, {
		name:  "out of range: cursor back",
		chunk: Chunk{Range: rng(1, 1)},
		step:  ChunkStep{Old: rng(1, 1), New: rng(0, 1)},
		want:  Chunk{Range: rng(1, 1)},
		err:   errOutOfRange,
	}, {
		name:  "out of range: range back",
		chunk: Chunk{Range: rng(0, 2)},
		step:  ChunkStep{Old: rng(0, 2), New: rng(0, 1)},
		want:  Chunk{Range: rng(0, 2)},
		err:   errOutOfRange,
	}, {
		name: "out of range: more targets than slots marked",
		step: ChunkStep{New: rng(0, 1), Targets: []SlotTarget{target(0, 0, true), target(1, 1, true)}},
		err:  errOutOfRange,
	}, {
		name:  "out of range: more rows and retries than slots settled",
		chunk: Chunk{Range: rng(0, 2)},
		step:  ChunkStep{Old: rng(0, 2), New: rng(1, 2), Rows: []herald.Delivery{failed(slot(0), "x")}, Retry: retry},
		want:  Chunk{Range: rng(0, 2)},
		err:   errOutOfRange,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, eff, err := tc.chunk.Apply(tc.step, tc.facts)
			switch {
			case tc.err == errOutOfRange && (err == nil || errors.Is(err, ErrChunkMoved)):
				t.Fatalf("err: got %v, want out of range", err)
			case tc.err != errOutOfRange && !errors.Is(err, tc.err):
				t.Fatalf("err: got %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("chunk: got %+v, want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(eff, tc.eff) {
				t.Errorf("effects:\n got %+v\nwant %+v", eff, tc.eff)
			}
		})
	}
}

// errOutOfRange stands for the error of a step whose shape is impossible.
var errOutOfRange = errors.New("out of range")

// TestApplyLeavesStepAlone: the step's slices are not written through, so
// a step written again after a failed write is the same step.
func TestApplyLeavesStepAlone(t *testing.T) {
	t.Parallel()
	rows := make([]herald.Delivery, 1, 4)
	rows[0] = failed(slot(0), "x")
	retry := []herald.Delivery{slot(1)}
	st := ChunkStep{Old: rng(0, 2), New: rng(2, 2), Rows: rows, Retry: &RetryChunk{Slots: retry, Job: retryJob("send")}}
	for _, number := range []int{-1, 0} {
		_, eff, err := Chunk{Range: rng(0, 2)}.Apply(st, Facts{RetryChunk: number})
		if err != nil {
			t.Fatal(err)
		}
		if retry[0].Chunk != 0 || retry[0].State != herald.DeliveryPending || len(rows) != 1 || rows[:2][1].Seq != 0 {
			t.Errorf("retry chunk %d: the step's slots were written: %+v, %+v", number, retry, rows[:2])
		}
		if number == 0 && len(eff.Rows) != 2 {
			t.Errorf("retry chunk of a failed push: got rows %+v, want 2", eff.Rows)
		}
	}
}
