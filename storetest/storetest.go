// Package storetest is the conformance suite of Herald's stores: every
// method of every store interface of package herald, its errors and edge
// cases, and concurrent subtests that hold only when each transition is a
// guarded write. Each engine runs it from one test of its own package:
//
//	func TestStore(t *testing.T) { storetest.Run(t, openHarness) }
//
// The suite sees a store only through herald's interfaces and a small
// Harness, so every engine runs it unchanged (the shape of River's
// riverdrivertest).
package storetest

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/retention"
	"github.com/heraldpush/herald/sendstore"
)

// Store is what a conforming store implements.
type Store interface {
	herald.AppStore
	herald.UserStore
	herald.PushStore
	sendstore.Store
	herald.HistoryStore
	herald.ScheduleStore
	identity.SessionStore
	identity.OperatorStore
	identity.OperatorIdentityStore
	identity.AttemptStore
	herald.ConsentStore
	herald.NoticeStore
	herald.NodeStore
	herald.EventStore
	retention.Store
	access.Store
	herald.HoldStore
	herald.ExportStore
	herald.EventStreamStore
	AudienceCounter
}

// Harness is one fresh, migrated and empty store with the two things the
// suite needs beside it.
type Harness struct {
	Store Store
	// SetNow sets the clock the store reads from now on. It is called
	// between operations, never during one.
	SetNow func(time.Time)
	// Jobs returns the states of the jobs of kind that the store inserted
	// through its job queue, oldest first, named as River names them
	// ("available", "scheduled", "cancelled", …).
	Jobs func(ctx context.Context, kind string) ([]string, error)
	// Exec runs a statement without parameters on the store's database
	// behind the store's back (the access chain's tests tamper with it).
	Exec func(ctx context.Context, query string) error
	// Together, when set, makes the calls at once so that the engine's
	// group commit takes them into one batch, in their order, and returns
	// when all have returned. Each call must make one batched transaction
	// (a RegisterDevice). Nil for an engine without a group commit: the
	// subtests that need it are skipped.
	Together func(calls ...func())
}

// Run runs the whole suite; open is called once per subtest and must return
// a store of its own (subtests run in parallel).
func Run(t *testing.T, open func(t *testing.T) Harness) {
	for _, group := range []struct {
		name  string
		tests []test
	}{
		{"AppStore", append(appTests, identityTests...)},
		{"UserStore", append(userTests, userListTests...)},
		{"PushStore", pushTests},
		{"DeliveryStore", deliveryTests},
		{"HistoryStore", append(historyTests, overviewTests...)},
		{"ScheduleStore", scheduleTests},
		{"NightDeferral", nightTests},
		{"LocalTime", localTimeTests},
		{"SessionStore", sessionTests},
		{"OperatorStore", operatorTests},
		{"OperatorIdentity", operatorIdentityTests},
		{"ConsentStore", consentTests},
		{"NoticeStore", noticeTests},
		{"NodeStore", nodeTests},
		{"EventStore", eventTests},
		{"RetentionStore", retentionTests},
		{"AccessStore", accessTests},
		{"Concurrent", concurrentTests},
		{"Together", togetherTests},
		{"Unavailable", unavailableTests},
		{"HoldStore", holdTests},
		{"ApprovalStore", approvalTests},
		{"ExportStore", exportTests},
		{"AudienceStore", audienceTests},
		{"StreamStore", streamTests},
		{"CapStore", capTests},
	} {
		t.Run(group.name, func(t *testing.T) {
			for _, tc := range group.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, setup(t, open))
				})
			}
		})
	}
}

// test is one named subtest of the suite.
type test struct {
	name string
	run  func(t *testing.T, b *bundle)
}

// epoch is the clock of every subtest at its start: 22:04:30 in Seoul,
// the default time zone.
var epoch = time.Date(2025, 6, 11, 13, 4, 30, 0, time.UTC)

// bundle is what each subtest starts with: a store, its clock set to epoch,
// and one app.
type bundle struct {
	t   *testing.T
	ctx context.Context
	s   Store
	h   Harness
	now time.Time
	app herald.App
}

func setup(t *testing.T, open func(t *testing.T) Harness) *bundle {
	h := open(t)
	b := &bundle{t: t, ctx: context.Background(), s: h.Store, h: h}
	b.setNow(epoch)
	b.app = b.newApp("a")
	return b
}

// setNow sets the store's clock and the bundle's.
func (b *bundle) setNow(now time.Time) {
	b.now = now
	b.h.SetNow(now)
}

// tick moves the clock on by d.
func (b *bundle) tick(d time.Duration) { b.setNow(b.now.Add(d)) }

