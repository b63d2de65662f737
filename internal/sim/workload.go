package sim

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/heraldpush/herald"
)

// Workload sizes.
const (
	users         = 6
	workloadSpan  = 3 * time.Hour
	scheduleAhead = 2 * time.Hour
)

// op is one workload operation: an API request or an SDK call, made at a
// time through the entry points the API uses, on one of the live nodes.
type op struct {
	at   time.Time
	name string
	do   func(ctx context.Context, n *node) error
}

// setup makes the app (FCM credentials, a webhook, ad footer settings, a
// time zone from the seed) and its users' devices, topics and consents.
func (w *world) setup() {
	ctx := context.Background()
	var err error
	if w.mk, err = herald.ParseMasterKey(herald.NewMasterKeyText()); err != nil {
		w.t.Fatal(err)
	}
	db := w.env.store
	zones := []string{"Asia/Seoul", "UTC", "America/New_York"}
	app := herald.App{ID: "app_sim", Name: "sim", APIKey: herald.NewAPIKey(), SecretHash: []byte("h"), Tier: herald.TierBusiness,
		Registered: true, TimeZone: zones[w.rng.IntN(len(zones))], AdSenderName: "Sim", AdSenderContact: "080-000-0000",
		AdOptOut: "Settings", Reconfirmation: herald.Reconfirmation{Enabled: true}, MarketingCap: capOf(w.seed)}
	w.env.must(db.CreateApp(ctx, app))
	w.env.must(db.SetFCMCredentials(ctx, app.ID, w.mk.Seal([]byte(`{"type":"service_account","project_id":"sim"}`))))
	w.env.must(db.SetWebhook(ctx, app.ID, "https://hooks.example.com/h", w.mk.Seal([]byte("whsec_c2VjcmV0"))))
	for i := 1; i <= users; i++ {
		user := "u" + strconv.Itoa(i)
		for d := range 1 + w.rng.IntN(2) {
			w.register(ctx, fmt.Sprintf("d%d_%d", i, d), &user)
		}
		w.consent(ctx, user)
		if w.rng.IntN(2) == 0 {
			_, err := db.SubscribeTopic(ctx, app.ID, "news", []string{user})
			w.env.must(err)
		}
	}
	w.register(ctx, "anon1", nil)
	if w.app, err = db.App(ctx, app.ID); err != nil {
		w.t.Fatal(err)
	}
}

// capOf is the app's frequency cap, from the seed without drawing from
// the run's randomness (so that a seed's workload stays the one it was):
// 1 to 3 marketing pushes a day and, for two seeds in three, 2 to 4 a
// week.
func capOf(seed uint64) herald.MarketingCap {
	day, week := 1+int(seed%3), 2+int(seed/3%3)
	c := herald.MarketingCap{PerDay: &day}
	if seed/9%3 > 0 {
		c.PerWeek = &week
	}
	return c
}

func (w *world) register(ctx context.Context, device string, user *string) {
	zone := deviceZones[w.rng.IntN(len(deviceZones))]
	_, err := w.env.store.RegisterDevice(ctx, "app_sim", herald.DeviceRegistration{DeviceID: device, Token: "tok_" + device,
		Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: user, TimeZone: &zone})
	w.env.must(err)
}

func (w *world) consent(ctx context.Context, user string) {
	if w.rng.IntN(3) == 0 {
		// Consent given about two years ago, imported: the user is due a
		// re-confirmation notice within the lead days, or soon after.
		at := w.start.AddDate(-2, 0, 0).Add(time.Duration(w.rng.IntN(40*24)) * time.Hour)
		_, _, err := w.env.store.ImportConsent(ctx, "app_sim", []herald.ConsentImport{{UserID: user,
			Consent: herald.Consent{Marketing: true, MarketingNight: w.rng.IntN(2) == 0}, At: at}}, time.Now())
		w.env.must(err)
		return
	}
	m := w.rng.IntN(3) > 0
	night := m && w.rng.IntN(2) == 0
	_, err := w.env.store.SetUserConsent(ctx, "app_sim", user, herald.ConsentChange{Marketing: &m, MarketingNight: &night})
	w.env.must(err)
}

// workload draws the run's operations from the seed.
func (w *world) workload() []op {
	var ops []op
	for i := range w.opt.Ops {
		at := w.start.Add(time.Duration(w.rng.Int64N(int64(workloadSpan))))
		ops = append(ops, w.drawOp(i, at))
	}
	slices.SortStableFunc(ops, func(a, b op) int { return a.at.Compare(b.at) })
	return ops
}

func (w *world) user() string { return "u" + strconv.Itoa(1+w.rng.IntN(users+1)) } // u7 has no device

