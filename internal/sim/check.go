package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// observed is what the scheduler saw happen, for the invariants.
type observed struct {
	accepted []string
	// marks: each actor's last marking of a push's token in flight, with
	// the device that held the token at that write.
	marks map[string]mark
	// fcm counts the sends FCM accepted, by push and token; fcmDevice
	// notes them by push and the device marked.
	fcm       map[[2]string]int
	fcmDevice map[[2]string]bool
	// fcmFirst is when FCM first accepted each, for a spread push's
	// schedule (nothing before its user is due).
	fcmFirst map[[2]string]time.Time
	// reported are the users each push's delivered webhooks named.
	reported map[string]map[string]bool
	// capped notes when each send of a marketing push that FCM accepted
	// was marked in flight, by user and push: what the frequency cap
	// counts.
	capped     map[string]map[string][]time.Time
	violations []string

	deaths, jobErrors, opErrors, sends int
}

// mark is a token marked in flight, as the store's guarded write saw it.
type mark struct {
	target sendstore.SlotTarget
	holder herald.Device
	held   bool
	at     time.Time
}

func (w *world) violate(format string, args ...any) {
	w.obs.violations = append(w.obs.violations, fmt.Sprintf("%s: ", time.Now().UTC().Format(time.DateTime))+fmt.Sprintf(format, args...))
}

// observe notes a granted call, before it runs: the devices a step marks
// in flight (as they are at that write), the sends FCM accepts, the
// webhooks delivered. It checks each send against its marking.
func (w *world) observe(wt *waiter, v verdict) {
	if v.errBefore != nil || v.dieBefore {
		return
	}
	if w.obs.marks == nil {
		w.obs.marks, w.obs.fcm, w.obs.reported = map[string]mark{}, map[[2]string]int{}, map[string]map[string]bool{}
		w.obs.fcmDevice, w.obs.fcmFirst = map[[2]string]bool{}, map[[2]string]time.Time{}
	}
	ctx := context.Background()
	switch {
	case wt.kind == pointStore && len(wt.args) == 3:
		st, ok := wt.args[2].(sendstore.ChunkStep)
		if !ok {
			return
		}
		pushID := wt.args[1].(string)
		for _, t := range st.Targets {
			d, err := w.env.store.DeviceByToken(ctx, w.app.ID, t.Token)
			w.obs.marks[wt.actor+" "+pushID+" "+t.Token] = mark{target: t, holder: d, held: err == nil, at: time.Now()}
		}
	case wt.kind == pointFCM:
		pushID, msg := wt.args[0].(string), wt.args[2].(herald.Notification)
		w.obs.sends++
		w.checkSend(wt.actor, pushID, msg)
		if v.answer == nil {
			k := [2]string{pushID, msg.Token}
			if w.obs.fcm[k] == 0 {
				w.obs.fcmFirst[k] = time.Now()
			}
			w.obs.fcm[k]++
			if m, ok := w.obs.marks[wt.actor+" "+pushID+" "+msg.Token]; ok {
				w.obs.fcmDevice[[2]string{pushID, m.target.DeviceID}] = true
				w.noteCapped(pushID, m)
			}
		}
	case wt.kind == pointWebhook && len(wt.args) == 2 && v.answer == nil: // Report(push id, report)
		r := wt.args[1].(herald.UndeliverableReport)
		if w.obs.reported[r.PushID] == nil {
			w.obs.reported[r.PushID] = map[string]bool{}
		}
		for _, u := range r.Users {
			w.obs.reported[r.PushID][u.UserID] = true
		}
	}
}

// noteCapped notes a marketing push's send FCM accepted for the user of
// the device marked (see observed.capped).
func (w *world) noteCapped(pushID string, m mark) {
	if m.holder.UserID == nil {
		return
	}
	p, err := w.env.store.PushRecord(context.Background(), pushID)
	if err != nil || !p.Rule().Charged || !p.Marketing {
		return
	}
	if w.obs.capped == nil {
		w.obs.capped = map[string]map[string][]time.Time{}
	}
	user := *m.holder.UserID
	if w.obs.capped[user] == nil {
		w.obs.capped[user] = map[string][]time.Time{}
	}
	w.obs.capped[user][pushID] = append(w.obs.capped[user][pushID], m.at)
}