// newApp creates an app in the default time zone with the app-user feature.
func (b *bundle) newApp(name string) herald.App {
	b.t.Helper()
	a := herald.App{ID: herald.NewID("app_", b.now), Name: name, APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret("s-" + name),
		Tier: herald.TierBusiness, AppUserEnabled: true, Registered: true, TimeZone: herald.DefaultTimeZone,
		CreatedAt: b.now.Truncate(time.Millisecond)}
	if err := b.s.CreateApp(b.ctx, a); err != nil {
		b.t.Fatalf("CreateApp: %v", err)
	}
	return a
}

// register registers device with token on the bundle's app, mapped to user
// when it is not "".
func (b *bundle) register(device, token, user string) herald.Device {
	b.t.Helper()
	d, err := b.s.RegisterDevice(b.ctx, b.app.ID, registration(device, token, user))
	if err != nil {
		b.t.Fatalf("RegisterDevice %s: %v", device, err)
	}
	return d
}

func registration(device, token, user string) herald.DeviceRegistration {
	reg := herald.DeviceRegistration{DeviceID: device, Token: token, Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0"}
	if user != "" {
		reg.UserID = &user
	}
	return reg
}

// user returns a user and its devices.
func (b *bundle) user(id string) (herald.User, []herald.Device) {
	b.t.Helper()
	u, ds, err := b.s.User(b.ctx, b.app.ID, id)
	if err != nil {
		b.t.Fatalf("User %s: %v", id, err)
	}
	return u, ds
}

// device returns a device of the bundle's app; ok is false when it does not
// exist.
func (b *bundle) device(id string) (herald.Device, bool) {
	b.t.Helper()
	m, err := b.s.DevicesByID(b.ctx, b.app.ID, []string{id})
	if err != nil {
		b.t.Fatalf("DevicesByID: %v", err)
	}
	d, ok := m[id]
	return d, ok
}

// jobs returns the states of the jobs of kind.
func (b *bundle) jobs(kind string) []string {
	b.t.Helper()
	states, err := b.h.Jobs(b.ctx, kind)
	if err != nil {
		b.t.Fatalf("Jobs %s: %v", kind, err)
	}
	return states
}

// wantJobs fails unless exactly n jobs of kind were inserted.
func (b *bundle) wantJobs(kind string, n int) {
	b.t.Helper()
	if got := b.jobs(kind); len(got) != n {
		b.t.Errorf("jobs %s: got %d %v, want %d", kind, len(got), got, n)
	}
}

// job is the suite's durable job. Its kind names what it stands for and the
// push it is for, so the harness counts one push's jobs of one kind.
type job struct {
	kind string
}

func (j job) Kind() string { return j.kind }

// The job kinds the suite inserts, each for one push.
func fanoutJob(pushID string) job { return job{"storetest.fanout." + pushID} }
func sendJob(pushID string, chunk int) job {
	return job{"storetest.send." + pushID + "." + itoa(chunk)}
}
func finishJob(pushID string) job { return job{"storetest.finish." + pushID} }
func webhookJob(pushID string, n int) job {
	return job{"storetest.webhook." + pushID + "." + itoa(n)}
}

func consent(marketing, night bool) herald.Consent {
	return herald.Consent{Marketing: marketing, MarketingNight: night}
}

func change(marketing, night *bool) herald.ConsentChange {
	return herald.ConsentChange{Marketing: marketing, MarketingNight: night}
}

func itoa(n int) string { return strconv.Itoa(n) }

// wantErr fails unless err is target (nil included).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if target == nil && err != nil || target != nil && !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want %v", what, err, target)
	}
}

// must fails the test at once on an error.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// deviceIDs returns the ids of devices, sorted.
func deviceIDs(ds []herald.Device) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	sort.Strings(out)
	return out
}

func equal(a, b []string) bool { return slices.Equal(a, b) }

// concurrently runs fn n times at once, from n goroutines released
// together, and waits for all of them.
func concurrently(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// Clock is a settable clock that concurrent readers may read: a store's Now
// and a Harness's SetNow.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the time last set.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set sets the time.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// complete completes a chunk and checks whether the push is then left to
// finish (sendstore.Store.CompleteChunk).
func (b *bundle) complete(pushID string, chunk int, left bool) {
	b.t.Helper()
	got, err := b.s.CompleteChunk(b.ctx, pushID, chunk)
	if err != nil {
		b.t.Fatalf("CompleteChunk %d: %v", chunk, err)
	}
	if got != left {
		b.t.Errorf("CompleteChunk %d: got left to finish %v, want %v", chunk, got, left)
	}
}
