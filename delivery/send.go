package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/render"
	"github.com/heraldpush/herald/sendstore"
)

type sendWorker struct {
	river.WorkerDefaults[SendArgs]
	s *Service
}

// Work sends the chunk's slots (see sendSlots), then completes the chunk,
// fails the push (the app's credentials are refused), or comes back later
// for the rest (the run yielded, or could not send yet).
func (w *sendWorker) Work(ctx context.Context, job *river.Job[SendArgs]) error {
	if job.Args.High {
		ctx = herald.WithHighPriority(ctx)
	}
	return w.s.send(ctx, job.Args, job.Attempt, false)
}

// send runs the chunk of args (see Work); watch tells a run of the
// schedule watch from one of the chunk's job. A run that finds sends of
// the chunk in flight takes them over (settles them into a retry chunk,
// sent again): a job's run finds them only when the run before it
// stopped. A deferred chunk is also run by the watch of every node at its
// morning, so its runs take over sends in flight only once their range
// has not moved for chunkStall: the watch's run leaves them, the job's
// looks again then.
func (s *Service) send(ctx context.Context, args SendArgs, attempt int, watch bool) error {
	p, err := s.sends.PushRecord(ctx, args.PushID)
	if err != nil {
		return gone(err)
	}
	if p.Status != herald.StatusSending {
		return nil // failed or finished meanwhile
	}
	if err := s.untilMorning(ctx, args); err != nil {
		return err // a deferred chunk, before its time
	}
	app, err := s.sends.App(ctx, p.AppID)
	if err != nil {
		return gone(err)
	}
	return s.sendChunk(ctx, sending{push: p, app: app}, args, attempt, watch)
}

// sending is what a run knows of a sending push before it sends one of
// its chunks: the push, its app, and its recipients (nil when not read;
// a fan-out that sends its lone chunk has them all).
type sending struct {
	push       herald.Push
	app        herald.App
	recipients []herald.Recipient
}

// sendChunk sends the chunk of args of a sending push (see send), then
// completes it, and finishes the push in the same run when the chunk was
// its last (CompleteChunk tells a run after a crash between the two to
// finish it again).
func (s *Service) sendChunk(ctx context.Context, k sending, args SendArgs, attempt int, watch bool) error {
	p, app, id := k.push, k.app, k.push.ID
	if len(app.FCMCredentials) == 0 {
		return s.fail(ctx, p, "FCM credentials were removed")
	}
	c := &chunk{s: s, app: app, push: p, loc: app.Location(), attempt: attempt, args: args, stream: streamOf(app, p)}
	var err error
	if c.serviceAccount, err = s.serviceAccount(app); err != nil {
		return s.fail(ctx, p, "FCM credentials cannot be opened")
	}
	c.sender = s.cfg.Sender.ForApp(app.ID, c.serviceAccount)
	if p.Rule().PerRecipient {
		if k.recipients == nil {
			if k.recipients, err = s.sends.Recipients(ctx, id); err != nil {
				return err
			}
		}
		c.recipients = k.recipients
	}
	if c.msg, err = message(p); err != nil {
		return s.fail(ctx, p, err.Error())
	}
	work, err := s.sends.ResumeChunk(ctx, id, args.Chunk)
	if err != nil || work.Stopped {
		return err // on stopped: the push failed meanwhile
	}
	if wait := work.MovedAt.Add(chunkStall).Sub(s.cfg.Now()); work.Marked > work.Settled && args.deferred() && wait > 0 {
		if watch {
			return nil // another run is sending the chunk
		}
		return river.JobSnooze(wait)
	}
	// Retriable failures are retried for at most RetryFor from the push's
	// start; the last try happens at that deadline.
	c.deadline = p.CreatedAt.Add(s.cfg.RetryFor)
	if p.StartedAt != nil {
		c.deadline = p.StartedAt.Add(s.cfg.RetryFor)
	}
	if !args.Morning.IsZero() {
		c.deadline = args.Morning.Add(s.cfg.RetryFor) // a deferred chunk's hour starts in the morning
	}
	if end := p.SpreadEnd(); !end.IsZero() {
		c.deadline = end.Add(s.cfg.RetryFor) // a spread push's last users have their hour too
	}
	c.giveUp = !s.cfg.Now().Before(c.deadline)
	c.yieldAt = time.Now().Add(s.cfg.SendSlice) // real time: it bounds the job's run, see RescueAfter
	r := c.sendSlots(ctx, args.Chunk, work)
	if r.warning != "" {
		s.warn(ctx, app, p, r.warning)
	}
	if r.gaveUp > 0 {
		s.cfg.Logger.Error("gave up retrying deliveries", "app", app.ID, "push", id, "chunk", args.Chunk,
			"deliveries", r.gaveUp, "retriedFor", s.cfg.RetryFor)
	}
	switch {
	case r.err != nil:
		return r.err
	case r.stopped:
		return nil // the push failed, or another run has the chunk
	case r.authFailure != "":
		s.warn(ctx, app, p, r.authFailure)
		return s.fail(ctx, p, r.authFailure)
	case r.again:
		return river.JobSnooze(c.bounded(r.wait))
	}
	last, err := s.sends.CompleteChunk(ctx, id, args.Chunk)
	if err != nil || !last {
		return err
	}
	return s.finishPush(ctx, id, finishing{app: &app, recipients: k.recipients})
}