// checkCaps: no user received more marketing pushes than the app's cap
// allows in a local day, or in any 7×24 hours, counting each push once
// in each day, and in each 7×24 hours, in which FCM accepted a send of
// it to a device of the user (the oracle's own count: from the sends it
// saw, not the store's ledger). A push that reaches a user's devices on
// two days counts in both.
func (w *world) checkCaps() {
	c := w.app.MarketingCap
	for user, pushes := range w.obs.capped {
		days := map[string]map[string]bool{} // day: pushes sent that day
		var ends []time.Time
		for id, at := range pushes {
			for _, t := range at {
				day := t.In(w.app.Location()).Format(time.DateOnly)
				if days[day] == nil {
					days[day] = map[string]bool{}
				}
				days[day][id] = true
				ends = append(ends, t)
			}
		}
		for day, ids := range days {
			if c.PerDay != nil && len(ids) > *c.PerDay {
				w.violate("user %s received %d marketing pushes on %s, over the cap of %d a day", user, len(ids), day, *c.PerDay)
			}
		}
		if c.PerWeek == nil {
			continue
		}
		for _, end := range ends { // each window ending at a send
			week := 0
			for _, at := range pushes {
				if slices.ContainsFunc(at, func(t time.Time) bool { return !t.After(end) && !t.Before(end.Add(-herald.CapWeek)) }) {
					week++
				}
			}
			if week > *c.PerWeek {
				w.violate("user %s received %d marketing pushes in the 7×24 h to %s, over the cap of %d", user, week, end.UTC().Format(time.DateTime), *c.PerWeek)
				break
			}
		}
	}
}

// checkSend: a send goes only to a token its run marked in flight, whose
// device at that write was the one planned and (for a push naming its
// users) still the recipient's; an ad only with the consent it needs at
// that hour.
func (w *world) checkSend(actor, pushID string, msg herald.Notification) {
	m, ok := w.obs.marks[actor+" "+pushID+" "+msg.Token]
	if !ok {
		w.violate("push %s sent to token %s by %s, which never marked it in flight", pushID, msg.Token, actor)
		return
	}
	p, err := w.env.store.PushRecord(context.Background(), pushID)
	if err != nil {
		w.violate("push %s sent but not found: %v", pushID, err)
		return
	}
	switch {
	case !m.held || m.holder.ID != m.target.DeviceID:
		w.violate("push %s sent to token %s: at its marking the token was held by device %q, not the planned %q", pushID, msg.Token, m.holder.ID, m.target.DeviceID)
	case p.Rule().Personal && m.target.Owner == nil:
		w.violate("push %s (personal) marked token %s without an owner", pushID, msg.Token)
	case p.Rule().Personal && (m.holder.UserID == nil || *m.holder.UserID != *m.target.Owner):
		w.violate("push %s sent to token %s: at its marking device %s was not user %s's", pushID, msg.Token, m.holder.ID, *m.target.Owner)
	case p.Marketing && !adAllowed(m.holder.Consent, m.at.In(w.deviceZone(m.holder))):
		w.violate("ad %s sent to device %s at %s (local %s) with consent %+v", pushID, m.holder.ID, m.at.UTC().Format(time.TimeOnly),
			m.at.In(w.deviceZone(m.holder)).Format(time.TimeOnly), m.holder.Consent)
	case p.LocalTime && m.at.Before(w.localDue(p, m.holder)) && !w.localDue(p, m.holder).Before(p.CreatedAt):
		w.violate("local-time push %s sent to device %s (zone %q) at %s, before its zone's time %s (accepted %s)", pushID, m.holder.ID,
			m.holder.TimeZone, m.at.UTC().Format(time.DateTime), w.localDue(p, m.holder).UTC().Format(time.DateTime), p.CreatedAt.UTC().Format(time.DateTime))
	}
}

// deviceZone is the oracle's model of whose clock the law reads: the
// device's own zone when it reported one, else the app's.
func (w *world) deviceZone(d herald.Device) *time.Location {
	if loc, err := time.LoadLocation(d.TimeZone); d.TimeZone != "" && err == nil {
		return loc
	}
	return w.app.Location()
}

