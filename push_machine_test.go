package herald

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// machineNow is the time of every step of the machine's tests.
var machineNow = time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)

type machineJob string

func (j machineJob) Kind() string { return string(j) }

// machinePush is a push in status, as the store would load it: charged
// 4 half units on one day; scheduled an hour ahead; begun a minute ago
// when sending or after; finished when ended.
func machinePush(status PushStatus) Push {
	at := machineNow.Add(time.Hour)
	started, finished := machineNow.Add(-time.Minute), machineNow.Add(-time.Second)
	p := Push{ID: "push_1", AppID: "app_1", Kind: KindUsers, Status: status, Content: Content{Title: "t", Content: "c"},
		ScheduledAt: &at, ServerActionsHalf: 4}
	switch status {
	case StatusSending, StatusFailed:
		p.StartedAt = &started
	case StatusCancelled, StatusDone:
		p.StartedAt, p.FinishedAt = &started, &finished
	case StatusRejected, StatusApprovalExpired:
		p.FinishedAt = &finished
	}
	if status == StatusAwaitingApproval || status == StatusRejected || status == StatusApprovalExpired {
		p.CreatedAt, p.ServerActionsHalf = machineNow.Add(-time.Hour), 0 // within its window at machineNow
		p.Approvals = []Approval{{Action: ApprovalRequested, By: "op_a", At: p.CreatedAt}}
	}
	return p
}

// machineLedger is the push's charge as the store reads it.
var machineLedger = []UsageEntry{{AppID: "app_1", PushID: "push_1", Day: "2026-12-02", Half: 4, At: machineNow.Add(-time.Hour)}}

// machineFacts are the facts of a push in status: its ledger, and the
// status a held push was held in (scheduled).
func machineFacts(status PushStatus) PushFacts {
	f := PushFacts{Ledger: machineLedger, OpenChunks: 1, HoldAt: machineNow.Add(2 * time.Hour)}
	if status == StatusHeld {
		f.HeldFrom = StatusScheduled
	}
	return f
}

// legalSteps are the table's cells that are not "—", for the pushes
// machinePush makes (a sending push there does not defer at night).
var legalSteps = map[PushStepKind][]PushStatus{
	StepEdit:    {StatusScheduled},
	StepCancel:  {StatusScheduled, StatusHeld, StatusAwaitingApproval},
	StepStart:   {StatusScheduled},
	StepDefer:   {},
	StepHold:    {StatusScheduled, StatusSending},
	StepRelease: {StatusHeld},
	StepFinish:  {StatusScheduled, StatusSending, StatusFailed},
	StepFail:    {StatusSending},
	StepExpire:  {StatusCancelled, StatusDone, StatusFailed, StatusRejected, StatusApprovalExpired},
	StepApprove: {StatusAwaitingApproval},
	StepReject:  {StatusAwaitingApproval},
	// An awaiting push lapses only once its window has passed, after
	// machineNow (TestPushApplyApproval).
	StepApprovalExpiry: {},
}

// TestPushApplyTable: each step of a stored push is taken in the statuses
// the table names, and refused in every other, changing nothing.
func TestPushApplyTable(t *testing.T) {
	for kind, legal := range legalSteps {
		for _, status := range PushStatuses {
			t.Run(string(kind)+"/"+string(status), func(t *testing.T) {
				p := machinePush(status)
				st := PushStep{Kind: kind, At: machineNow, Change: PushChange{Title: new("new")}, Reason: "r", By: "op_b",
					App: &App{ID: "app_1"}, Job: machineJob("fanout")}
				next, _, err := p.Apply(st, machineFacts(status))
				switch {
				case slices.Contains(legal, status) && err != nil:
					t.Errorf("got %v, want it taken", err)
				case !slices.Contains(legal, status) && err == nil:
					t.Errorf("got it taken (to %s), want it refused", next.Status)
				case err != nil && (next.ID != "" || p.Status != status):
					t.Errorf("refused: got %+v returned and %s left, want nothing changed", next, p.Status)
				}
			})
		}
	}
}

