package herald

import (
	"errors"
	"fmt"
	"time"
)

// A push's life is a value: Push.Apply takes a step and the facts the
// store read with the push, and returns the push after it and the writes
// (PushEffects) the store makes with it, in one transaction guarded by
// the push as it was read. What a step charges, refunds, queues or
// cancels is decided here, so that no engine decides it in SQL.
//
// The steps, by the status they start from (— is refused):
//
//	step      | (new)     | scheduled         | sending            | held                | cancelled, done, failed
//	accept    | sending   | —                 | —                  | —                   | —
//	schedule  | scheduled | —                 | —                  | —                   | —
//	edit      | —         | scheduled (¹)     | — (¹)              | — (¹)               | — (¹)
//	cancel    | —         | cancelled (¹)     | sending (²)        | cancelled (³)       | — (¹)
//	start     | —         | sending           | sending (⁴)        | —                   | —
//	defer     | —         | —                 | sending (⁵)        | —                   | —
//	hold      | —         | held (⁶)          | held               | —                   | —
//	release   | —         | —                 | —                  | the status held in  | —
//	finish    | —         | done (⁷)          | done               | — (⁸)               | — (⁹)
//	fail      | —         | —                 | failed             | —                   | —
//	expire    | —         | —                 | —                  | —                   | itself, body cleared (¹⁰)
//
// A push the app's approval setting takes (ApprovalSetting.Needs) is
// accepted awaiting approval instead, uncharged, its job the lapse of
// its window (approval.go):
//
//	step            | awaiting_approval
//	approve         | sending, or scheduled (¹¹)
//	reject          | rejected (¹¹)
//	cancel          | cancelled (nothing to refund)
//	approval-expiry | approval_expired, once ApprovalWindow has passed
//	others          | —
//
// ¹ CheckEditable: until 5 minutes before the send time (ErrScheduleLocked).
// ² only the part deferred to the morning (NightDefer), until 5 minutes
// before it (CheckDeferCancel), none begun (ErrNothingDeferred); a push
// sent at once without one is ErrScheduleLocked as CheckEditable says. A
// spread push (options.spreadMinutes) is cancelled whole while it sends
// (status cancelled): its users not yet sent are not sent, and it is
// charged as a held push is (³).
// ³ refunded whole when it had not begun; its charge stands otherwise.
// ⁴ a fan-out begun is not begun again (ErrPushStarted).
// ⁵ a push with options.nightPolicy "defer".
// ⁶ only when due at the copy's instant (PushFacts.HoldAt).
// ⁷ a scheduled push fanned out to nobody, whose finish comes first.
// ⁸ its release queues the finish again (ErrPushHeld).
// ⁹ finished already (ErrPushFinished); a failed push's finish ends it
// failed, once.
// ¹⁰ rejected and approval_expired pushes end too (PushStatus.Ended).
// ¹¹ by another operator than its composer (the owner's token may decide
// any), before its window lapses; else ErrForbidden or NotAwaiting. An
// approval charges what the accept would have (App.PushCharge) and
// replaces the lapse job with the push's fan-out; a rejection cancels
// the lapse job.
//
// Where each is taken: edit, cancel, release, approve, reject and
// approval-expiry by ScheduleStore.StepPush;
// finish and fail by the store's FinishPush and FailPush, which ask Apply
// for the push's end. Accept and schedule are what NewPush builds and
// AcceptPush inserts; start, defer, hold and expire are written by the
// statements of StartSending, HoldPushes and retention, whose guards are
// these rows (a fan-out claims a push only while AwaitingFanout).
//
// A refused step is an *Error the API maps (ErrScheduleLocked, NotHeld)
// or one of the sentinel errors below, which callers treat as "nothing to
// do".

// PushStepKind names a step of a push's life.
type PushStepKind string