// localDue is when a local-time push is due for device d in the oracle's
// model: its wall-clock time (its scheduled instant read in UTC+14) read
// in the device's zone by time.Date. (A wall time that a clock change
// skips or repeats can fall either side of herald.LocalAt's choice; the
// workload's times rarely meet one, and a run that did would show it.)
func (w *world) localDue(p herald.Push, d herald.Device) time.Time {
	wall := p.ScheduledAt.In(time.FixedZone("UTC+14", 14*3600))
	return time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, w.deviceZone(d))
}

// adAllowed is the oracle's own model of the law's rule for ads (Korea's
// Information and Communications Network Act, art. 50; the spec's
// consent section): an ad needs marketing consent and, from 21:00 to
// 08:00 in local, the night consent too. It is written out here rather
// than calling herald.Suppress and herald.IsNight, so that a bug in the
// rule itself breaks the simulation instead of agreeing with it.
func adAllowed(c herald.Consent, local time.Time) bool {
	night := local.Hour() >= 21 || local.Hour() < 8
	return c.Marketing && (c.MarketingNight || !night)
}

// check runs the invariants on the store after the run.
func (w *world) check() {
	ctx := context.Background()
	rows, err := w.env.query(`SELECT id FROM pushes ORDER BY id`)
	w.env.must(err)
	var ids []string
	for rows.Next() {
		var id string
		w.env.must(rows.Scan(&id))
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		p, err := w.env.store.Push(ctx, id)
		w.env.must(err)
		w.checkPush(ctx, p)
	}
	w.checkReconfirmations(ctx, ids)
	w.checkCaps()
	if len(w.obs.violations) > 0 {
		w.t.Errorf("seed %d: %d invariant(s) broken:\n  %s\nreplay: HERALD_SIM_SEED=%d go test ./internal/sim -run 'TestSim$' -v",
			w.seed, len(w.obs.violations), joinLines(w.obs.violations), w.seed)
	}
}

func joinLines(s []string) string {
	out := ""
	for i, l := range s {
		if i > 0 {
			out += "\n  "
		}
		out += l
	}
	return out
}

// sentAny reports whether FCM accepted any message of push id.
func (w *world) sentAny(id string) bool {
	for k := range w.obs.fcm {
		if k[0] == id {
			return true
		}
	}
	return false
}

// checkPush: the push ended (its time has passed); its counts add up; no
// token had it twice unless recorded resent; every delivery counted sent
// reached FCM; received ≤ sent; its charge is the domain's; its
// unreachable users were each named in a webhook delivered.
func (w *world) checkPush(ctx context.Context, p herald.Push) {
	switch p.Status {
	case herald.StatusDone, herald.StatusFailed, herald.StatusCancelled:
	case herald.StatusRejected, herald.StatusApprovalExpired:
		// Never approved: nothing planned, sent or charged.
		if p.Counts.Tokens != 0 || p.NetServerActionsHalf() != 0 || w.sentAny(p.ID) {
			w.violate("push %s is %s yet planned %d tokens, charged %d half units or reached FCM", p.ID, p.Status, p.Counts.Tokens, p.NetServerActionsHalf())
		}
		return
	default:
		w.violate("push %s (%s, scheduled %v) is %s at the end of the run", p.ID, p.Kind, p.ScheduledAt, p.Status)
		return
	}
	c := p.Counts
	if p.Status == herald.StatusDone && c.Tokens != c.Sent+c.Failed+c.SuppressedConsent+c.SuppressedNight+c.SuppressedCap+c.DeferredNight {
		w.violate("push %s counts do not add up: %+v", p.ID, c)
	}
	if c.Received > c.Sent || c.Opened > c.Received {
		w.violate("push %s counts received %d, opened %d of %d sent", p.ID, c.Received, c.Opened, c.Sent)
	}
	ds, err := w.env.store.Deliveries(ctx, p.ID)
	w.env.must(err)
	resent := map[string]bool{}
	for _, d := range ds {
		if d.Resent {
			resent[d.Token] = true
		}
		// A delivery shows the token and device it was planned with; it
		// went to the token its device held then (a refresh), or to the
		// device a reinstall moved its token to.
		if d.State == herald.DeliverySent && w.obs.fcm[[2]string{p.ID, d.Token}] == 0 && !w.obs.fcmDevice[[2]string{p.ID, d.DeviceID}] {
			w.violate("push %s: delivery %d (device %s, token %s) counted sent, which FCM never accepted", p.ID, d.Seq, d.DeviceID, d.Token)
		}
	}
	w.checkEvents(p, ds)
	w.checkSpread(p, ds)
	for k, n := range w.obs.fcm {
		if k[0] == p.ID && n > 1 && !resent[k[1]] {
			w.violate("push %s sent %d times to token %s, none recorded resent", p.ID, n, k[1])
		}
	}
	if p.Status != herald.StatusDone && p.Status != herald.StatusFailed {
		return
	}
	if !p.Rule().CountsUsers && !p.Rule().Informational && p.Kind != herald.KindToken && p.NightPolicy != herald.NightDefer &&
		p.NetServerActionsHalf() != int64(p.RequestedUsers)*herald.HalfPerUser {
		w.violate("push %s (%s) charged %d half units for %d users", p.ID, p.Kind, p.NetServerActionsHalf(), p.RequestedUsers)
	}
	if p.Rule().CountsUsers && p.NightPolicy != herald.NightDefer && p.NetServerActionsHalf() != int64(c.RequestedUsers)*herald.HalfPerUser {
		w.violate("push %s (%s) charged %d half units for %d users found", p.ID, p.Kind, p.NetServerActionsHalf(), c.RequestedUsers)
	}
	un, err := w.env.store.UnreachableUsersOf(ctx, p.ID)
	w.env.must(err)
	want := map[string]bool{}
	for _, u := range un {
		want[u.UserID] = true
	}
	got := w.obs.reported[p.ID]
	if !maps.Equal(want, got) && !(len(want) == 0 && len(got) == 0) {
		w.violate("push %s: unreachable users %v, webhooks delivered for %v", p.ID, keys(want), keys(got))
	}
}