func (w *world) drawOp(i int, at time.Time) op {
	o := op{at: at}
	switch r := w.rng.IntN(20); {
	case r < 8:
		req := w.pushRequest(at)
		o.name = fmt.Sprintf("push %s", req.Kind)
		if req.LocalTime {
			o.name += " in local time"
			// Its first zone (UTC+14) to its last (UTC-11), after an edit
			// moving it up to 90 minutes on, then a night deferral and
			// the retry hour.
			w.localBy = later(w.localBy, at.Add(scheduleAhead+90*time.Minute+25*time.Hour+13*time.Hour))
		}
		approval := w.rng.IntN(4) == 0 // the app's setting as this push is accepted: every push waits
		if approval {
			o.name += " awaiting approval"
			w.lapseBy = later(w.lapseBy, at.Add(herald.ApprovalWindow+time.Minute))
		}
		o.do = func(ctx context.Context, n *node) error {
			app := w.app
			if approval {
				app.Approval = herald.ApprovalSetting{Mode: herald.ApprovalAll}
			}
			p, err := herald.NewPush(app, req, time.Now())
			if err != nil {
				return err
			}
			id, _, err := n.svc.Accept(ctx, p, req.Recipients, nil)
			if err == nil {
				w.noteAccepted(id)
			}
			return err
		}
	case r < 10 && w.rng.IntN(3) == 0: // an operator's approval or rejection, racing the cancels and the lapse
		k, approve := w.rng.IntN(1<<20), w.rng.IntN(3) > 0
		o.name = "decide"
		o.do = func(ctx context.Context, n *node) error {
			id, ok := w.pickPush(k)
			if !ok {
				return nil
			}
			p, err := n.store.PushRecord(ctx, id)
			if err != nil || p.Status != herald.StatusAwaitingApproval {
				return err
			}
			d := herald.Approval{Action: herald.ApprovalRejected, By: "op_sim", Reason: "sim"}
			if approve {
				d.Action = herald.ApprovalApproved
			}
			_, err = n.svc.Decide(ctx, w.app, p, d)
			return err
		}
	case r < 10:
		k := w.rng.IntN(1 << 20)
		o.name = "cancel"
		o.do = func(ctx context.Context, n *node) error {
			id, ok := w.pickPush(k)
			if !ok {
				return nil
			}
			_, err := n.svc.CancelScheduled(ctx, id)
			return err
		}
	case r < 11:
		k, d := w.rng.IntN(1<<20), time.Duration(1+w.rng.IntN(90))*time.Minute
		o.name = "edit"
		o.do = func(ctx context.Context, n *node) error {
			id, ok := w.pickPush(k)
			if !ok {
				return nil
			}
			at := time.Now().Add(d).Truncate(time.Second)
			_, err := n.svc.EditScheduled(ctx, id, herald.PushChange{ScheduledAt: &at})
			return err
		}
	case r < 13: // a reinstall (a new device id with a token) or a new device
		user, dev := w.user(), fmt.Sprintf("r%d", i)
		token := "tok_" + dev
		if w.rng.IntN(2) == 0 {
			token = fmt.Sprintf("tok_d%d_0", 1+w.rng.IntN(users)) // the token moves to a new device id
		}
		o.name = "register " + dev
		o.do = w.userOp(func(ctx context.Context, db userStore) error {
			_, err := db.RegisterDevice(ctx, "app_sim", herald.DeviceRegistration{DeviceID: dev, Token: token,
				Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &user})
			return err
		})
	case r < 14: // a token refresh: the same device, a new token
		dev, tok := fmt.Sprintf("d%d_0", 1+w.rng.IntN(users)), fmt.Sprintf("tok_f%d", i)
		o.name = "refresh " + dev
		o.do = w.userOp(func(ctx context.Context, db userStore) error {
			d, err := w.env.store.DevicesByID(ctx, "app_sim", []string{dev})
			if err != nil || d[dev].ID == "" {
				return err
			}
			_, err = db.RegisterDevice(ctx, "app_sim", herald.DeviceRegistration{DeviceID: dev, Token: tok,
				Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: d[dev].UserID})
			return err
		})
	case r < 16: // a hand-over: the device's user changes (or it is logged out)
		dev := fmt.Sprintf("d%d_0", 1+w.rng.IntN(users))
		var to *string
		if w.rng.IntN(4) > 0 {
			u := w.user()
			to = &u
		}
		o.name = "hand-over " + dev
		o.do = w.userOp(func(ctx context.Context, db userStore) error {
			_, err := db.SetDeviceUser(ctx, "app_sim", dev, to)
			return err
		})
	case r < 18:
		user, m := w.user(), w.rng.IntN(2) == 0
		night := m && w.rng.IntN(2) == 0
		o.name = "consent " + user
		o.do = w.userOp(func(ctx context.Context, db userStore) error {
			_, err := db.SetUserConsent(ctx, "app_sim", user, herald.ConsentChange{Marketing: &m, MarketingNight: &night})
			return err
		})
	case r < 19:
		user := w.user()
		o.name = "withdraw " + user
		o.do = w.userOp(func(ctx context.Context, db userStore) error { return db.WithdrawUser(ctx, "app_sim", user) })
	default: // an SDK event: a device reports a push received or opened (herald.PlanEvents, as the SDK API)
		dev, k := fmt.Sprintf("d%d_0", 1+w.rng.IntN(users)), w.rng.IntN(1<<20)
		typ := herald.EventReceived
		if w.rng.IntN(2) == 0 {
			typ = herald.EventOpened
		}
		o.name = "event " + dev
		o.do = w.userOp(func(ctx context.Context, db userStore) error {
			id, ok := w.pickPush(k)
			if !ok {
				return nil
			}
			plan := herald.PlanEvents([]herald.Event{{PushID: id, Type: typ, At: time.Now()}}, time.Now())
			_, err := db.RecordEvents(ctx, "app_sim", dev, plan.Marks)
			return err
		})
	}
	return o
}