// TestPushApplyErrors: a refusal is the error the API maps or the one
// its caller takes as "nothing to do".
func TestPushApplyErrors(t *testing.T) {
	soon := machinePush(StatusScheduled)
	in4 := machineNow.Add(4 * time.Minute)
	soon.ScheduledAt = &in4
	immediate := machinePush(StatusSending)
	immediate.ScheduledAt = nil
	begun := deferringPush()
	begunFacts := deferringFacts(1)
	begunFacts.Deferred[0].Begun = true
	noneLeft := deferringFacts(1)
	noneLeft.Deferred = nil
	notHeld := machineFacts(StatusHeld)
	notHeld.HeldFrom = ""
	tooLong := PushChange{Title: new(string(make([]byte, MaxFCMPayload)))}
	for _, c := range []struct {
		name string
		p    Push
		st   PushStep
		f    PushFacts
		want error
	}{
		{"EditSending", machinePush(StatusSending), PushStep{Kind: StepEdit}, PushFacts{}, ErrScheduleLocked},
		{"EditTooLate", soon, PushStep{Kind: StepEdit}, PushFacts{}, ErrScheduleLocked},
		{"EditTooLong", machinePush(StatusScheduled), PushStep{Kind: StepEdit, Change: tooLong}, PushFacts{}, ErrInvalidRequest},
		{"CancelTooLate", soon, PushStep{Kind: StepCancel}, machineFacts(StatusScheduled), ErrScheduleLocked},
		{"CancelImmediate", immediate, PushStep{Kind: StepCancel}, PushFacts{}, ErrScheduleLocked},
		{"CancelDone", machinePush(StatusDone), PushStep{Kind: StepCancel}, PushFacts{}, ErrScheduleLocked},
		{"CancelDeferredBegun", begun, PushStep{Kind: StepCancel}, begunFacts, ErrScheduleLocked},
		{"CancelDeferredNone", begun, PushStep{Kind: StepCancel}, noneLeft, ErrScheduleLocked},
		{"CancelDeferredTooLate", begun, PushStep{Kind: StepCancel, At: machineNow.Add(5*time.Hour + 56*time.Minute)},
			deferringFacts(1), ErrScheduleLocked},
		{"CancelHeldWithoutFrom", machinePush(StatusHeld), PushStep{Kind: StepCancel}, notHeld, ErrNotHeld},
		{"ReleaseSending", machinePush(StatusSending), PushStep{Kind: StepRelease}, PushFacts{}, ErrNotHeld},
		{"StartBegun", machinePush(StatusSending), PushStep{Kind: StepStart}, PushFacts{}, ErrPushStarted},
		{"StartCancelled", machinePush(StatusCancelled), PushStep{Kind: StepStart}, PushFacts{}, ErrBadStep},
		{"FinishHeld", machinePush(StatusHeld), PushStep{Kind: StepFinish}, PushFacts{}, ErrPushHeld},
		{"FinishDone", machinePush(StatusDone), PushStep{Kind: StepFinish}, PushFacts{}, ErrPushFinished},
		{"HoldNotDue", machinePush(StatusScheduled), PushStep{Kind: StepHold}, PushFacts{HoldAt: machineNow}, ErrBadStep},
		{"AcceptScheduled", machinePush(StatusScheduled), PushStep{Kind: StepAccept}, PushFacts{}, ErrBadStep},
		{"ScheduleWithoutTime", immediate, PushStep{Kind: StepSchedule}, PushFacts{}, ErrBadStep},
		{"Unknown", machinePush(StatusScheduled), PushStep{Kind: "launch"}, PushFacts{}, ErrBadStep},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.st.At.IsZero() {
				c.st.At = machineNow
			}
			if _, _, err := c.p.Apply(c.st, c.f); !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
}

// deferringPush is a sending push with nightPolicy defer, charged 6.
func deferringPush() Push {
	p := machinePush(StatusSending)
	p.NightPolicy, p.ServerActionsHalf, p.ScheduledAt = NightDefer, 6, nil
	return p
}

// deferringFacts: open chunks in all, chunk 1 of them deferred to the
// morning five hours on, with u2's and u3's three tokens, refunding 2.
func deferringFacts(open int) PushFacts {
	until := machineNow.Add(5 * time.Hour)
	return PushFacts{OpenChunks: open, Ledger: []UsageEntry{{AppID: "app_1", PushID: "push_1", Day: "2026-12-02", Half: 6}},
		Deferred: []DeferredPart{{Chunk: 1, Until: until, RefundHalf: 2,
			Slots: []Delivery{{Seq: 1, UserID: "u2", Chunk: 1}, {Seq: 2, UserID: "u3", Chunk: 1}, {Seq: 3, UserID: "u3", Chunk: 1}}}}}
}

// TestPushApplyEffects: what each legal step hands the store to do.
func TestPushApplyEffects(t *testing.T) {
	at := machineNow
	t.Run("AcceptCharges", func(t *testing.T) {
		p := machinePush(StatusSending)
		p.ScheduledAt, p.StartedAt, p.Ledger = nil, nil, machineLedger
		next, e, err := p.Apply(PushStep{Kind: StepAccept, At: at, Job: machineJob("fanout")}, PushFacts{})
		if err != nil || next.Status != StatusSending || !slices.Equal(e.Usage, machineLedger) || len(e.Jobs) != 1 {
			t.Errorf("got (%s, %+v, %v), want sending, charged its ledger, its job queued", next.Status, e, err)
		}
		p.Status, p.ScheduledAt = StatusScheduled, new(at.Add(time.Hour))
		if next, _, err := p.Apply(PushStep{Kind: StepSchedule, At: at}, PushFacts{}); err != nil || next.Status != StatusScheduled {
			t.Errorf("schedule: got (%s, %v), want scheduled", next.Status, err)
		}
	})
	t.Run("EditMovesJob", func(t *testing.T) {
		p := machinePush(StatusScheduled)
		moved := p.ScheduledAt.Add(time.Hour)
		next, e, err := p.Apply(PushStep{Kind: StepEdit, At: at, Change: PushChange{ScheduledAt: &moved}, Job: machineJob("fanout")}, PushFacts{})
		if err != nil || !next.ScheduledAt.Equal(moved) || e.ReplaceJob != machineJob("fanout") || e.Trail == nil || len(p.Edits) != 0 {
			t.Errorf("got (%+v, %+v, %v), want moved, its job replaced, one trail entry, p unchanged", next, e, err)
		}
		_, e, _ = p.Apply(PushStep{Kind: StepEdit, At: at, Change: PushChange{Title: new("x")}, Job: machineJob("fanout")}, PushFacts{})
		if e.ReplaceJob != nil || e.Usage != nil {
			t.Errorf("content edit: got %+v, want its job kept, nothing charged", e)
		}
	})
	t.Run("CancelScheduledRefundsWhole", func(t *testing.T) {
		next, e, err := machinePush(StatusScheduled).Apply(PushStep{Kind: StepCancel, At: at}, machineFacts(StatusScheduled))
		if err != nil || next.Status != StatusCancelled || !next.FinishedAt.Equal(at) || !e.CancelJob ||
			len(e.Usage) != 1 || e.Usage[0].Half != -4 || !e.Usage[0].At.Equal(at) {
			t.Errorf("got (%+v, %+v, %v), want cancelled now, its job cancelled, -4 refunded", next, e, err)
		}
	})
	t.Run("CancelHeld", func(t *testing.T) {
		held := machinePush(StatusHeld)
		next, e, err := held.Apply(PushStep{Kind: StepCancel, At: at}, machineFacts(StatusHeld))
		if err != nil || next.Status != StatusCancelled || len(e.Usage) != 1 || e.Usage[0].Half != -4 || e.CancelJob {
			t.Errorf("not begun: got (%s, %+v, %v), want cancelled and refunded", next.Status, e, err)
		}
		held.StartedAt = new(at.Add(-time.Minute))
		next, e, err = held.Apply(PushStep{Kind: StepCancel, At: at}, machineFacts(StatusHeld))
		if err != nil || next.Status != StatusCancelled || e.Usage != nil {
			t.Errorf("begun: got (%s, %+v, %v), want cancelled, its charge standing", next.Status, e, err)
		}
	})
	t.Run("CancelDeferredRefundsPart", func(t *testing.T) {
		p := deferringPush()
		for _, open := range []int{2, 1} {
			next, e, err := p.Apply(PushStep{Kind: StepCancel, At: at, Job: machineJob("finish")}, deferringFacts(open))
			if err != nil || next.Status != StatusSending || next.ServerActionsHalf != 4 || !slices.Equal(e.Suppress, []int{1}) ||
				len(e.Rows) != 3 || e.Rows[0].State != DeliverySuppressedNight || len(e.Usage) != 1 || e.Usage[0].Half != -2 {
				t.Fatalf("open %d: got (%+v, %+v, %v), want sending, 4 left, chunk 1's 3 rows suppressed, -2 refunded", open, next, e, err)
			}
			d := e.Trail.DeferredCancelled
			if d == nil || d.Tokens != 3 || d.Users != 2 || d.RefundedServerActions != 1 || len(next.Edits) != 1 {
				t.Errorf("open %d: trail %+v, want 3 tokens of 2 users, 1 Server Action refunded", open, e.Trail)
			}
			if closed := open == 1; e.Closed != closed || (len(e.Jobs) == 1) != closed {
				t.Errorf("open %d: got closed %v jobs %v, want closed and the finish queued only when nothing is left", open, e.Closed, e.Jobs)
			}
		}
	})
	t.Run("Release", func(t *testing.T) {
		jobs := []Job{machineJob("send")}
		next, e, err := machinePush(StatusHeld).Apply(PushStep{Kind: StepRelease, At: at, Jobs: jobs}, machineFacts(StatusHeld))
		if err != nil || next.Status != StatusScheduled || len(e.Jobs) != 1 {
			t.Errorf("got (%s, %+v, %v), want scheduled again with its jobs", next.Status, e, err)
		}
	})
	t.Run("FinishAndFail", func(t *testing.T) {
		next, e, err := machinePush(StatusSending).Apply(PushStep{Kind: StepFail, At: at, Reason: "no FCM", Job: machineJob("finish")}, PushFacts{})
		if err != nil || next.Status != StatusFailed || next.FailureReason != "no FCM" || !e.Closed || len(e.Jobs) != 1 {
			t.Fatalf("fail: got (%+v, %+v, %v), want failed, its finish queued", next, e, err)
		}
		if done, _, err := next.Apply(PushStep{Kind: StepFinish, At: at}, PushFacts{}); err != nil || done.Status != StatusFailed || !done.FinishedAt.Equal(at) {
			t.Errorf("finish of a failed push: got (%s, %v), want failed, finished now", done.Status, err)
		}
		scheduled := machinePush(StatusScheduled)
		done, _, err := scheduled.Apply(PushStep{Kind: StepFinish, At: at}, PushFacts{})
		if err != nil || done.Status != StatusDone || !done.StartedAt.Equal(at) {
			t.Errorf("finish of a push fanned out to nobody: got (%+v, %v), want done, started and finished now", done, err)
		}
	})
	t.Run("HoldAndExpire", func(t *testing.T) {
		if next, _, err := machinePush(StatusSending).Apply(PushStep{Kind: StepHold, At: at}, PushFacts{}); err != nil || next.Status != StatusHeld {
			t.Errorf("hold: got (%s, %v), want held", next.Status, err)
		}
		next, _, err := machinePush(StatusDone).Apply(PushStep{Kind: StepExpire, At: at}, PushFacts{})
		if err != nil || next.ExpiredAt == nil || next.Status != StatusDone {
			t.Errorf("expire: got (%+v, %v), want done, expired now", next, err)
		}
	})
}

// TestPushApplyApproval: an approval charges the push as its accept would
// have and puts its fan-out in the lapse's place; a rejection cancels the
// lapse; the lapse comes once the window has passed; the composer decides
// nothing.
func TestPushApplyApproval(t *testing.T) {
	p := machinePush(StatusAwaitingApproval)
	p.RequestedUsers = 3
	app := &App{ID: "app_1", TimeZone: DefaultTimeZone}
	next, e, err := p.Apply(PushStep{Kind: StepApprove, At: machineNow, By: "op_b", App: app, Job: machineJob("fanout")}, PushFacts{})
	if err != nil || next.Status != StatusScheduled || next.ServerActionsHalf != 3*HalfPerUser || len(e.Usage) != 1 ||
		e.Usage[0].Half != 3*HalfPerUser || e.ReplaceJob == nil || len(next.Approvals) != 2 || len(p.Approvals) != 1 {
		t.Errorf("approve: got %+v, %+v, %v; want scheduled, charged 3 users, the fan-out replacing the lapse, p unchanged", next, e, err)
	}
	next, e, err = p.Apply(PushStep{Kind: StepReject, At: machineNow, By: "op_b", Reason: "no"}, PushFacts{})
	if err != nil || next.Status != StatusRejected || !e.CancelJob || e.Usage != nil || next.Approvals[1].Reason != "no" {
		t.Errorf("reject: got %+v, %+v, %v; want rejected, the lapse cancelled, uncharged", next, e, err)
	}
	for _, st := range []PushStep{
		{Kind: StepApprove, At: machineNow, By: "op_a", App: app, Job: machineJob("fanout")},
		{Kind: StepReject, At: machineNow, By: "op_a"},
	} {
		if _, _, err := p.Apply(st, PushFacts{}); !errors.Is(err, ErrForbidden) {
			t.Errorf("%s by the composer: got %v, want ErrForbidden", st.Kind, err)
		}
	}
	late := p.ApprovalDeadline()
	if _, _, err := p.Apply(PushStep{Kind: StepApprove, At: late, By: "op_b", App: app, Job: machineJob("fanout")}, PushFacts{}); !errors.Is(err, ErrNotAwaitingApproval) {
		t.Errorf("approve at the window's end: got %v, want ErrNotAwaitingApproval", err)
	}
	if next, _, err := p.Apply(PushStep{Kind: StepApprovalExpiry, At: late}, PushFacts{}); err != nil || next.Status != StatusApprovalExpired {
		t.Errorf("lapse at the window's end: got %s, %v, want approval_expired", next.Status, err)
	}
}