// The steps (see the table above).
const (
	StepAccept   PushStepKind = "accept"
	StepSchedule PushStepKind = "schedule"
	StepEdit     PushStepKind = "edit"
	StepCancel   PushStepKind = "cancel"
	StepStart    PushStepKind = "start"
	StepDefer    PushStepKind = "defer"
	StepHold     PushStepKind = "hold"
	StepRelease  PushStepKind = "release"
	StepFinish   PushStepKind = "finish"
	StepFail     PushStepKind = "fail"
	StepExpire   PushStepKind = "expire"

	StepApprove        PushStepKind = "approve"
	StepReject         PushStepKind = "reject"
	StepApprovalExpiry PushStepKind = "approval-expiry"
)

// PushStep is one step asked of a push, with what the caller brings: the
// step's time (its clock judges deadlines, and the push records it), an
// edit's change, and the jobs the step queues.
type PushStep struct {
	Kind PushStepKind
	At   time.Time
	// Change is an edit's change.
	Change PushChange
	// Job is the push's job the step inserts: accept's and schedule's
	// fan-out, an edit's fan-out at the new time (inserted only when the
	// time moved; it replaces the old one), a cancel's or a fail's finish
	// (queued when nothing of the push is left open).
	Job Job
	// Jobs are a release's jobs: what HeldWork said the push has left.
	Jobs []Job
	// Reason is a fail's failure reason, or an approval's or rejection's
	// reason ("" when none).
	Reason string
	// By is who approves or rejects: an operator's ID, or OwnerID.
	By string
	// App is the push's app, on whose ledger an approval charges it.
	App *App
}

// PushFacts are what the store reads with the push for a step.
type PushFacts struct {
	// Ledger is the push's usage entries so far: what a cancel refunds.
	Ledger []UsageEntry
	// HeldFrom is the status a held push was held in.
	HeldFrom PushStatus
	// OpenChunks counts the push's chunks not completed (its fan-out
	// counts as one until its last page).
	OpenChunks int
	// Deferred are a sending push's chunks deferred to the morning that
	// are not done (read for a cancel of a push with NightDefer).
	Deferred []DeferredPart
	// HoldAt is a hold's instant: the copy's.
	HoldAt time.Time
}

// DeferredPart is a chunk a fan-out deferred to the morning, as a cancel
// reads it.
type DeferredPart struct {
	Chunk int
	Until time.Time
	// RefundHalf is what cancelling it refunds (fixed at fan-out: the
	// users in it sent nothing else).
	RefundHalf int64
	// Begun: some of its slots were settled or marked in flight.
	Begun bool
	// Slots are its deliveries still to send.
	Slots []Delivery
}

// PushEffects are the writes of a step besides the push's own row.
type PushEffects struct {
	// Usage are ledger entries to write: accept's charge, a cancel's
	// refund (negative).
	Usage []UsageEntry
	// Jobs are the jobs to insert.
	Jobs []Job
	// ReplaceJob is inserted as the push's job, the old one cancelled (an
	// edit that moved the send time).
	ReplaceJob Job
	// CancelJob: the push's job (its scheduled fan-out) is cancelled.
	CancelJob bool
	// Suppress are the deferred chunks a cancel completes, each slot
	// settled as suppressed by the night; Rows are those slots' rows.
	Suppress []int
	Rows     []Delivery
	// Closed: the step closed the push's last open chunk; its finish is
	// among Jobs.
	Closed bool
	// Trail is the edit-trail entry the step appended, nil when none.
	Trail *Edit
}

// Sentinel refusals of steps that callers take as "already done".
var (
	// ErrPushStarted refuses to start a fan-out begun already.
	ErrPushStarted = errors.New("herald: push fan-out begun already")
	// ErrPushFinished refuses to finish a push that has ended.
	ErrPushFinished = errors.New("herald: push finished already")
	// ErrPushHeld refuses to finish a held push: its release finishes it.
	ErrPushHeld = errors.New("herald: push is held")
	// ErrBadStep refuses a step the push's status does not take.
	ErrBadStep = errors.New("herald: step not allowed in this status")
)