// fail ends a push that cannot be sent, with the reason.
func (s *Service) fail(ctx context.Context, p herald.Push, reason string) error {
	return s.sends.FailPush(ctx, p.ID, reason, FinishArgs{PushID: p.ID})
}

// warn tells the operator that FCM refused something about the app's
// credentials: in the log and on the app's page.
func (s *Service) warn(ctx context.Context, app herald.App, p herald.Push, warning string) {
	s.cfg.Logger.Warn("FCM refused the app's credentials", "app", app.ID, "push", p.ID, "reason", warning)
	if err := s.sends.SetFCMWarning(context.WithoutCancel(ctx), app.ID, warning, s.cfg.Now()); err != nil {
		s.cfg.Logger.Error("recording an FCM warning", "app", app.ID, "err", err)
	}
}

// chunk is what sending one chunk of a push needs.
type chunk struct {
	s          *Service
	app        herald.App
	push       herald.Push
	recipients []herald.Recipient // per-message content, on /messages
	// msg is the push's content by language, with its templates (DESIGN
	// 13); nil for a push with one static text, the common case.
	msg *render.Message
	// serviceAccount is the app's FCM service-account file; sender sends
	// with it.
	serviceAccount []byte
	sender         herald.AppSender
	loc            *time.Location
	// deadline ends the push's retries; giveUp: it has passed, so a
	// retriable failure is final.
	deadline time.Time
	giveUp   bool
	// stream says which outcomes become delivery events (nil: none).
	stream  *sendstore.Stream
	attempt int       // of the send job
	args    SendArgs  // of the send job
	yieldAt time.Time // when the run stops taking on sends
}

// streamOf is what a push's steps write of delivery events: nil when its
// app takes neither push.sent nor push.failed, so that a step then costs
// nothing more.
func streamOf(app herald.App, p herald.Push) *sendstore.Stream {
	sent, failed := app.Takes(herald.WebhookSent), app.Takes(herald.WebhookFailed)
	if !sent && !failed {
		return nil
	}
	return &sendstore.Stream{Sent: sent, Failed: failed, RequestGroupID: p.RequestGroupID}
}

// bounded caps a wait at the push's retry deadline (at least a second
// ahead), so the last try happens at it.
func (c *chunk) bounded(wait time.Duration) time.Duration {
	return min(wait, max(time.Second, c.deadline.Sub(c.s.cfg.Now())))
}