// pushRequest draws a push: its kind, audience, marketing and night
// policy, whether it is scheduled, and whether its sends are spread.
func (w *world) pushRequest(now time.Time) herald.PushRequest {
	kinds := []herald.PushKind{herald.KindUsers, herald.KindUsers, herald.KindMessages, herald.KindTopic, herald.KindAll, herald.KindToken}
	req := herald.PushRequest{Kind: kinds[w.rng.IntN(len(kinds))], Content: herald.Content{Title: "title", Content: "content"}}
	marketing := w.rng.IntN(2) == 0
	if marketing {
		req.Content.Title = herald.AdPrefix + " sale"
		req.IsMarketingOpt = true
		req.NightPolicy = herald.NightSkip
		if w.rng.IntN(2) == 0 {
			req.NightPolicy = herald.NightDefer
		}
	}
	switch req.Kind {
	case herald.KindUsers, herald.KindMessages:
		seen := map[string]bool{}
		for range 1 + w.rng.IntN(4) {
			u := w.user()
			if seen[u] {
				continue
			}
			seen[u] = true
			rc := herald.Recipient{UserID: u}
			if req.Kind == herald.KindMessages {
				c := herald.Content{Title: req.Content.Title, Content: "message to " + u}
				rc.Content = &c
			}
			req.Recipients = append(req.Recipients, rc)
		}
		if req.Kind == herald.KindMessages {
			req.Content = herald.Content{}
		}
	case herald.KindTopic:
		req.Topic = "news"
	case herald.KindToken:
		req.Token, req.Test = fmt.Sprintf("tok_d%d_0", 1+w.rng.IntN(users)), true
		req.Recipients = nil
	}
	if req.Kind != herald.KindMessages && req.Kind != herald.KindToken && w.rng.IntN(3) == 0 {
		at := now.Add(time.Minute + time.Duration(w.rng.Int64N(int64(scheduleAhead)))).Truncate(time.Second)
		if w.rng.IntN(2) == 0 { // in each device's local time: it starts when UTC+14 reads at's time in the app's zone
			at, req.LocalTime = herald.LocalStart(at, w.app.Location()), true
		}
		req.ScheduledAt = &at
	}
	if req.Kind != herald.KindMessages && req.Kind != herald.KindToken && req.NightPolicy != herald.NightDefer && w.rng.IntN(3) == 0 {
		req.SpreadMinutes = 1 + w.rng.IntN(30) // spread sends, under the run's node deaths and restarts
	}
	return req
}

// deviceZones are the zones the devices report, "" for none (the app's).
var deviceZones = []string{"", "Pacific/Kiritimati", "Asia/Seoul", "Europe/London", "America/New_York", "Pacific/Pago_Pago"}

// userStore is the part of the store the API's user and SDK endpoints
// call, which delivery does not.
type userStore interface {
	herald.UserStore
	RecordEvents(ctx context.Context, appID, deviceID string, marks []herald.EventMark) ([]bool, error)
}

// userOp runs an operation on the store as the API does, as one step: a
// scheduling point, then the call.
func (w *world) userOp(f func(ctx context.Context, db userStore) error) func(ctx context.Context, n *node) error {
	return func(ctx context.Context, n *node) error {
		if _, err := n.point(ctx, pointAPI, "api"); err != nil {
			return err
		}
		return f(ctx, w.env.store)
	}
}

// noteAccepted notes a push the API answered accepted.
func (w *world) noteAccepted(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.obs.accepted = append(w.obs.accepted, id)
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// pickPush picks the k-th accepted push (modulo), for a cancel, an edit
// or an event.
func (w *world) pickPush(k int) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.obs.accepted) == 0 {
		return "", false
	}
	return w.obs.accepted[k%len(w.obs.accepted)], true
}

// startOps starts the operations due by now, each on a live node chosen
// from the seed, as goroutines whose calls are scheduling points, and
// says how many.
func (w *world) startOps(now time.Time) int {
	k := 0
	for ; w.nextOp < len(w.ops) && !w.ops[w.nextOp].at.After(now); w.nextOp++ {
		o := w.ops[w.nextOp]
		var live []*node
		for _, n := range w.nodes {
			if !n.dead {
				live = append(live, n)
			}
		}
		n := live[w.rng.IntN(len(live))]
		ctx := withActor(n.ctx, fmt.Sprintf("api%03d", w.nextOp))
		k++
		go func() {
			if err := o.do(ctx, n); err != nil {
				w.mu.Lock()
				w.obs.opErrors++
				w.mu.Unlock()
			}
		}()
	}
	return k
}