// checkReconfirmations: one re-confirmation notice per user per local day.
func (w *world) checkReconfirmations(ctx context.Context, ids []string) {
	seen := map[string]string{}
	for _, id := range ids {
		p, err := w.env.store.PushRecord(ctx, id)
		w.env.must(err)
		if p.Kind != herald.KindReconfirmation {
			continue
		}
		rs, err := w.env.store.Recipients(ctx, id)
		w.env.must(err)
		day := p.CreatedAt.In(w.app.Location()).Format(time.DateOnly)
		for _, r := range rs {
			if first, ok := seen[r.UserID+" "+day]; ok {
				w.violate("user %s sent two re-confirmation notices on %s: %s and %s", r.UserID, day, first, id)
			}
			seen[r.UserID+" "+day] = id
		}
	}
}

func keys(m map[string]bool) []string {
	out := slices.Collect(maps.Keys(m))
	sort.Strings(out)
	return out
}

// checkEvents: an event counts only for a device the push was sent to.
func (w *world) checkEvents(p herald.Push, ds []herald.Delivery) {
	sent := map[string]bool{}
	for _, d := range ds {
		if d.State == herald.DeliverySent {
			sent[d.DeviceID] = true
		}
	}
	rows, err := w.env.query(`SELECT device_id, type FROM push_events WHERE push_id = ?`, p.ID)
	w.env.must(err)
	defer rows.Close()
	for rows.Next() {
		var dev, typ string
		w.env.must(rows.Scan(&dev, &typ))
		if !sent[dev] {
			w.violate("push %s: event %s of device %s counted, which it was not sent", p.ID, typ, dev)
		}
	}
	w.env.must(rows.Err())
}

// checkSpread: a spread push reached FCM for no delivery before its user
// was due (herald.Push.SpreadDue), through node deaths and restarts.
func (w *world) checkSpread(p herald.Push, ds []herald.Delivery) {
	if !p.Spread() || p.StartedAt == nil {
		return
	}
	for _, d := range ds {
		first, ok := w.obs.fcmFirst[[2]string{p.ID, d.Token}]
		if due := p.SpreadDue(d.RecipientIdx); ok && first.Before(due) {
			w.violate("push %s spread over %d minutes sent user %d (token %s) at %s, before it was due at %s", p.ID, p.SpreadMinutes,
				d.RecipientIdx, d.Token, first.UTC().Format(time.DateTime), due.UTC().Format(time.DateTime))
		}
	}
}