// retryJob returns the job of a retry chunk, due after wait (bounded),
// numbered by the step that makes the chunk (SendArgs.ForChunk). A
// deferred chunk's retry chunks keep its morning, from which their hour of
// retries runs.
func (c *chunk) retryJob(wait time.Duration) SendArgs {
	due := c.s.cfg.Now().Add(c.bounded(wait)) // River's clock is the node's
	return SendArgs{PushID: c.push.ID, Due: due, Morning: c.args.Morning, High: c.push.High()}
}

// chunkResult is how a run over a chunk ended.
type chunkResult struct {
	err error
	// stopped: the push failed, or another run has the chunk; this run
	// has nothing more to do.
	stopped bool
	// authFailure: the app's credentials were refused; the push fails
	// with it as the reason.
	authFailure string
	// again: the chunk has slots left for a later run, after wait.
	again bool
	wait  time.Duration
	// warning is a refusal of the project's APNs or web-push credentials,
	// which failed some deliveries but not the push.
	warning string
	// gaveUp counts deliveries failed because their retries ran out.
	gaveUp int
}

// comeBack ends the run with the rest of the chunk for a run after wait.
func (res *chunkResult) comeBack(wait time.Duration) {
	res.again, res.wait = true, max(res.wait, wait)
}

// add sums up one send that came back.
func (res *chunkResult) add(o outcome) {
	if o.AuthFailure && res.authFailure == "" {
		res.authFailure = o.Error
	}
	if o.GaveUp {
		res.gaveUp++
	}
	if o.ThirdParty && res.warning == "" {
		res.warning = "FCM could not pass messages on with the project's APNs or web-push credentials: " + o.Error
	}
}

// send is one slot as judged at send time.
type send struct {
	d herald.Delivery // with the device, token and locale it goes to now
	// tags are its user's, read for a push with templates (chunk.msg).
	tags audience.Tags
	// toSend marks a slot to be sent; the others were judged final, and
	// out says how.
	toSend bool
	// capUser is the user whose frequency-cap receipt the send claims
	// ("" for none).
	capUser string
	out     outcome
}

// outcome is what became of one slot.
type outcome struct {
	State  herald.DeliveryState
	Reason string
	Error  string
	// Drop: the token is dead, and its device is deleted.
	Drop bool
	// RetryIn is how long a retriable failure (State retry) waits at least.
	RetryIn time.Duration
	// CutOff: the send was cut off and may have reached FCM; it is sent
	// again, as resent.
	CutOff bool
	// AuthFailure: the app's credentials were refused (State failed, the
	// reason in Error); the push fails.
	AuthFailure bool
	// ThirdParty: the project's APNs or web-push credentials were refused.
	ThirdParty bool
	// GaveUp: a retriable failure past the push's retry deadline.
	GaveUp bool
}

// authorize makes sure an access token is at hand before a wave. A refused
// service account fails the push; an unreachable token endpoint is retried
// with backoff within the push's hour, and then fails the push.
func (c *chunk) authorize(ctx context.Context, res *chunkResult) bool {
	err := c.sender.Authorize(ctx)
	if err == nil {
		return true
	}
	var se *herald.SendError
	switch {
	case ctx.Err() != nil:
		res.err = ctx.Err()
	case errors.As(err, &se) && se.Class == herald.SendAuth:
		res.authFailure = "FCM refused the app's credentials: " + err.Error()
	case c.giveUp:
		res.authFailure = fmt.Sprintf("gave up after %s without an FCM access token: %s", c.s.cfg.RetryFor, err)
	default:
		c.s.cfg.Logger.Warn("FCM access token unavailable; will retry", "app", c.app.ID, "push", c.push.ID, "err", err)
		res.comeBack(c.s.backoff(c.attempt, 0))
	}
	return false
}