// badStep is ErrBadStep naming the step and the status.
func badStep(k PushStepKind, s PushStatus) error {
	return fmt.Errorf("%w: %s of a %s push", ErrBadStep, k, s)
}

// Apply is the push machine's one transition: the push after step, given
// the facts, and the writes that go with it (see the table above). p is
// not changed; on an error the push and effects returned are zero.
func (p Push) Apply(st PushStep, f PushFacts) (Push, PushEffects, error) {
	next := p
	next.Edits = append([]Edit(nil), p.Edits...)
	next.Approvals = append([]Approval(nil), p.Approvals...)
	var e PushEffects
	var err error
	switch st.Kind {
	case StepAccept, StepSchedule:
		err = next.accept(st, &e)
	case StepEdit:
		err = next.edit(st, &e)
	case StepCancel:
		err = next.cancel(st, f, &e)
	case StepStart:
		err = next.start(st)
	case StepDefer:
		if p.Status != StatusSending || p.NightPolicy != NightDefer {
			err = badStep(st.Kind, p.Status)
		}
	case StepHold:
		err = next.hold(st, f)
	case StepRelease:
		switch {
		case p.Status != StatusHeld || f.HeldFrom == "":
			err = NotHeld(p.Status)
		default:
			next.Status, e.Jobs = f.HeldFrom, st.Jobs
		}
	case StepFinish:
		err = next.finish(st)
	case StepFail:
		if p.Status != StatusSending {
			err = badStep(st.Kind, p.Status)
			break
		}
		next.Status, next.FailureReason = StatusFailed, st.Reason
		if st.Job != nil {
			e.Jobs, e.Closed = []Job{st.Job}, true
		}
	case StepExpire:
		err = next.expire(st)
	case StepApprove:
		err = next.approve(st, &e)
	case StepReject:
		err = next.reject(st, &e)
	case StepApprovalExpiry:
		err = next.lapse(st)
	default:
		err = fmt.Errorf("%w: unknown step %q", ErrBadStep, st.Kind)
	}
	if err != nil {
		return Push{}, PushEffects{}, err
	}
	return next, e, nil
}

// accept takes a new push in: sending at once, or scheduled for its
// time; its charge (the Ledger NewPush made) is written with it.
func (p *Push) accept(st PushStep, e *PushEffects) error {
	want := StatusSending
	if st.Kind == StepSchedule {
		want = StatusScheduled
	}
	if p.Status != want || (p.ScheduledAt != nil) != (want == StatusScheduled) {
		return badStep(st.Kind, p.Status)
	}
	e.Usage = p.Ledger
	if st.Job != nil {
		e.Jobs = []Job{st.Job}
	}
	return nil
}

// edit applies an operator's change (PushChange.Apply); a moved send
// time replaces the push's job with st.Job.
func (p *Push) edit(st PushStep, e *PushEffects) error {
	before := len(p.Edits)
	moved, err := st.Change.Apply(p, st.At)
	if err != nil {
		return err
	}
	if moved {
		e.ReplaceJob = st.Job
	}
	if len(p.Edits) > before {
		e.Trail = &p.Edits[len(p.Edits)-1]
	}
	return nil
}

// cancel ends a scheduled, held or awaiting push, or the deferred part of
// a sending one (see the table).
func (p *Push) cancel(st PushStep, f PushFacts, e *PushEffects) error {
	switch {
	case p.Status == StatusAwaitingApproval: // nothing charged yet; its lapse job goes
		e.CancelJob = true
	case p.Status == StatusHeld:
		if f.HeldFrom == "" {
			return NotHeld(p.Status)
		}
		if p.StartedAt == nil { // nothing of it was sent: refunded whole
			e.Usage = Refund(f.Ledger, st.At)
		}
	case p.Status == StatusSending && p.NightPolicy == NightDefer:
		return p.cancelDeferred(st, f, e)
	case p.Status == StatusSending && p.Spread():
		// Its users not yet due are not sent (each chunk's run stops at
		// its next wave); as a held push's, refunded whole when nothing
		// of it began, its charge standing otherwise.
		if p.StartedAt == nil {
			e.Usage = Refund(f.Ledger, st.At)
		}
	default:
		if err := p.CheckEditable(st.At); err != nil {
			return err
		}
		e.Usage, e.CancelJob = Refund(f.Ledger, st.At), true
	}
	at := st.At
	p.Status, p.FinishedAt = StatusCancelled, &at
	return nil
}