// judge resolves a wave at send time. Each delivery goes to the device its
// user holds now (the same device with its current token, or the device a
// reinstall moved the token to); one whose device is gone or is no longer
// the user's is not sent (NO_TOKEN); consent and the night window are
// judged on the device now. Whether the push is still sending is told by
// the write that marks the wave (see window.advance).
//
// Unless verify is set, a wave without advertising is judged as planned,
// without reading the devices: consent does not apply to it, and the
// write that marks it in flight checks every target's device against its
// token and owner (see sendstore.Chunk.Apply), so a device that
// changed is never sent to; the caller judges what the check refused
// again with verify set, which resolves it (refresh, reinstall, NO_TOKEN).
func (c *chunk) judge(ctx context.Context, ds []herald.Delivery, verify bool) ([]send, error) {
	marketing := make([]bool, len(ds))
	for i, d := range ds {
		marketing[i] = c.push.Marketing
		if c.recipients != nil {
			marketing[i] = c.push.MarketingFor(c.recipients[d.RecipientIdx])
		}
		verify = verify || marketing[i]
	}
	r := resolver{asPlanned: !verify}
	if verify {
		var err error
		if r, err = c.resolver(ctx, ds); err != nil {
			return nil, err
		}
	}
	now := c.s.cfg.Now()
	capUser, capped, err := c.capUsers(ctx, ds, marketing, r)
	if err != nil {
		return nil, err
	}
	wave := make([]send, len(ds))
	for i, d := range ds {
		dev, ok := r.resolve(d)
		night := ok && herald.IsNight(now, dev.Location(c.loc)) // in the device's own zone
		switch {
		case !ok:
			wave[i].out = outcome{State: herald.DeliveryUndeliverable, Reason: herald.ReasonNoToken,
				Error: "the device no longer holds a token of the user"}
		case herald.Suppress(marketing[i], dev.Consent, night) == herald.SuppressedConsent:
			wave[i].out.State = herald.DeliverySuppressedConsent
		case herald.Suppress(marketing[i], dev.Consent, night) == herald.SuppressedNight:
			wave[i].out.State = herald.DeliverySuppressedNight
		case capUser != nil && capped[capUser[i]]:
			wave[i].out.State = herald.DeliverySuppressedCap
		default:
			if capUser != nil {
				wave[i].capUser = capUser[i]
			}
			if !r.asPlanned {
				d.Locale = dev.Locale // as the device has it now
			}
			d.DeviceID, d.Token, d.TokenUpdatedAt = dev.ID, dev.Token, dev.TokenUpdatedAt
			wave[i].toSend = true
		}
		wave[i].d = d
	}
	return wave, c.readTags(ctx, wave)
}

// capClaim is the app's frequency cap as a wave judged now claims it; nil
// when the app has none, or the push is one the cap leaves alone (not
// charged: a test push, a notice).
func (c *chunk) capClaim() *herald.CapClaim {
	if !c.push.Rule().Charged {
		return nil
	}
	return c.app.MarketingCap.Claim(c.s.cfg.Now(), c.loc)
}

// capUsers returns the user whose receipt a send of each of a wave's
// deliveries claims (the user its device is mapped to now, as r resolves
// it, when the app caps and its message is marketing, else "") and those
// of them who have reached the cap with other pushes. The device's user
// now, not the one planned: a device of an all-users push that was
// handed to another user since its fan-out counts for the user it now
// reaches. Nothing is read when the app has no cap. The claim made as
// the wave is marked decides (see sendstore.ChunkStep.Cap); this read
// only spares it the users already at the cap.
func (c *chunk) capUsers(ctx context.Context, ds []herald.Delivery, marketing []bool, r resolver) ([]string, map[string]bool, error) {
	claim := c.capClaim()
	if claim == nil {
		return nil, nil, nil
	}
	of := make([]string, len(ds))
	var users []string
	for i, d := range ds {
		dev, ok := r.resolve(d)
		user := d.UserID
		if ok && !r.asPlanned {
			user = ""
			if dev.UserID != nil {
				user = *dev.UserID
			}
		}
		if marketing[i] && user != "" {
			of[i] = user
			users = append(users, user)
		}
	}
	if len(users) == 0 {
		return of, nil, nil
	}
	capped, err := c.s.sends.CappedUsers(ctx, c.app.ID, c.push.ID, users, *claim)
	return of, capped, err
}

// readTags reads the tags a push's templates use of the users a wave
// sends to (none for a push without templates).
func (c *chunk) readTags(ctx context.Context, wave []send) error {
	if c.msg == nil || c.msg.Static() {
		return nil
	}
	names := c.msg.Tags()
	if len(names) == 0 {
		return nil
	}
	var users []string
	for _, sd := range wave {
		if sd.toSend && sd.d.UserID != "" {
			users = append(users, sd.d.UserID)
		}
	}
	tags, err := c.s.sends.TagsOfUsers(ctx, c.app.ID, users, names)
	for i := range wave {
		wave[i].tags = tags[wave[i].d.UserID]
	}
	return err
}

// message compiles a push's languages and templates for sending; nil for
// a push with one text and no placeholder, and for one whose recipients
// carry their own (/messages, Herald's notices).
func message(p herald.Push) (*render.Message, error) {
	r := p.Rule()
	if r.PerRecipient || r.Templated || len(p.Localized) == 0 && !render.HasPlaceholders(p.Content.Title+p.Content.Content) {
		return nil, nil
	}
	l := make(render.Localized, len(p.Localized))
	for _, e := range p.Localized {
		l[e.Lang] = render.Entry{Title: e.Title, Content: e.Content}
	}
	m, err := render.NewMessage(p.Content, l)
	if err != nil {
		return nil, fmt.Errorf("its content no longer renders: %w", err)
	}
	return m, nil
}

// resolver loads the devices a wave's deliveries may go to now.
func (c *chunk) resolver(ctx context.Context, ds []herald.Delivery) (resolver, error) {
	r := resolver{personal: c.push.Rule().Personal}
	if c.push.StartedAt != nil {
		r.fannedOut = *c.push.StartedAt
	}
	var err error
	if r.personal {
		users := make([]string, 0, len(ds))
		for _, d := range ds {
			users = append(users, d.UserID)
		}
		r.ofUser, err = c.s.sends.DevicesOfUsers(ctx, c.app.ID, users)
		return r, err
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.DeviceID
	}
	r.byID, err = c.s.sends.DevicesByID(ctx, c.app.ID, ids)
	return r, err
}

// resolver finds the device a delivery planned at fan-out goes to now.
type resolver struct {
	// asPlanned: each delivery goes to the device and token it was
	// planned with, as the guarded write will check (see judge).
	asPlanned bool
	// personal: the push names its users (users, messages), so a device
	// must still be mapped to the delivery's user. A topic, all-users or
	// token push (herald.PushKind.Targeted) goes to the device itself,
	// whoever uses it.
	personal  bool
	fannedOut time.Time
	ofUser    map[string][]herald.Device // personal: each user's devices now
	byID      map[string]herald.Device   // otherwise: the devices by id
}

// resolve returns the device d goes to now: its own device while that is
// still the user's (with the token it holds now, after a refresh), else the
// user's device that was registered after the fan-out with d's token (the
// app reinstalled: same token, new device id). No other delivery of the
// push can be going to such a device, so nothing is sent twice.
func (r resolver) resolve(d herald.Delivery) (herald.Device, bool) {
	if r.asPlanned {
		return herald.Device{ID: d.DeviceID, Token: d.Token, TokenUpdatedAt: d.TokenUpdatedAt}, true
	}
	if !r.personal {
		dev, ok := r.byID[d.DeviceID]
		return dev, ok
	}
	var moved *herald.Device
	for i, dev := range r.ofUser[d.UserID] {
		if dev.ID == d.DeviceID {
			return dev, true
		}
		if dev.Token == d.Token && dev.CreatedAt.After(r.fannedOut) {
			moved = &r.ofUser[d.UserID][i]
		}
	}
	if moved == nil {
		return herald.Device{}, false
	}
	return *moved, true
}