// cancelDeferred cancels every deferred chunk of a sending push, none of
// which may have begun: their slots are suppressed by the night, their
// refund taken off the charge and the ledger (DeferRefund), the cancel
// recorded in the trail (DeferCancelEdit), and the push's finish queued
// when nothing else is open.
func (p *Push) cancelDeferred(st PushStep, f PushFacts, e *PushEffects) error {
	if len(f.Deferred) == 0 {
		return ErrNothingDeferred
	}
	until := f.Deferred[0].Until
	var refund int64
	for _, d := range f.Deferred {
		if d.Begun {
			return ErrNothingDeferred // its sending has begun
		}
		if d.Until.Before(until) {
			until = d.Until
		}
		refund += d.RefundHalf
	}
	if err := CheckDeferCancel(until, st.At); err != nil {
		return err
	}
	users := map[string]bool{}
	for _, d := range f.Deferred {
		e.Suppress = append(e.Suppress, d.Chunk)
		for _, s := range d.Slots {
			s.State = DeliverySuppressedNight
			e.Rows = append(e.Rows, s)
			if s.UserID != "" {
				users[s.UserID] = true
			}
		}
	}
	charged := p.ServerActionsHalf
	p.ServerActionsHalf -= refund
	e.Usage = DeferRefund(f.Ledger, refund, st.At)
	edit := DeferCancelEdit(st.At, until, len(e.Rows), len(users), refund, charged)
	p.Edits = append(p.Edits, edit)
	e.Trail = &p.Edits[len(p.Edits)-1]
	if f.OpenChunks-len(f.Deferred) == 0 {
		e.Closed = true
		if st.Job != nil {
			e.Jobs = []Job{st.Job}
		}
	}
	return nil
}

// start begins a waiting push's fan-out.
func (p *Push) start(st PushStep) error {
	switch {
	case p.StartedAt != nil && p.Status == StatusSending:
		return ErrPushStarted
	case !p.AwaitingFanout():
		return badStep(st.Kind, p.Status)
	}
	at := st.At.UTC().Truncate(time.Millisecond)
	p.Status, p.StartedAt = StatusSending, &at
	return nil
}

// hold stops a push a restored store would send again: one sending, or
// one scheduled whose time had come at the copy's instant.
func (p *Push) hold(st PushStep, f PushFacts) error {
	switch {
	case p.Status == StatusSending:
	case p.Status == StatusScheduled && p.ScheduledAt != nil && !p.ScheduledAt.After(f.HoldAt):
	default:
		return badStep(st.Kind, p.Status)
	}
	p.Status = StatusHeld
	return nil
}

// finish ends a push once every recipient has an outcome: done, or
// failed when it failed as a whole.
func (p *Push) finish(st PushStep) error {
	switch {
	case p.Status == StatusHeld:
		return ErrPushHeld
	case p.FinishedAt != nil:
		return ErrPushFinished
	case p.Status != StatusSending && p.Status != StatusScheduled && p.Status != StatusFailed:
		return badStep(st.Kind, p.Status)
	}
	at := st.At.UTC().Truncate(time.Millisecond)
	p.Status, p.FinishedAt = p.Status.EndStatus(), &at
	if p.StartedAt == nil {
		p.StartedAt = &at
	}
	return nil
}

// expire marks an ended push's body cleared by retention.
func (p *Push) expire(st PushStep) error {
	if !p.Status.Ended() {
		return badStep(st.Kind, p.Status)
	}
	if p.ExpiredAt != nil {
		return nil
	}
	at := st.At.UTC().Truncate(time.Millisecond)
	p.ExpiredAt = &at
	return nil
}