// sendOne sends one slot and records what became of it in sd.out.
func (c *chunk) sendOne(ctx context.Context, sd *send) {
	p, d := c.push, sd.d
	var rc herald.Recipient // the zero one stands for the push's own content
	if c.recipients != nil {
		rc = c.recipients[d.RecipientIdx]
	}
	content := p.Sent(rc) // a marketing message with its ad footer
	if c.msg != nil {
		content = p.Content
		content.Title, content.Content = c.msg.Render(c.msg.Choose(d.Locale), d.UserID, sd.tags.Text)
		if p.AdFooter != "" && p.Marketing {
			content.Content += p.AdFooter
		}
		if size := content.FCMPayloadSize(); !c.msg.Static() && size > herald.MaxFCMPayload {
			sd.out = outcome{State: herald.DeliveryFailed, Reason: herald.ReasonPayloadTooLarge,
				Error: fmt.Sprintf("the rendered message's FCM payload is %d bytes, more than %d", size, herald.MaxFCMPayload)}
			return
		}
	}
	n := herald.Notification{
		Token: d.Token, PushID: p.ID, Title: content.Title, Body: content.Content,
		ImageURL: content.ImageURL, LinkURL: content.LinkURL, Badge: p.Badge, RequestGroupID: p.RequestGroupID,
		Tag: c.tagOf(d), High: p.High(), ValidateOnly: c.app.Sandbox, // a sandbox app's sends are only validated
	}
	if p.TTL != nil { // counted from this send: a deferred part's from 08:00
		n.HasTTL, n.TTL, n.Expires = true, *p.TTL, c.s.cfg.Now().Unix()+int64(*p.TTL)
	}
	err := c.sender.Deliver(ctx, n)
	sd.out = c.outcomeOf(err, ctx.Err() != nil, d)
}

// tagOf is the tag of d's message (herald.Notification.Tag): the push id,
// and on a push with a message per recipient the message's index, so two
// messages of one push to one user both show.
func (c *chunk) tagOf(d herald.Delivery) string {
	if c.recipients == nil {
		return c.push.ID
	}
	return c.push.ID + "-" + strconv.Itoa(d.RecipientIdx)
}

// outcomeOf maps the answer to a send of d to its outcome. cut reports
// that the send's context ended: an error then means the send was cut off
// mid-request, and FCM may have the message.
func (c *chunk) outcomeOf(err error, cut bool, d herald.Delivery) outcome {
	if err == nil {
		return outcome{State: herald.DeliverySent}
	}
	o := outcome{Error: err.Error()}
	if cut {
		o.State, o.CutOff = herald.DeliveryRetry, true
		return o
	}
	var se *herald.SendError
	if !errors.As(err, &se) {
		se = &herald.SendError{Class: herald.SendRetry, Err: err}
	}
	switch se.Class {
	case herald.SendUnregistered:
		o.State, o.Drop, o.Reason = herald.DeliveryUndeliverable, true, herald.ReasonAppDeleted
		if c.s.cfg.Now().Sub(d.TokenUpdatedAt) > herald.TokenExpiryAge {
			o.Reason = herald.ReasonTokenExpired
		}
	case herald.SendInvalidToken:
		o.State, o.Drop, o.Reason = herald.DeliveryUndeliverable, true, herald.ReasonTokenExpired
	case herald.SendRetry:
		if c.giveUp {
			o.State, o.GaveUp = herald.DeliveryFailed, true
			o.Error = fmt.Sprintf("gave up retrying after %s: %s", c.s.cfg.RetryFor, o.Error)
			return o
		}
		o.State, o.RetryIn = herald.DeliveryRetry, c.s.backoff(d.Attempts+1, se.RetryAfter)
	case herald.SendAuth:
		// The push fails as a whole, with the reason.
		o.State, o.AuthFailure = herald.DeliveryFailed, true
		o.Error = "FCM refused the app's credentials: " + o.Error
	case herald.SendThirdPartyAuth:
		o.State, o.ThirdParty = herald.DeliveryFailed, true
	default:
		o.State = herald.DeliveryFailed
	}
	return o
}
